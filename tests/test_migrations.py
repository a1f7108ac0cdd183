"""Models and migrations agree, and upgrades keep data, on SQLite and PostgreSQL."""

from datetime import datetime, timezone

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
import pytest
from sqlalchemy import MetaData, Table, insert, inspect, select, text

from review.db import migrate
from review.db.models import Base, Paper, SourceRecord
from review.db.session import Database
from review.extract.fts import include_object  # the search index is not an ORM model
from review.errors import SchemaMismatchError


def test_models_and_migrations_agree(db):
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True, "include_object": include_object})
        diff = compare_metadata(ctx, Base.metadata)
    assert diff == [], f"models differ from migrations: {diff}"


def test_upgrade_creates_every_table_and_is_idempotent(db):
    tables = set(inspect(db.engine).get_table_names())
    assert set(Base.metadata.tables) <= tables
    before, after = migrate.upgrade(db)
    assert before == after == migrate.head_revision()


def test_upgrade_from_base_keeps_data(db_url):
    """An older database (here: schema at the first revision, with rows) upgrades intact."""
    db = Database(db_url)
    migrate.upgrade(db, "0001")
    with db.engine.begin() as conn:  # the tables as that revision made them, not today's models
        papers, records = (Table(name, MetaData(), autoload_with=conn) for name in ("papers", "source_records"))
        now = datetime.now(timezone.utc)
        pid = conn.execute(insert(papers).values(
            ident="P19-1330", source="acl", title="HighRES", authors=["Hardy"], venues=[], pwc_code=[], year=2019,
            removed=False, retracted=False, created_at=now, updated_at=now).returning(papers.c.id)).scalar_one()
        conn.execute(insert(records).values(paper_id=pid, source="acl", source_id="P19-1330", raw={"x": 1},
                                            harvested_at=now, updated_at=now))
    migrate.upgrade(db)
    with db.session() as s:
        paper = s.scalars(select(Paper)).one()
        assert (paper.ident, paper.title, paper.authors, paper.records[0].raw) == ("P19-1330", "HighRES", ["Hardy"], {"x": 1})
    db.dispose()


def test_empty_database_is_created_on_first_use(db_url):
    db = Database(db_url)
    migrate.ensure_current(db)
    assert migrate.current_revision(db) == migrate.head_revision()
    db.dispose()


def test_older_database_is_not_migrated_silently(sqlite_url):
    db = Database(sqlite_url)
    migrate.upgrade(db)
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffffffff'"))
    with pytest.raises(SchemaMismatchError, match="newer than this release"):
        migrate.ensure_current(db)


def test_foreign_tables_are_refused(sqlite_url):
    db = Database(sqlite_url)
    with db.engine.begin() as conn:
        conn.execute(text("CREATE TABLE something_else (id integer)"))
    with pytest.raises(SchemaMismatchError, match="no schema revision"):
        migrate.ensure_current(db)


def test_sqlite_runs_in_wal_mode_with_busy_timeout(sqlite_url):
    db = Database(sqlite_url)
    with db.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 30000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
