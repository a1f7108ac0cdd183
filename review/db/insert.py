"""Insert-or-get that two processes can run at the same moment.

Why: "select, and insert when missing" loses a race: two `review label` runs both find no
row for their rule file, both insert, and the second dies on the unique key. Here the
insert comes first and is told to do nothing on a conflict (SQLite and PostgreSQL both
have `ON CONFLICT DO NOTHING`), so the loser simply reads the winner's row. On SQLite the
insert is the transaction's first statement, so it takes the write lock (waiting the busy
timeout) before anything is read; on PostgreSQL it waits for the other transaction's
commit, then reads the committed row.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

T = TypeVar("T")


def insert_or_get(session: Session, model: type[T], unique: dict[str, Any], values: dict[str, Any]) -> T:
    """The row of `model` whose unique columns equal `unique`, inserted with `values` when missing."""
    dialect = session.get_bind().dialect.name
    table = model.__table__  # type: ignore[attr-defined]
    if dialect in ("sqlite", "postgresql"):
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        session.execute(insert(table).values(**unique, **values).on_conflict_do_nothing(index_elements=list(unique)))
    else:  # any other database: a savepoint makes the lost race harmless
        try:
            with session.begin_nested():
                session.execute(table.insert().values(**unique, **values))
        except IntegrityError:
            pass
    return session.scalars(select(model).filter_by(**unique)).one()
