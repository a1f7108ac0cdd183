"""The one shape every harvester produces, and the text normalization they share.

Why a common record: the store, the duplicate finder and the PRISMA counts must not care
whether a paper came from the ACL Anthology XML, the DBLP API or the DBLP dump. Each
harvester turns its own format into `HarvestRecord`s; nothing downstream parses XML/JSON.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Any

# Paper columns a record sets; `raw` is stored on the SourceRecord only.
PAPER_FIELDS = (
    "url", "pdf_url", "pdf_crc32", "pdf_unresolved_reason", "title", "title_key", "authors",
    "venue", "venues", "year", "month", "booktitle", "address", "publisher", "pages", "doi",
    "bibkey", "arxiv_id", "pwc_code", "removed", "retracted", "status_note",
)


@dataclass
class HarvestRecord:
    """One harvested paper, normalized; `source_id` is unique within `source`."""

    source: str
    source_id: str
    ident: str
    title: str
    year: int | None
    url: str | None = None
    pdf_url: str | None = None
    pdf_crc32: str | None = None
    pdf_unresolved_reason: str | None = None
    authors: list[str] = field(default_factory=list)
    venue: str | None = None
    venues: list[str] = field(default_factory=list)
    month: str | None = None
    booktitle: str | None = None
    address: str | None = None
    publisher: str | None = None
    pages: str | None = None
    doi: str | None = None
    bibkey: str | None = None
    arxiv_id: str | None = None
    pwc_code: list[dict[str, Any]] = field(default_factory=list)
    removed: bool = False
    retracted: bool = False
    status_note: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def title_key(self) -> str | None:
        return title_key(self.title)

    def paper_values(self) -> dict[str, Any]:
        """The Paper column values this record carries."""
        values = {name: getattr(self, name) for name in PAPER_FIELDS if name != "title_key"}
        values["title_key"] = self.title_key
        values["doi"] = normalize_doi(self.doi)
        return values

    def content_hash(self) -> str:
        """Hash of everything stored, so a re-harvest can tell changed records from unchanged."""
        data = {name: getattr(self, name) for name in _FIELD_NAMES}
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_FIELD_NAMES = tuple(f.name for f in fields(HarvestRecord))
_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_DOI = re.compile(r"(10\.\d{4,9}/\S+)", re.IGNORECASE)


def clean_text(text: str | None) -> str:
    """Unescape HTML entities (DBLP JSON has them) and collapse whitespace."""
    if not text:
        return ""
    return _SPACE.sub(" ", html.unescape(text)).strip()


def clean_title(text: str | None) -> str:
    """A title as plain text; DBLP's trailing period is dropped (it is punctuation, not title)."""
    title = clean_text(text)
    if title.endswith(".") and not title.endswith("..."):
        title = title[:-1].rstrip()
    return title


def title_key(title: str | None) -> str | None:
    """Lower-case ASCII words of a title: the same paper gets the same key in every source."""
    if not title:
        return None
    folded = unicodedata.normalize("NFKD", html.unescape(title))
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    key = _NON_WORD.sub(" ", folded).strip()
    return key[:255] or None


def normalize_doi(doi: str | None) -> str | None:
    """`10.xxxx/...` in lower case, from a bare DOI or any doi.org URL."""
    if not doi:
        return None
    match = _DOI.search(doi.strip())
    if not match:
        return None
    return match.group(1).rstrip(".").lower()[:255]


MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}


def month_number(month: str | None) -> int | None:
    """1..12 from 'November', 'Nov', '11' or 'November-December' (the first month wins)."""
    if not month:
        return None
    text = month.strip().lower()
    if text[:2].isdigit() or text[:1].isdigit():
        digits = re.match(r"\d+", text)
        value = int(digits.group(0)) if digits else 0
        return value if 1 <= value <= 12 else None
    for name, number in MONTHS.items():
        if text.startswith(name[:3]):
            return number
    return None
