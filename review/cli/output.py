"""Printing results: JSON for machines, rich tables for people, both on stdout.

Whatever is printed here passes `review.redact` first, like stored values and log lines.
Text printed here comes from papers, repositories and settings, never from us: square
brackets in it (`[cell 3]`, `x[0]`, `[OPTIONS]`) are text, not rich markup, so titles, cells
and summaries are printed as plain `Text`.
"""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from review.redact import redact



def console() -> Console:
    """A console for stdout, made per use: a module-level one would freeze the width (and
    `COLUMNS`) of whenever the module was first imported."""
    return Console(highlight=False, soft_wrap=True)


def err_console() -> Console:
    """The same for stderr."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def print_json(obj: Any) -> None:
    sys.stdout.write(redact(json.dumps(obj, default=_default, ensure_ascii=False, indent=2)) + "\n")


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A table whose title, headers and cells are shown exactly as given (no markup)."""
    table = Table(title=None if title is None else Text(title), title_justify="left", show_lines=False)
    for col in columns:
        table.add_column(Text(col), overflow="fold")
    for row in rows:
        table.add_row(*(Text("" if v is None else redact(str(v))) for v in row))
    console().print(table)


def summary(text: str) -> None:
    """The one-line summary every command ends with (stderr, so --json stays clean)."""
    err_console().print(redact(text), markup=False)
