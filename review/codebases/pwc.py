"""Papers With Code links dumps: reading them and matching their records to our papers.

Papers With Code shut down in July 2025; its archived `links-between-papers-and-code`
dumps are what users have. Each record links one paper (paper_url, paper_title,
paper_arxiv_id, paper_url_abs, paper_url_pdf) to one repository (repo_url) with
is_official, mentioned_in_paper, mentioned_in_github and framework. The dump has no
venue or year, so a record is matched to our papers by identifier first (arXiv id,
ACL Anthology id from the abstract/PDF URL, DOI) and only then by normalized title, and a
title shared by two of our papers matches neither (counted as ambiguous, never guessed).
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
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


@dataclass
class PaperKeys:
    id: int
    ident: str
    title: str | None
    doi: str | None
    arxiv_id: str | None


@dataclass
class PaperIndex:
    """Our papers, findable by every identifier a dump record may carry."""

    by_arxiv: dict[str, int] = field(default_factory=dict)
    by_anthology: dict[str, int] = field(default_factory=dict)
    by_doi: dict[str, int] = field(default_factory=dict)
    by_title: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def build(cls, papers: Iterable[PaperKeys]) -> PaperIndex:
        idx = cls()
        for p in papers:
            if (a := arxiv_key(p.arxiv_id)) is not None:
                idx.by_arxiv.setdefault(a, p.id)
            if re.fullmatch(r"[A-Za-z]\d{2}-\d{4}|\d{4}\.[a-z0-9]+(?:-[a-z0-9]+)*\.\d+", p.ident or ""):
                idx.by_anthology.setdefault(p.ident.lower(), p.id)
            if p.doi:
                d = p.doi.lower().removeprefix("https://doi.org/").removeprefix("doi:")
                idx.by_doi.setdefault(d, p.id)
                if (ak := anthology_key(d)) is not None:
                    idx.by_anthology.setdefault(ak, p.id)
            if (t := title_key(p.title)) is not None and len(t) >= 12:
                if p.id not in idx.by_title[t]:
                    idx.by_title[t].append(p.id)
        return idx

    def match(self, rec: dict[str, Any]) -> tuple[int | None, str]:
        """(paper id, how) where how is arxiv|anthology|doi|title, or (None, unmatched|ambiguous_title)."""
        urls = (rec.get("paper_url_abs"), rec.get("paper_url_pdf"))
        a = arxiv_key(rec.get("paper_arxiv_id"))
        if a is None:
            for u in urls:
                m = ARXIV_URL.search(u or "")
                if m:
                    a = arxiv_key(m.group(1))
                    break
        if a and a in self.by_arxiv:
            return self.by_arxiv[a], "arxiv"
        ak = anthology_key(*urls)
        if ak and ak in self.by_anthology:
            return self.by_anthology[ak], "anthology"
        d = doi_key(*urls)
        if d and d in self.by_doi:
            return self.by_doi[d], "doi"
        t = title_key(rec.get("paper_title"))
        if t and t in self.by_title:
            ids = self.by_title[t]
            if len(ids) == 1:
                return ids[0], "title"
            return None, "ambiguous_title"
        return None, "unmatched"
