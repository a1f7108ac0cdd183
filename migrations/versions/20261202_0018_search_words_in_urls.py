"""search: PostgreSQL's full-text index also holds the words inside URLs and file names

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa

from review.extract import fts

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why: PostgreSQL's parser keeps "github.com/bheinzerling/pyrouge" as one token, so
    # `review search pyrouge` missed a paper SQLite's FTS5 found. The index expression
    # now reads URL characters as spaces; existing texts are indexed again by the CREATE.
    # SQLite needs nothing: FTS5 already splits there, and exact identifiers are checked
    # on the text itself (review/search.py).
    if op.get_bind().dialect.name == "postgresql":
        for stmt in fts.pg_index(fts.PG_TSVECTOR):
            op.execute(sa.text(stmt))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for stmt in fts.pg_index(fts.PG_TSVECTOR_0002):
            op.execute(sa.text(stmt))
