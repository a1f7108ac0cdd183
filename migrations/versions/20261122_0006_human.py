"""human review fields: Label Studio projects, queued tasks and resolutions

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'human_projects',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('origin', sa.String(length=255), nullable=False),
        sa.Column('url', sa.Text(), nullable=True),
        sa.Column('project_id', sa.Integer(), nullable=True),
        sa.Column('title', sa.String(length=255), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('purpose', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('last_pulled_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_human_projects')),
        sa.UniqueConstraint('origin', name=op.f('uq_human_projects_origin')),
    )
    op.create_table(
        'human_tasks',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_ref', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('task_id', sa.Integer(), nullable=True),
        sa.Column('model_version', sa.String(length=128), nullable=True),
        sa.Column('queued_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['project_ref'], ['human_projects.id'],
                                name=op.f('fk_human_tasks_project_ref_human_projects'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_human_tasks_run_id_runs'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_human_tasks')),
        sa.UniqueConstraint('project_ref', 'item_id', name=op.f('uq_human_tasks_project_ref_item_id')),
    )
    op.create_index(op.f('ix_human_tasks_kind_item_id'), 'human_tasks', ['kind', 'item_id'], unique=False)
    op.create_table(
        'human_resolutions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('question', sa.String(length=16), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('answer', sa.JSON(), nullable=True),
        sa.Column('votes', sa.JSON(), nullable=False),
        sa.Column('reviewers', sa.Integer(), nullable=False),
        sa.Column('needs_adjudication', sa.Boolean(), nullable=False),
        sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_human_resolutions_run_id_runs'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_human_resolutions')),
        sa.UniqueConstraint('kind', 'item_id', 'question', name=op.f('uq_human_resolutions_kind_item_id_question')),
    )
    op.create_index(op.f('ix_human_resolutions_needs_adjudication'), 'human_resolutions',
                    ['needs_adjudication'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_human_resolutions_needs_adjudication'), table_name='human_resolutions')
    op.drop_table('human_resolutions')
    op.drop_index(op.f('ix_human_tasks_kind_item_id'), table_name='human_tasks')
    op.drop_table('human_tasks')
    op.drop_table('human_projects')
