"""Shared fixtures: databases on SQLite and PostgreSQL, a CLI runner, shared/ fixtures.

PostgreSQL tests need `REVIEW_TEST_POSTGRES_URL` (an admin URL on a server where the test
may create and drop databases; `.ci/run` sets it). Without it they skip on a laptop and
fail in CI (CI=true), so CI can never pass by silently skipping them.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from typing import Iterator

import pytest
from sqlalchemy import create_engine, make_url, text

from review.db import migrate
from review.db.session import Database

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SHARED = ROOT.parent / "shared"
PG_ENV = "REVIEW_TEST_POSTGRES_URL"



def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow run first: with parallel workers, a two-minute test collected late
    would keep one worker busy long after the others ran out of work."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def shared_path(*parts: str) -> Path:
    """A path under ../shared/fixtures, or a clean skip on a fresh clone without it."""
    path = SHARED.joinpath("fixtures", *parts)
    if not path.exists():
        pytest.skip(f"{path} not present (a fresh clone has no ../shared)")
    return path


def _pg_admin_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{PG_ENV} is not set in CI: PostgreSQL tests must run there")
        pytest.skip(f"PostgreSQL tests need {PG_ENV} (e.g. postgresql://postgres@127.0.0.1:5432/postgres)")
    return url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    admin_url = make_url(_pg_admin_url()).set(drivername="postgresql+psycopg")
    name = f"review_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n AND pid <> pg_backend_pid()"
            ), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'review.sqlite'}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'review.sqlite'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """A database at the current schema head."""
    database = Database(db_url)
    migrate.upgrade(database)
    yield database
    database.dispose()


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `review ...` in-process in a clean working directory; returns (code, stdout, stderr)."""
    from review.cli import main

    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("REVIEW_") and key != PG_ENV:
            monkeypatch.delenv(key)

    def run(*args: str) -> tuple[int, str, str]:
        import contextlib
        import io

        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return code, out.getvalue(), err.getvalue()

    return run


@pytest.fixture
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process for the test, however it was started.

    A shell starts background jobs (`bash .ci/run &`) with SIGINT ignored, and Python
    then keeps it ignored: `_thread.interrupt_main()` and a real Ctrl-C would do nothing.
    (Tests that start `review` processes use tests/procs.py, which sets it in them.)
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture
def local_server():  # type: ignore[no-untyped-def]
    """A `review.localserver.LocalServer` on 127.0.0.1, stopped after the test."""
    from review.localserver import LocalServer

    with LocalServer() as server:
        yield server
