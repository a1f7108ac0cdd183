"""human pass: server identity, gone projects, longer decision origins

Revision ID: 0009
Revises: 0011
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('human_projects', schema=None) as batch_op:
        batch_op.add_column(sa.Column('server_id', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('remote_created', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('gone_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('gone_reason', sa.Text(), nullable=True))
    with op.batch_alter_table('human_decisions', schema=None) as batch_op:
        batch_op.alter_column('origin', existing_type=sa.String(length=64), type_=sa.String(length=255),
                              existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('human_decisions', schema=None) as batch_op:
        batch_op.alter_column('origin', existing_type=sa.String(length=255), type_=sa.String(length=64),
                              existing_nullable=False)
    with op.batch_alter_table('human_projects', schema=None) as batch_op:
        batch_op.drop_column('gone_reason')
        batch_op.drop_column('gone_at')
        batch_op.drop_column('remote_created')
        batch_op.drop_column('server_id')
