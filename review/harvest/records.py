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
    "doi_key", "bibkey", "arxiv_id", "pwc_code", "removed", "retracted", "status_note",
)
# Columns computed from another one: set together with their source, never on their own.
DERIVED_FIELDS = {"title_key": "title", "doi_key": "doi"}


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
        """The Paper column values this record carries; the DOI as the source wrote it."""
        values = {name: getattr(self, name) for name in PAPER_FIELDS if name not in DERIVED_FIELDS}
        values["title_key"] = self.title_key
        values["doi"] = clean_doi(self.doi)
        values["doi_key"] = normalize_doi(self.doi)
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


def clean_doi(doi: str | None) -> str | None:
    """`10.xxxx/...` as the source wrote it, from a bare DOI or any doi.org URL.

    DOIs are case-insensitive but publishers print them in mixed case; we keep what the
    source gave (it is what a reader searches for) and compare with `normalize_doi`.
    """
    if not doi:
        return None
    match = _DOI.search(doi.strip())
    if not match:
        return None
    return match.group(1).rstrip(".")[:255]


def normalize_doi(doi: str | None) -> str | None:
    """The comparison key of a DOI: `clean_doi` in lower case (`papers.doi_key`)."""
    cleaned = clean_doi(doi)
    return cleaned.lower() if cleaned else None


# Longest value stored per field, so one hostile or broken input file cannot fill the database
# (a 5-million-character title was stored as is) and no value overflows a sized column
# (PostgreSQL would refuse the whole batch). Far above anything real: the longest anthology
# title is ~400 characters, the most authors on one paper ~450.
TEXT_LIMITS = {
    "title": 2000, "booktitle": 1000, "address": 500, "publisher": 500, "month": 32, "pages": 64,
    "doi": 255, "bibkey": 255, "venue": 255, "arxiv_id": 64, "url": 2048, "pdf_url": 2048,
    "pdf_unresolved_reason": 1000, "status_note": 2000,
}
LIST_LIMITS = {"authors": (2000, 300), "venues": (20, 255)}  # (items, characters per item)
PWC_LIMITS = (20, 2048)  # code links per paper, characters of each url/name
RAW_LIMITS = (20_000, 1000, 2000)  # characters of a raw text (abstract), list items, characters per item
MAX_ID = 250  # source ids and idents longer than this are refused, never cut (two would become one)


def cap_fields(record: HarvestRecord) -> dict[str, int]:
    """Cut over-long values of `record` in place; return {field: original length} of what was cut
    (characters; for a list its number of items, or its longest item when that was cut).
    A CRC32 longer than 8 characters is dropped, not cut (a cut checksum would fail every PDF)."""
    cut: dict[str, int] = {}
    for name, limit in TEXT_LIMITS.items():
        value = getattr(record, name)
        if value is not None and len(value) > limit:
            cut[name] = len(value)
            setattr(record, name, value[:limit])
    if record.pdf_crc32 is not None and len(record.pdf_crc32) > 8:
        cut["pdf_crc32"] = len(record.pdf_crc32)
        record.pdf_crc32 = None
    for name, (items, chars) in LIST_LIMITS.items():
        values = getattr(record, name)
        if len(values) > items or any(len(v) > chars for v in values):
            cut[name] = len(values) if len(values) > items else max(len(v) for v in values)
            setattr(record, name, [v[:chars] for v in values[:items]])
    if record.pwc_code and (len(record.pwc_code) > PWC_LIMITS[0] or any(
            len(str(e.get(k) or "")) > PWC_LIMITS[1] for e in record.pwc_code for k in ("url", "name"))):
        cut["pwc_code"] = len(record.pwc_code)
        record.pwc_code = [{k: (v[:PWC_LIMITS[1]] if isinstance(v, str) else v) for k, v in e.items()}
                           for e in record.pwc_code[:PWC_LIMITS[0]]]
    _cap_raw(record.raw, cut)
    return cut


def _cap_raw(raw: dict[str, Any], cut: dict[str, int]) -> None:
    text_max, items_max, item_chars = RAW_LIMITS
    for key, value in raw.items():
        if isinstance(value, str) and len(value) > text_max:
            cut[f"raw.{key}"] = len(value)
            raw[key] = value[:text_max]
        elif isinstance(value, list) and (len(value) > items_max or any(
                isinstance(v, str) and len(v) > item_chars for v in value)):
            cut[f"raw.{key}"] = len(value)
            raw[key] = [v[:item_chars] if isinstance(v, str) else v for v in value[:items_max]]


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
