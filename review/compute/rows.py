"""The `reproducibility` table: written whole in one transaction, compared by digest.

JSON columns are read as text and written pre-serialized (bulk reads parse only the
non-empty values; per-value type processing was most of the time on 100,000 papers).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Sequence

from sqlalchemy import JSON, DateTime, Text, TypeDecorator, bindparam, cast, delete, func, select, text

from review.db.base import utcnow
from review.db.models import Reproducibility, Run
from review.db.session import Database

# (row key = attribute, database column): rows are keyed by the model's attribute names
ROW_COLUMNS = [(a.key, a.columns[0].name) for a in Reproducibility.__mapper__.column_attrs
               if a.key not in ("id", "computed_at")]


def json_text(column: Any) -> Any:
    """A JSON column read as its text, so bulk reads parse only the non-empty values."""
    return cast(column, Text)


def parse_json(text: str | None) -> Any:
    if text is None:
        return None
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def dump_json(value: Any) -> str:
    if isinstance(value, list) and not value:
        return "[]"
    return json.dumps(value, ensure_ascii=False)


class _JsonText(TypeDecorator):
    """A JSON parameter already serialized by us: bound as is (PostgreSQL still casts to json)."""

    impl = JSON
    cache_ok = True

    def bind_processor(self, dialect: Any) -> None:
        return None


def rows_digest(rows: Sequence[dict[str, Any]]) -> str:
    """A hash of the computed rows (run ids aside): equal digests mean nothing changed."""
    h = hashlib.sha256()
    keys = sorted(k for k in (rows[0] if rows else {}) if k != "run_id")
    for row in rows:
        h.update(repr([row[k] for k in keys]).encode())  # values are str/bool/int/None/list/dict: repr is stable
    return h.hexdigest()


def current_digest(db: Database) -> tuple[str, int] | None:
    """The digest recorded by the run that wrote the stored rows, and how many rows there are."""
    with db.session() as s:
        run_id = s.scalar(select(Reproducibility.run_id).limit(1))
        count = s.scalar(select(func.count()).select_from(Reproducibility)) or 0
        if run_id is None:
            return None
        run = s.get(Run, run_id)
        digest = (run.signature or {}).get("rows_sha256") if run else None
    return (digest, count) if digest else None


def write_rows(db: Database, rows: Sequence[dict[str, Any]]) -> None:
    """Replace the table in one transaction: readers see the old rows or the new, never half."""
    table = Reproducibility.__table__
    json_cols = {c.name for c in table.columns if isinstance(c.type, JSON)}
    names = [col for _, col in ROW_COLUMNS] + ["computed_at"]
    binds = [bindparam(n, type_=DateTime(timezone=True)) if n == "computed_at" else bindparam(n, type_=_JsonText())
             if n in json_cols else bindparam(n) for n in names]
    stmt = text(f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"
                ).bindparams(*binds)
    now = utcnow()
    with db.session() as s:
        s.execute(delete(table))
        for i in range(0, len(rows), 5000):
            chunk = [{**{col: (dump_json(r[key]) if col in json_cols else r[key]) for key, col in ROW_COLUMNS},
                      "computed_at": now}
                     for r in rows[i:i + 5000]]
            s.execute(stmt, chunk)
