"""code scan: packages used vs present, the automated C2 verdict, roles of findings

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why: C1 is the packages that produce the reported scores (`packages`, now "used");
    # the others the repository carries are kept apart (`packages_present`), C2 gets an
    # automated verdict with its reasons, and each finding says where it counts (role) and
    # why (reason). Rows scanned before keep their old `packages` until a rescan.
    with op.batch_alter_table('codebases') as batch:
        batch.add_column(sa.Column('packages_present', sa.JSON(), nullable=False, server_default=sa.text("'[]'")))
        batch.add_column(sa.Column('eval_reproducible', sa.Boolean(), nullable=True))
        batch.add_column(sa.Column('eval_reproducible_reason', sa.Text(), nullable=True))
    with op.batch_alter_table('code_findings') as batch:
        batch.add_column(sa.Column('role', sa.String(length=16), nullable=True))
        batch.add_column(sa.Column('reason', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('code_findings') as batch:
        batch.drop_column('reason')
        batch.drop_column('role')
    with op.batch_alter_table('codebases') as batch:
        batch.drop_column('eval_reproducible_reason')
        batch.drop_column('eval_reproducible')
        batch.drop_column('packages_present')
