"""Alembic, driven from code: `review db upgrade` and the start-up drift check."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.exc import OperationalError

from review.db.session import Database
from review.errors import DatabaseError, SchemaMismatchError


def migrations_dir() -> Path:
    """The migrations folder: top-level in a checkout, packaged inside a wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "migrations", here / "_migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise DatabaseError("migrations folder not found", hint="reinstall the package")


def alembic_config(db: Database) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["engine"] = db.engine
    return cfg


def head_revision() -> str:
    script = ScriptDirectory(str(migrations_dir()))
    heads = script.get_heads()
    if len(heads) != 1:
        raise DatabaseError(f"migrations have {len(heads)} heads: {', '.join(heads)}",
                            hint="merge them with `alembic merge`")
    return heads[0]


def current_revision(db: Database) -> str | None:
    try:
        with db.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except OperationalError as exc:
        raise DatabaseError(f"cannot open the database: {exc.orig}", item=_safe_url(db)) from None


def _safe_url(db: Database) -> str:
    return db.url.render_as_string(hide_password=True)


def upgrade(db: Database, revision: str = "head") -> tuple[str | None, str]:
    """Bring the database to `revision`; returns (before, after)."""
    before = current_revision(db)
    command.upgrade(alembic_config(db), revision)
    return before, current_revision(db) or ""


def is_empty(db: Database) -> bool:
    return not inspect(db.engine).get_table_names()


def ensure_current(db: Database, *, auto_create: bool = True) -> None:
    """Refuse to work on a database whose schema this release does not expect.

    A brand-new, empty database is created at head (the first run should just work). An
    older one is never migrated silently: the user runs `review db upgrade` knowingly.
    """
    current = current_revision(db)
    head = head_revision()
    if current == head:
        return
    if current is None and auto_create and is_empty(db):
        upgrade(db)
        return
    script = ScriptDirectory(str(migrations_dir()))
    known = {rev.revision for rev in script.walk_revisions()}
    where = _safe_url(db)
    if current is None:
        raise SchemaMismatchError("the database has tables but no schema revision", item=where,
                                  hint="is this a review database? `review db upgrade` adopts it only if empty")
    if current not in known:
        raise SchemaMismatchError(f"database revision {current} is newer than this release knows",
                                  item=where, hint="upgrade the tool (pip install -U rogue-review)")
    raise SchemaMismatchError(f"database schema is at {current}, this release needs {head}",
                              item=where, hint="run `review db upgrade` (keeps all data)")
