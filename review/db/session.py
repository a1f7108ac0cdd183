"""The one place engines and sessions are made.

SQLite gets WAL (readers never block the writer), a busy timeout (a second process waits
instead of failing with "database is locked") and enforced foreign keys. Any other
SQLAlchemy URL is used as given; `postgresql://` is mapped to the psycopg 3 driver.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from review.errors import ConfigError

SQLITE_BUSY_TIMEOUT_MS = 30_000


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL, naming the bad value when it is not one."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(f"not a database URL: {url!r}", hint="e.g. sqlite:///db/review.sqlite") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str | URL) -> Engine:
    """An engine for `url`, creating the SQLite file's folder when needed."""
    parsed = normalize_url(url)
    kwargs: dict = {}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
    else:
        kwargs["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **kwargs)
    except NoSuchModuleError:
        raise ConfigError(f"no driver installed for {parsed.drivername}",
                          hint="for PostgreSQL: pip install 'rogue-review[postgres]'") from None
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


class Database:
    """An engine plus its session factory; what every stage receives."""

    def __init__(self, url: str | URL):
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def url(self) -> URL:
        return self.engine.url

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self.sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def dispose(self) -> None:
        self.engine.dispose()
