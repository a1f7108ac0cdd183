"""rule engine fields

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # rule_sets, findings and paper_labels were created by 0001 and the rule engine needs
    # no change to them; this revision stays as the label area's slot in the chain.
    pass


def downgrade() -> None:
    pass
