"""codebase fields

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why: a failed or truncated scan must say why, the local "mentions rouge" flag is kept
    # apart from GitHub's code search, and each piece of evidence says where it came from
    # (requirements, import, README, ...), which appendix B's C2 features need.
    with op.batch_alter_table('codebases') as batch:
        batch.add_column(sa.Column('scan_detail', sa.Text(), nullable=True))
        batch.add_column(sa.Column('scan_rouge_prelim', sa.Boolean(), nullable=True))
    with op.batch_alter_table('code_findings') as batch:
        batch.add_column(sa.Column('source', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('code_findings') as batch:
        batch.drop_column('source')
    with op.batch_alter_table('codebases') as batch:
        batch.drop_column('scan_rouge_prelim')
        batch.drop_column('scan_detail')
