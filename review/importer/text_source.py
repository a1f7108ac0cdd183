"""Which of a paper's texts the labels use, when it has more than one.

A paper can have the text `review extract` made from its PDF (source "pdf") and texts
imported from full-text corpora (`review import texts`, e.g. "acl-ocl-grobid"). The
`label.text_source` setting orders them:

- `prefer-pdf` (default): the PDF's text, else any imported one;
- a source name (`pdf`, `acl-ocl-grobid`): only that source;
- `prefer-<source>`: that source, else any other;
- a comma list in order of preference, `*` standing for any source not named.

Only texts with outcome "ok" count. Among sources `*` stands for, the first by name wins,
so the choice never depends on insertion order. The chosen text is one SQL condition
(`chosen()`), so the label stage, the export and the survey plan all pick the same row.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, exists, literal, null, or_
from sqlalchemy.orm import aliased

from review.db.models import PaperText
from review.errors import ConfigError

PDF = "pdf"
ANY = "*"


def parse(value: str) -> list[str]:
    """The ordered source names of a `label.text_source` value (`*` = any other)."""
    text = (value or "").strip()
    if not text:
        raise ConfigError("label.text_source is empty", hint="e.g. 'prefer-pdf', 'pdf' or 'acl-ocl-grobid,pdf'")
    if text.startswith("prefer-") and "," not in text:
        return [text[len("prefer-"):], ANY]
    order = [part.strip() for part in text.split(",") if part.strip()]
    if len(set(order)) != len(order):
        raise ConfigError(f"label.text_source names a source twice: {value!r}")
    return order


def _rank(table: Any, order: list[str]) -> Any:
    """0 for the most preferred source, 1 for the next ...; NULL for a source never used."""
    whens = [(table.source == name, literal(i)) for i, name in enumerate(order) if name != ANY]
    other = literal(order.index(ANY)) if ANY in order else null()
    if not whens:
        return other
    return case(*whens, else_=other)


def chosen(order: list[str], table: Any = PaperText) -> Any:
    """A WHERE condition true for exactly the text each paper's labels should use."""
    if order == [PDF] or (len(order) == 1 and order[0] != ANY):
        return and_(table.outcome == "ok", table.source == order[0])
    other = aliased(PaperText)
    mine, theirs = _rank(table, order), _rank(other, order)
    better = exists().where(
        other.paper_id == table.paper_id, other.outcome == "ok", other.id != table.id,
        or_(theirs < mine, and_(theirs == mine, other.source < table.source)))
    return and_(table.outcome == "ok", mine.is_not(None), ~better)


def describe(order: list[str]) -> str:
    """The order in words, for logs and the survey plan."""
    return " > ".join("any other" if s == ANY else s for s in order)


def label_of(source: str | None, version: str | None) -> str | None:
    """How a text is named in labels and exports: the source, with its corpus version if any."""
    if source is None:
        return None
    return f"{source}@{version}" if version and source != PDF else source

