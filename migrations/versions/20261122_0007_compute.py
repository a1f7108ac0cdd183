"""reproducibility labels

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('reproducibility',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('paper_id', sa.Integer(), nullable=False),
    sa.Column('paper_rouge', sa.Boolean(), nullable=True),
    sa.Column('paper_rouge_prelim', sa.Boolean(), nullable=True),
    sa.Column('paper_params', sa.Boolean(), nullable=True),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('protocol', sa.JSON(), nullable=False),
    sa.Column('variants', sa.JSON(), nullable=False),
    sa.Column('paper_packages', sa.JSON(), nullable=False),
    sa.Column('has_code', sa.Boolean(), nullable=True),
    sa.Column('code_url', sa.Text(), nullable=True),
    sa.Column('code_urls', sa.JSON(), nullable=False),
    sa.Column('code_rouge', sa.Boolean(), nullable=True),
    sa.Column('code_rouge_prelim', sa.Boolean(), nullable=True),
    sa.Column('code_packages', sa.JSON(), nullable=False),
    sa.Column('packages', sa.JSON(), nullable=False),
    sa.Column('r1', sa.Boolean(), nullable=True),
    sa.Column('r2', sa.Boolean(), nullable=True),
    sa.Column('r3', sa.Boolean(), nullable=True),
    sa.Column('software_error', sa.String(length=8), nullable=True),
    sa.Column('reproducible', sa.Boolean(), nullable=True),
    sa.Column('category', sa.String(length=48), nullable=True),
    sa.Column('label_source', sa.String(length=16), nullable=False),
    sa.Column('sources', sa.JSON(), nullable=False),
    sa.Column('rule_set_id', sa.Integer(), nullable=True),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_reproducibility_paper_id_papers'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['rule_set_id'], ['rule_sets.id'], name=op.f('fk_reproducibility_rule_set_id_rule_sets'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_reproducibility_run_id_runs'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reproducibility')),
    sa.UniqueConstraint('paper_id', name=op.f('uq_reproducibility_paper_id'))
    )
    with op.batch_alter_table('reproducibility', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_reproducibility_reproducible'), ['reproducible'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('reproducibility', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_reproducibility_reproducible'))
    op.drop_table('reproducibility')
