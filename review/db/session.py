"""The one place engines and sessions are made.

SQLite gets WAL (readers never block the writer), a busy timeout (a second process waits
instead of failing with "database is locked") and enforced foreign keys. Any other
SQLAlchemy URL is used as given; `postgresql://` is mapped to the psycopg 3 driver.

Every engine redacts secrets from the values it sends (`_redact_parameters`): the hook
sits under the ORM, Core inserts and raw SQL alike, so no stage can store a token by
forgetting to clean an error text first.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Iterator

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from review.errors import ConfigError, DatabaseError
from review.redact import current as current_redactor

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


def _redact_parameters(_conn, _cursor, statement, parameters, _context, executemany):  # type: ignore[no-untyped-def]
    """Mask secrets in every string (and JSON value) bound to a statement, before the driver sees it.

    Fast path: the strings of the whole statement (every row of an executemany) are joined
    and checked once; only when the redactor would change something is each value redacted.
    """
    if not parameters:
        return statement, parameters
    redactor = current_redactor()
    rows = parameters if executemany and isinstance(parameters, list) else (parameters,)
    strings: list[str] = []
    for row in rows:
        for value in (row.values() if isinstance(row, dict) else row):
            if type(value) is str:
                strings.append(value)
            elif value is not None and not isinstance(value, _PLAIN):
                return statement, _redact_rows(redactor, parameters, executemany)  # JSON values: the slow path
    if redactor.clean(strings):
        return statement, parameters
    return statement, _redact_rows(redactor, parameters, executemany)


_PLAIN = (int, float, bytes, bytearray, memoryview, datetime, date, time, Decimal)


def _redact_rows(redactor, parameters, executemany):  # type: ignore[no-untyped-def]
    if executemany and isinstance(parameters, list):
        return [_redact_params(redactor, p) for p in parameters]
    return _redact_params(redactor, parameters)


def _redact_params(redactor, params):  # type: ignore[no-untyped-def]
    if isinstance(params, dict):
        return {k: _redact_param(redactor, v) for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return type(params)(_redact_param(redactor, v) for v in params)
    return params


def _redact_param(redactor, value):  # type: ignore[no-untyped-def]
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, (dict, list)):
        return redactor.value(value)
    obj = getattr(value, "obj", None)  # psycopg's Json/Jsonb wrapper around a JSON column's value
    if obj is not None and type(value).__name__ in ("Json", "Jsonb"):
        clean = redactor.value(obj)
        return value if clean is obj else type(value)(clean, getattr(value, "dumps", None))
    return value


def _driver_hint(url: URL) -> str:
    if url.get_backend_name() == "postgresql":
        return "install the PostgreSQL driver: pip install 'rogue-review[postgres]' (or pip install 'psycopg[binary]')"
    return f"install the driver of {url.drivername}, or use sqlite:///db/review.sqlite"


def require_existing(url: str | URL) -> None:
    """Refuse an SQLite file that does not exist: opening it would create an empty database.
    Why: a read-only command given a mistyped path must say so, not report an empty survey."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    path = Path(parsed.database)
    if not path.is_file():
        near = sorted(p.name for p in path.parent.glob("*.sqlite")) if path.parent.is_dir() else []
        raise DatabaseError(f"no database at {path}",
                            hint=("databases in that folder: " + ", ".join(near)) if near else
                            "check the path; a stage that writes (survey, harvest, import) creates it")


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
    except (NoSuchModuleError, ImportError) as exc:
        # create_engine imports the driver: a missing psycopg is an ImportError, not a traceback
        missing = getattr(exc, "name", None) or parsed.drivername
        raise ConfigError(f"no driver installed for {parsed.get_backend_name()} ({missing} is missing)",
                          item="--db", hint=_driver_hint(parsed)) from None
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "before_cursor_execute", _redact_parameters, retval=True)
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
