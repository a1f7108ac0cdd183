"""Papers With Code links dumps: reading them and matching their records to our papers.

Papers With Code shut down in July 2025; its archived `links-between-papers-and-code`
dumps are what users have. Each record links one paper (paper_url, paper_title,
paper_arxiv_id, paper_url_abs, paper_url_pdf) to one repository (repo_url) with
is_official, mentioned_in_paper, mentioned_in_github and framework. The dump has no venue,
year or authors; its companion `papers-with-abstracts` dump (paper_url, arxiv_id, title,
abstract, url_abs, url_pdf, proceeding, authors, tasks, date, methods) has the date and
the authors, and `read_paper_facts` takes them from it. Matching lives in `pwc_match.py`.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from review.errors import InputFileError

FIELDS = ("paper_url", "paper_title", "paper_arxiv_id", "paper_url_abs", "paper_url_pdf", "repo_url",
          "is_official", "mentioned_in_paper", "mentioned_in_github", "framework")
REQUIRED = ("repo_url", "paper_title")
ANTHOLOGY_ID = re.compile(r"(?:aclanthology\.org|aclweb\.org/anthology|10\.18653/v1)/+"
                          r"(?:(?:[A-Z]/[A-Z]\d{2}/)?)([A-Z]\d{2}-\d{4}|\d{4}\.[a-z0-9]+(?:-[a-z0-9]+)*\.\d+)", re.I)
DOI = re.compile(r"(?:doi\.org/|doi:\s*)(10\.\d{4,9}/[^\s?#]+)", re.I)
ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/((?:\d{4}\.\d{4,5})|(?:[a-z-]+(?:\.[A-Z]{2})?/\d{7}))", re.I)


def arxiv_key(value: str | None) -> str | None:
    """`arXiv:1706.03762v5` -> `1706.03762`."""
    if not value:
        return None
    v = str(value).strip().lower()
    v = re.sub(r"^(?:arxiv:|https?://arxiv\.org/(?:abs|pdf)/)", "", v)
    v = re.sub(r"(?:\.pdf)?$", "", v)
    v = re.sub(r"v\d+$", "", v)
    return v or None


def title_key(title: str | None) -> str | None:
    """Case, accents, LaTeX braces and punctuation removed; words single-spaced."""
    if not title:
        return None
    t = unicodedata.normalize("NFKD", str(title))
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = re.sub(r"[^a-z0-9]+", " ", t).strip()
    return t or None


def anthology_key(*values: str | None) -> str | None:
    for v in values:
        m = ANTHOLOGY_ID.search(v or "")
        if m:
            return m.group(1).lower()
    return None


def doi_key(*values: str | None) -> str | None:
    for v in values:
        m = DOI.search(v or "")
        if m:
            return m.group(1).lower().rstrip(".")
    return None


@dataclass
class DumpStats:
    records: int = 0
    malformed: int = 0


def read_dump(path: str | Path, stats: DumpStats | None = None) -> Iterator[dict[str, Any]]:
    """Records of a links dump (.json array, .json.gz, JSON lines, or .parquet).

    A file that is not a dump raises InputFileError naming the file and the reason; a
    single malformed record is counted in `stats.malformed` and skipped.
    """
    p = Path(path)
    stats = stats if stats is not None else DumpStats()
    if not p.is_file():
        raise InputFileError("links dump not found", item=str(p))
    name = p.name.lower()
    if name.endswith(".parquet"):
        rows: Iterable[Any] = _parquet(p)
    else:
        rows = _json(p, gz=name.endswith(".gz"))
    first = True
    for row in rows:
        if first:
            first = False
            if isinstance(row, dict):
                missing = [f for f in REQUIRED if f not in row]
                if missing:
                    raise InputFileError(f"not a Papers With Code links dump: records lack '{missing[0]}'", item=str(p),
                                         hint=f"expected fields: {', '.join(FIELDS)}")
        if not isinstance(row, dict) or not row.get("repo_url"):
            stats.malformed += 1
            continue
        stats.records += 1
        yield {f: row.get(f) for f in FIELDS}


def _json(p: Path, gz: bool) -> Iterator[Any]:
    opener = gzip.open if gz else open
    try:
        with opener(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            head = fh.read(1)
            while head and head.isspace():
                head = fh.read(1)
            if head == "[":
                data = json.loads(head + fh.read())
                yield from data
                return
            if head == "{":  # JSON lines: one record per line
                for line in _chain_first(head + fh.readline(), fh):
                    if line.strip():
                        try:
                            yield json.loads(line)
                        except ValueError:
                            yield None  # counted as malformed
                return
            raise InputFileError("not a JSON array or JSON lines file", item=str(p))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read: {exc}", item=str(p)) from None
    except json.JSONDecodeError as exc:
        raise InputFileError(f"not valid JSON: {exc}", item=str(p)) from None


def _chain_first(first: str, rest: Iterable[str]) -> Iterator[str]:
    yield first
    yield from rest


def _parquet(p: Path) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(p)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputFileError(f"not a readable Parquet file: {exc}", item=str(p)) from None
    for batch in table.to_batches(10_000):
        yield from batch.to_pylist()


PAPER_FIELDS = ("paper_url", "title", "date", "authors")


@dataclass(frozen=True)
class PaperFacts:
    """What the papers-with-abstracts dump adds to a link record: its year and first author."""

    year: int | None
    first_author: str | None


def read_paper_facts(path: str | Path, wanted: set[str] | None = None) -> dict[str, PaperFacts]:
    """paper_url -> PaperFacts from a papers-with-abstracts dump (same formats as the links dump).

    Only the paper_urls in `wanted` are kept when given: the dump has ~500,000 papers and
    only those of the links dump matter.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError("papers dump not found", item=str(p))
    name = p.name.lower()
    rows: Iterable[Any] = _parquet(p) if name.endswith(".parquet") else _json(p, gz=name.endswith(".gz"))
    out: dict[str, PaperFacts] = {}
    for i, row in enumerate(rows):
        if i == 0 and isinstance(row, dict) and ("paper_url" not in row or "title" not in row):
            raise InputFileError("not a Papers With Code papers-with-abstracts dump: records lack "
                                 f"'{'paper_url' if 'paper_url' not in row else 'title'}'", item=str(p),
                                 hint=f"expected fields include: {', '.join(PAPER_FIELDS)}")
        if not isinstance(row, dict) or not row.get("paper_url"):
            continue
        url = str(row["paper_url"])
        if wanted is not None and url not in wanted:
            continue
        date = str(row.get("date") or "")
        authors = row.get("authors") or []
        first = authors[0] if isinstance(authors, list) and authors else authors if isinstance(authors, str) else None
        out[url] = PaperFacts(int(date[:4]) if date[:4].isdigit() else None, str(first) if first else None)
    return out
