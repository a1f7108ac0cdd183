"""sampling designs: the frame, draw, seed and strata of a human sample

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-28
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0017'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why: prediction-powered estimates need a human sample known to be random; the row
    # records how it was drawn so export and plan can tell a sample from a convenience pick.
    op.create_table(
        'sampling_designs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('method', sa.String(length=16), nullable=False),
        sa.Column('seed', sa.Integer(), nullable=False),
        sa.Column('requested', sa.Integer(), nullable=False),
        sa.Column('strata_by', sa.String(length=16), nullable=True),
        sa.Column('frame', sa.JSON(), nullable=False),
        sa.Column('frame_sha256', sa.String(length=64), nullable=False),
        sa.Column('items', sa.JSON(), nullable=False),
        sa.Column('strata', sa.JSON(), nullable=False),
        sa.Column('random', sa.Boolean(), nullable=False),
        sa.Column('queue_order', sa.String(length=16), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('rule_set', sa.String(length=64), nullable=True),
        sa.Column('target', sa.Text(), nullable=True),
        sa.Column('run_id', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_sampling_designs_run_id_runs'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_sampling_designs')),
    )
    op.create_index(op.f('ix_sampling_designs_kind_frame_sha256'), 'sampling_designs', ['kind', 'frame_sha256'],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_sampling_designs_kind_frame_sha256'), table_name='sampling_designs')
    op.drop_table('sampling_designs')
