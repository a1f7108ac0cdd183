"""full-text search and extraction fields

The full-text index over texts.content: an FTS5 external-content table plus sync
triggers on SQLite, a GIN expression index on PostgreSQL (see review/extract/fts.py;
the objects stay outside the ORM metadata and autogenerate skips them).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa

from review.extract import fts

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    for stmt in fts.statements(op.get_bind().dialect.name, "up"):
        op.execute(sa.text(stmt))


def downgrade() -> None:
    for stmt in fts.statements(op.get_bind().dialect.name, "down"):
        op.execute(sa.text(stmt))
