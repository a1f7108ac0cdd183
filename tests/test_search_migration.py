"""Migration 0018: texts stored before it stay searchable, and PostgreSQL now finds words in URLs."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import MetaData, Table, insert

from review.db import migrate
from review.db.session import Database
from review.search import search

URL_ONLY = "Scores come from www.github.com/bheinzerling/pyrouge with the default options."


def test_texts_from_before_0018_are_found_after_it(db_url):
    db = Database(db_url)
    migrate.upgrade(db, "0015")
    with db.engine.begin() as conn:  # rows as revision 0015 stores them
        papers, texts = (Table(n, MetaData(), autoload_with=conn) for n in ("papers", "texts"))
        now = datetime.now(timezone.utc)
        pid = conn.execute(insert(papers).values(
            ident="D19-1620", source="acl", title="Lead bias", authors=[], venues=[], pwc_code=[], year=2019,
            removed=False, retracted=False, created_at=now, updated_at=now).returning(papers.c.id)).scalar_one()
        conn.execute(insert(texts).values(paper_id=pid, source="pdf", content=URL_ONLY, chars=len(URL_ONLY),
                                          outcome="ok", extracted_at=now))
    migrate.upgrade(db)
    assert migrate.current_revision(db) == migrate.head_revision()
    for query in ("pyrouge", "bheinzerling", "default options", "github.com/bheinzerling/pyrouge",
                  "NEAR(pyrouge options, 5)"):
        assert [h.ident for h in search(db, query)] == ["D19-1620"], query
    assert search(db, "pyrouge NOT bheinzerling") == []
    migrate.upgrade(db)  # idempotent
    db.dispose()
