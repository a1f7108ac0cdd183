"""Migration 0014 on a database with texts: search keeps working (the SQLite rebuild of
`texts` drops the FTS triggers; the migration must bring them back), on both databases."""

from __future__ import annotations

from sqlalchemy import text

from review.db import migrate
from review.db.session import Database
from review.search import search


def _paper(conn, ident: str) -> int:
    conn.execute(text("INSERT INTO papers (ident, source, title, authors, venues, pwc_code, removed, retracted, "
                      "created_at, updated_at) VALUES (:i, 'acl', :t, '[]', '[]', '[]', false, false, "
                      "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"), {"i": ident, "t": ident})
    return conn.execute(text("SELECT id FROM papers WHERE ident = :i"), {"i": ident}).scalar_one()


def test_upgrade_with_existing_texts_keeps_search_working(db_url):
    db = Database(db_url)
    migrate.upgrade(db, "0007")
    with db.engine.begin() as conn:
        first = _paper(conn, "P19-1")
        second = _paper(conn, "P19-2")
        conn.execute(text("INSERT INTO texts (paper_id, content, outcome, extracted_at) VALUES "
                          "(:p, 'we report scores of pyrouge with stemming', 'ok', CURRENT_TIMESTAMP)"), {"p": first})

    migrate.upgrade(db)

    assert [h.ident for h in search(db, "pyrouge")] == ["P19-1"]  # the old row is still indexed
    with db.engine.begin() as conn:
        assert conn.execute(text("SELECT source FROM texts")).scalar_one() == "pdf"
        # a second text of the same paper from another source is allowed, and indexed by the triggers
        conn.execute(text("INSERT INTO texts (paper_id, source, content, outcome, extracted_at) VALUES "
                          "(:p, 'acl-ocl-grobid', 'grobid text citing files2rouge', 'ok', CURRENT_TIMESTAMP)"),
                     {"p": first})
        conn.execute(text("INSERT INTO texts (paper_id, content, outcome, extracted_at) VALUES "
                          "(:p, 'a paper on sacrerouge', 'ok', CURRENT_TIMESTAMP)"), {"p": second})
        conn.execute(text("UPDATE texts SET content = 'now it cites rougescore' WHERE paper_id = :p AND source = 'pdf'"),
                     {"p": first})
    assert [h.ident for h in search(db, "files2rouge")] == ["P19-1"]
    assert [h.ident for h in search(db, "sacrerouge")] == ["P19-2"]
    assert [h.ident for h in search(db, "rougescore")] == ["P19-1"]
    assert search(db, "pyrouge") == []  # the update replaced the old words in the index too

    migrate_down(db)
    assert [h.ident for h in search(db, "rougescore")] == ["P19-1"]  # the PDF text and its index stay
    assert search(db, "files2rouge") == []  # imported texts have no place in the old schema
    db.dispose()


def migrate_down(db: Database) -> None:
    from alembic import command

    command.downgrade(migrate.alembic_config(db), "0007")
