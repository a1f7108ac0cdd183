"""Alembic environment: the engine comes from review's settings, never from alembic.ini."""

from __future__ import annotations

from alembic import context

from review.db.models import Base
from review.extract.fts import include_object  # skip the full-text index (not an ORM model)

target_metadata = Base.metadata


def _render_as_batch(connection) -> bool:  # type: ignore[no-untyped-def]
    # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
    return connection.dialect.name == "sqlite"


def _check_foreign_keys(connection) -> None:  # type: ignore[no-untyped-def]
    """With the checks off during the rebuilds, prove afterwards that no row lost its parent."""
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise RuntimeError(f"migration left {len(broken)} rows without their parent row, e.g. {broken[:3]}")


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        from review.db.session import make_engine
        from review.settings import load_settings

        engine = make_engine(load_settings().database)
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # A batch rebuild drops and recreates a table; with foreign keys on, SQLite's
            # implicit DELETE of the old table cascades into every child row (codebase
            # links, findings...). The pragma only takes effect outside a transaction.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=_render_as_batch(connection),
            compare_type=True,
            include_object=include_object,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
        if sqlite:
            _check_foreign_keys(connection)
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")


if context.is_offline_mode():
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
