"""imports: texts from several sources, import provenance, the import ledger

`texts` goes from one row per paper to one per (paper, source): the PDF's own
extraction is source "pdf" (every existing row), an imported corpus such as ACL OCL is
another source beside it. `documents` and `texts` get a `provenance` JSON column, and
`import_files` records what `review import pdfs` did with each file.

SQLite cannot change a unique constraint in place, so `texts` is rebuilt (copy and
rename). The rebuild keeps every row and its id, so the FTS5 external-content index
(which points at texts by rowid) stays valid, but it drops the triggers that keep that
index in sync. They are read from sqlite_master before the rebuild and created again
after it, word for word: whatever the current index definition is (another migration
may change its tokenizer), it is kept as it was.

Revision ID: 0014
Revises: 0009
Create Date: 2026-11-22
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0009'
branch_labels = None
depends_on = None


def _texts_triggers() -> list[str]:
    """The CREATE TRIGGER statements on `texts` (SQLite only; none elsewhere)."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return []
    rows = bind.execute(sa.text(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'texts' AND sql IS NOT NULL "
        "ORDER BY name")).all()
    return [r[0] for r in rows]


def _recreate(triggers: list[str]) -> None:
    for sql in triggers:
        op.execute(sa.text(sql))


def upgrade() -> None:
    triggers = _texts_triggers()
    with op.batch_alter_table('texts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source', sa.String(length=64), server_default='pdf', nullable=False))
        batch_op.add_column(sa.Column('provenance', sa.JSON(), nullable=True))
        batch_op.drop_constraint('uq_texts_paper_id', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_texts_paper_id_source'), ['paper_id', 'source'])
    _recreate(triggers)

    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('provenance', sa.JSON(), nullable=True))

    op.create_table('import_files',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('member', sa.Text(), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=True),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.String(length=64), nullable=True),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.Column('matched_by', sa.String(length=32), nullable=True),
    sa.Column('paper_id', sa.Integer(), nullable=True),
    sa.Column('sha256', sa.String(length=64), nullable=True),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['paper_id'], ['papers.id'], name=op.f('fk_import_files_paper_id_papers'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_import_files_run_id_runs'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_import_files')),
    sa.UniqueConstraint('source', 'member', name=op.f('uq_import_files_source_member'))
    )


def downgrade() -> None:
    op.drop_table('import_files')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_column('provenance')
    # Back to one text per paper: imported texts have no place in the old schema.
    op.execute(sa.text("DELETE FROM texts WHERE source <> 'pdf'"))
    triggers = _texts_triggers()
    with op.batch_alter_table('texts', schema=None) as batch_op:
        batch_op.drop_constraint('uq_texts_paper_id_source', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_texts_paper_id'), ['paper_id'])
        batch_op.drop_column('provenance')
        batch_op.drop_column('source')
    _recreate(triggers)
