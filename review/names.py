"""How messages name papers and codebases: by their public id, never by row numbers.

Why: "paper 9" means nothing outside this database (and differs between two databases of
the same survey); the Anthology id or ident a source gave (`2022.sample-1.9`, `D19-1620`)
is what a reader can look up, and what `review show` takes.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Codebase, Paper


def paper_name(session: Session, paper_id: int | None) -> str:
    """The paper's ident (its public id); the row number only for a paper that is gone."""
    if paper_id is None:
        return "paper ?"
    ident = session.scalar(select(Paper.ident).where(Paper.id == paper_id))
    return ident if ident else f"paper row {paper_id} (deleted)"


def codebase_name(session: Session, codebase_id: int | None) -> str:
    """A codebase as its URL and the public id of the paper it belongs to."""
    if codebase_id is None:
        return "codebase ?"
    row = session.execute(select(Codebase.url, Paper.ident).join(Paper, Paper.id == Codebase.paper_id)
                          .where(Codebase.id == codebase_id)).first()
    return f"{row[0]} (of {row[1]})" if row else f"codebase row {codebase_id} (deleted)"


def paper_name_of(db: object, paper_id: int | None) -> str:
    """`paper_name` with a session of its own, for code holding a `Database` and no session."""
    with db.session() as s:  # type: ignore[attr-defined]
        return paper_name(s, paper_id)


def codebase_name_of(db: object, codebase_id: int | None) -> str:
    """`codebase_name` with a session of its own."""
    with db.session() as s:  # type: ignore[attr-defined]
        return codebase_name(s, codebase_id)
