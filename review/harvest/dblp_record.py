"""One DBLP publication, from either the search API JSON or the XML dump, as a record.

Why a shared step: both modes must give the same record for the same paper (same
source id, same content hash), so switching mode never shows as "updated" or "added".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from review.harvest.dblp_venues import Venue
from review.harvest.pdf_urls import resolve
from review.harvest.records import HarvestRecord, clean_doi, clean_text, clean_title

SOURCE = "dblp"
REC_URL = "https://dblp.org/rec/"
_HOMONYM = re.compile(r"\s+\d{4}$")  # "Wei Wang 0001": DBLP's number for people sharing a name


@dataclass
class DblpPublication:
    """The fields both DBLP modes provide, already unescaped."""

    key: str
    title: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    pages: str | None = None
    booktitle: str | None = None
    ee: list[str] = field(default_factory=list)
    doi: str | None = None
    toc: str | None = None  # the TOC page name, e.g. nips2019


def author_name(name: str) -> str:
    return _HOMONYM.sub("", clean_text(name))


def as_list(value: Any) -> list[Any]:
    """DBLP JSON gives one item as an object and several as a list."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def texts(value: Any) -> list[str]:
    """Every text of a DBLP JSON field, whatever its shape.

    Why: the search API turns XML into JSON mechanically, so a field is a string when the
    record has one plain element, an object (`{"@type": "oa", "text": ...}`) when the element
    has attributes, and a list of either when the record repeats the element (`ee`, `author`,
    `venue`, even `pages`). Numbers come as strings, but a number is taken too.
    """
    out: list[str] = []
    for item in as_list(value):
        if isinstance(item, dict):
            item = item.get("text")
        if isinstance(item, (list, dict)):
            out.extend(texts(item))
        elif isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item).strip():
            out.append(str(item).strip())
    return out


def text(value: Any, joiner: str | None = None) -> str | None:
    """One text from a field of any shape: the first, or all joined by `joiner`."""
    found = texts(value)
    if not found:
        return None
    return joiner.join(dict.fromkeys(found)) if joiner else found[0]


def to_record(pub: DblpPublication, venue: Venue) -> HarvestRecord:
    res = resolve(pub.ee)
    doi = clean_doi(pub.doi) or next((d for d in (clean_doi(e) for e in pub.ee if "doi.org/" in e) if d), None)
    return HarvestRecord(
        source=SOURCE, source_id=pub.key, ident=pub.key, title=clean_title(pub.title), year=pub.year,
        url=res.landing or f"{REC_URL}{pub.key}", pdf_url=res.pdf_url, pdf_unresolved_reason=res.reason,
        authors=[author_name(a) for a in pub.authors if a], venue=venue.id, venues=[venue.id],
        booktitle=clean_text(pub.booktitle) or None, pages=clean_text(pub.pages) or None, doi=doi,
        arxiv_id=res.arxiv_id,
        raw={"key": pub.key, "ee": pub.ee, "toc": pub.toc, "dblp_url": f"{REC_URL}{pub.key}",
             "pdf_rule": res.rule},
    )
