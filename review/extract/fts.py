"""The full-text index over `texts.content`: DDL shared by the migration and the search.

SQLite: an FTS5 virtual table `texts_fts` with external content (the text is stored
once, in `texts`), kept in sync by three triggers. PostgreSQL: a GIN index on the
expression PG_TSVECTOR, which the search query repeats word for word so the planner
uses it.

These objects are not ORM models (a virtual table and an expression index have no
portable model), so Alembic's autogenerate comparison must skip them:
`include_object` below is what migrations/env.py (and the schema test) pass to it.
Note for later migrations: a batch (copy-and-move) rebuild of `texts` on SQLite drops
its triggers; run `create_sqlite()` again after such a rebuild.
"""

from __future__ import annotations

from typing import Any

FTS_TABLE = "texts_fts"
PG_INDEX = "ix_texts_content_fts"
# PostgreSQL's parser keeps a URL, host, file name or e-mail address as one token, so
# "pyrouge" in "github.com/bheinzerling/pyrouge" was not a word of the index; FTS5 splits
# at every such character. Since migration 0018 the index reads those characters as spaces.
_URL_CHARS = "/._:@=?&#~"
PG_TSVECTOR_0002 = "to_tsvector('english', coalesce(content, ''))"
PG_TSVECTOR = (f"to_tsvector('english', translate(coalesce(content, ''), '{_URL_CHARS}', "
               f"'{' ' * len(_URL_CHARS)}'))")
_SHADOW_SUFFIXES = ("", "_data", "_idx", "_content", "_docsize", "_config")
SEARCH_OBJECT_NAMES = frozenset({FTS_TABLE + s for s in _SHADOW_SUFFIXES} | {PG_INDEX})

SQLITE_UP = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "content, content='texts', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    f"""CREATE TRIGGER IF NOT EXISTS texts_fts_ai AFTER INSERT ON texts BEGIN
        INSERT INTO {FTS_TABLE}(rowid, content) VALUES (new.id, new.content); END""",
    f"""CREATE TRIGGER IF NOT EXISTS texts_fts_ad AFTER DELETE ON texts BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content) VALUES ('delete', old.id, old.content); END""",
    f"""CREATE TRIGGER IF NOT EXISTS texts_fts_au AFTER UPDATE OF content ON texts BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO {FTS_TABLE}(rowid, content) VALUES (new.id, new.content); END""",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS texts_fts_au",
    "DROP TRIGGER IF EXISTS texts_fts_ad",
    "DROP TRIGGER IF EXISTS texts_fts_ai",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
PG_UP = [f"CREATE INDEX IF NOT EXISTS {PG_INDEX} ON texts USING gin ({PG_TSVECTOR})"]


def pg_index(tsvector: str) -> list[str]:
    """Statements that replace the PostgreSQL index by one on `tsvector` (migration 0018)."""
    return [f"DROP INDEX IF EXISTS {PG_INDEX}", f"CREATE INDEX {PG_INDEX} ON texts USING gin ({tsvector})"]
PG_DOWN = [f"DROP INDEX IF EXISTS {PG_INDEX}"]


def statements(dialect: str, direction: str) -> list[str]:
    if dialect == "sqlite":
        return SQLITE_UP if direction == "up" else SQLITE_DOWN
    if dialect == "postgresql":
        return PG_UP if direction == "up" else PG_DOWN
    return []


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """Alembic filter: leave the search index objects out of autogenerate comparisons."""
    return not (reflected and name in SEARCH_OBJECT_NAMES)
