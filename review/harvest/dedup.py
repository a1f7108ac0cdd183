"""Find the paper another source already holds for a new record (PRISMA duplicates).

Why here and not in SQL constraints: the same work has different ids in each source, so
a match is a judgment: first the DOI, then the normalized title with the same year. A
record is only matched to a paper that has no record from the record's own source yet:
two records of one source are two papers by that source's own definition.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Paper, SourceRecord
from review.harvest.records import HarvestRecord, normalize_doi

REASON_DOI = "doi"
REASON_TITLE_YEAR = "title+year"


@dataclass
class Candidate:
    paper_id: int
    doi: str | None
    title_key: str | None
    year: int | None


class DuplicateFinder:
    """Looks up, for a batch of new records of one source, papers from other sources."""

    def __init__(self, session: Session, source: str):
        self.session = session
        self.source = source
        self._claimed: set[int] = set()  # papers matched earlier in this harvest

    def match(self, records: Iterable[HarvestRecord]) -> dict[str, tuple[int, str]]:
        """`{source_id: (paper_id, reason)}` for the records that duplicate another source's paper."""
        records = list(records)
        dois = {d for d in (normalize_doi(r.doi) for r in records) if d}
        keys = {k for k in (r.title_key for r in records) if k}
        if not dois and not keys:
            return {}
        cols = (Paper.id, Paper.doi_key, Paper.title_key, Paper.year)  # DOIs compare in lower case
        found: dict[int, Candidate] = {}
        for chunk in _chunks(sorted(dois), 500):
            for row in self.session.execute(select(*cols).where(Paper.doi_key.in_(chunk))):
                found[row.id] = Candidate(row.id, row.doi_key, row.title_key, row.year)
        for chunk in _chunks(sorted(keys), 500):
            for row in self.session.execute(select(*cols).where(Paper.title_key.in_(chunk))):
                found[row.id] = Candidate(row.id, row.doi_key, row.title_key, row.year)
        if not found:
            return {}
        own: set[int] = set()
        for chunk in _chunks(sorted(found), 500):
            own.update(self.session.scalars(
                select(SourceRecord.paper_id).where(SourceRecord.paper_id.in_(chunk),
                                                    SourceRecord.source == self.source)))
        by_doi: dict[str, list[int]] = {}
        by_title: dict[tuple[str, int | None], list[int]] = {}
        for cand in sorted(found.values(), key=lambda c: c.paper_id):
            if cand.paper_id in own:
                continue
            if cand.doi:
                by_doi.setdefault(cand.doi, []).append(cand.paper_id)
            if cand.title_key:
                by_title.setdefault((cand.title_key, cand.year), []).append(cand.paper_id)
        matches: dict[str, tuple[int, str]] = {}
        for rec in records:
            doi = normalize_doi(rec.doi)
            hit: tuple[int, str] | None = None
            pid = self._first_free(by_doi.get(doi, []) if doi else [])
            if pid is not None:
                hit = (pid, REASON_DOI)
            elif rec.title_key:
                pid = self._first_free(by_title.get((rec.title_key, rec.year), []))
                if pid is not None:
                    hit = (pid, REASON_TITLE_YEAR)
            if hit is not None:
                self._claimed.add(hit[0])
                matches[rec.source_id] = hit
        return matches

    def _first_free(self, paper_ids: list[int]) -> int | None:
        return next((pid for pid in paper_ids if pid not in self._claimed), None)


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
