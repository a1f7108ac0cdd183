"""ACL identifiers of two-digit old-style volumes, DOIs kept as given

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22

Earlier releases built old-style identifiers as `{collection}-{volume}{paper:03d}`. The
Anthology pads the volume instead: collections W*, C69 and D19 volumes 5 and up take a
two-digit volume and a two-digit paper number (W02 volume 1 paper 1 is W02-0101, volume 10
paper 1 is W02-1001). So W02-0101's paper was stored as W02-1001, another real paper's
identifier, and W02-1001's as W02-10001.

This revision gives every wrongly keyed ACL record and its paper the identifier the
paper's own `<url>` carries (kept in `papers.pdf_url`; by the Anthology's rule when there is
no anthology URL). Paper rows keep their id, so documents, texts, labels, human decisions
and codebases stay attached to the same paper; the old identifier is kept in
`papers.former_idents` (Label Studio exports made before still import). Identifiers are
swapped between real papers, so all moves go through a temporary identifier first.

It also adds `papers.doi_key` (DOIs are now stored as the source wrote them and matched
case-insensitively) and forgets the content hash of ACL records, so the next harvest
rewrites each once with the current mapping (DOI case, landing URLs, code links).
"""
from __future__ import annotations

import logging
import re
from typing import Any

from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")

SITE = "https://aclanthology.org"
_OLD_ID = re.compile(r"^([A-Z]\d{2})-(\d{4,})$")
_ANTHOLOGY_PDF = re.compile(r"^https?://(?:www\.)?(?:aclanthology\.org|aclweb\.org/anthology)/([A-Z]\d{2}-\d{4})\.pdf$")

papers = sa.table("papers", sa.column("id", sa.Integer), sa.column("ident", sa.String), sa.column("url", sa.Text),
                  sa.column("pdf_url", sa.Text), sa.column("former_idents", sa.JSON), sa.column("doi", sa.String),
                  sa.column("doi_key", sa.String))
records = sa.table("source_records", sa.column("id", sa.Integer), sa.column("paper_id", sa.Integer),
                   sa.column("source", sa.String), sa.column("source_id", sa.String),
                   sa.column("content_hash", sa.String))


def upgrade() -> None:
    # Plain ALTERs (no batch): rebuilding `papers` on SQLite would cascade-delete its children.
    op.add_column('papers', sa.Column('former_idents', sa.JSON(), nullable=False, server_default=sa.text("'[]'")))
    op.add_column('papers', sa.Column('doi_key', sa.String(length=255), nullable=True))
    op.drop_index('ix_papers_doi', table_name='papers')
    op.create_index(op.f('ix_papers_doi_key'), 'papers', ['doi_key'], unique=False)
    conn = op.get_bind()
    conn.execute(papers.update().where(papers.c.doi.is_not(None)).values(doi_key=sa.func.lower(papers.c.doi)))
    moved = rekey_acl(conn)
    conn.execute(records.update().where(records.c.source == "acl").values(content_hash=None))
    if moved:
        log.info("re-keyed %d ACL records with old-style identifiers of two-digit volumes", moved)


def downgrade() -> None:
    # Identifiers stay corrected: the old ones named other papers.
    op.drop_index(op.f('ix_papers_doi_key'), table_name='papers')
    op.create_index('ix_papers_doi', 'papers', ['doi'], unique=False)
    op.drop_column('papers', 'doi_key')
    op.drop_column('papers', 'former_idents')


def true_ident(source_id: str, pdf_url: str | None) -> str | None:
    """The identifier an earlier release should have stored for `source_id`, or None."""
    m = _OLD_ID.match(source_id)
    if not m:
        return None
    collection, digits = m.groups()
    url = _ANTHOLOGY_PDF.match(pdf_url or "")
    if url and url.group(1).startswith(f"{collection}-"):
        return url.group(1)  # the paper's own <url>: the truth
    volume, number = int(digits[:-3]), int(digits[-3:])
    two_digit = collection.startswith("W") or collection == "C69" or (collection == "D19" and volume >= 5)
    if not two_digit or number >= 100 or volume >= 100:
        return None
    return f"{collection}-{volume:02d}{number:02d}"


def rekey_acl(conn: Any) -> int:
    rows = conn.execute(sa.select(records.c.id, records.c.source_id, records.c.paper_id, papers.c.ident,
                                  papers.c.url, papers.c.pdf_url, papers.c.former_idents)
                        .join(papers, papers.c.id == records.c.paper_id).where(records.c.source == "acl")).all()
    moves = [(r, new) for r in rows if (new := true_ident(r.source_id, r.pdf_url)) and new != r.source_id]
    if not moves:
        return 0
    moving = {r.source_id for r, _ in moves}
    staying = {r.source_id for r in rows} - moving
    targets: set[str] = set()
    kept = []
    for r, new in moves:
        if new in staying or new in targets:
            log.warning("ACL record %s should be %s, which another record holds; left as it is", r.source_id, new)
            continue
        targets.add(new)
        kept.append((r, new))
    renamed = {r.paper_id for r, _ in kept if r.ident in (r.source_id, f"acl:{r.source_id}")}
    taken = set(conn.execute(sa.select(papers.c.ident).where(papers.c.id.not_in(renamed))).scalars()) \
        if renamed else set()
    # Phase 1: park every moving row on a temporary identifier, so swaps cannot collide.
    for r, _ in kept:
        conn.execute(records.update().where(records.c.id == r.id).values(source_id=f"rekey:{r.id}"))
        if r.paper_id in renamed:
            conn.execute(papers.update().where(papers.c.id == r.paper_id).values(ident=f"rekey:{r.paper_id}"))
    # Phase 2: the true identifiers.
    for r, new in kept:
        conn.execute(records.update().where(records.c.id == r.id).values(source_id=new))
        if r.paper_id not in renamed:
            continue
        ident = next(i for i in (new, f"acl:{new}", f"acl:{new}:{r.paper_id}") if i not in taken)
        taken.add(ident)
        values: dict[str, Any] = {"ident": ident, "former_idents": [*(r.former_idents or []), r.ident]}
        if r.url == f"{SITE}/{r.source_id}/":
            values["url"] = f"{SITE}/{new}/"
        conn.execute(papers.update().where(papers.c.id == r.paper_id).values(**values))
    return len(kept)
