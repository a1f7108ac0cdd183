"""What one harvest did, as counts a run row and the PRISMA numbers can use directly."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class HarvestResult:
    """Counts of one harvest run.

    `added` new papers, `duplicates` records matched to a paper another source already
    had (stored as a second SourceRecord, not a second paper), `updated` records whose
    content changed since the last harvest, `unchanged` the rest; `skipped` holds the
    records left out by a filter, by reason (`year`, `cutoff`, `venue`, `main_conference`).

    Sources organised by venue and year (DBLP) also fill `found` (papers the source had
    in a venue's main proceedings of a year, before any filter) and `kept` (those taken
    in), `other_tocs` (records of a covered venue and year whose table of contents is not
    a main one, by TOC name) and `warnings` (years that came back empty: see
    `dblp_coverage`).
    """

    source: str
    run_id: int | None = None
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: int = 0
    repeated: int = 0  # the same record met twice in one harvest (counted once)
    not_papers: int = 0  # frontmatter, proceedings volumes: never papers
    failed: int = 0
    pdf_unresolved: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    duplicate_reasons: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # "item: reason", first ones only
    found: Counter[tuple[str, int]] = field(default_factory=Counter)  # (venue, year) -> papers found
    kept: Counter[tuple[str, int]] = field(default_factory=Counter)  # (venue, year) -> papers taken in
    other_tocs: Counter[str] = field(default_factory=Counter)  # TOC name -> records not main conference
    warnings: list[str] = field(default_factory=list)

    @property
    def skipped_by_filter(self) -> int:
        return sum(self.skipped.values())

    @property
    def records(self) -> int:
        """Records taken in (the PRISMA 'records identified' for this source)."""
        return self.added + self.updated + self.unchanged + self.duplicates

    def counts(self) -> dict[str, Any]:
        """Flat integer counts, as the run row stores them."""
        out: dict[str, Any] = {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged,
            "duplicates": self.duplicates, "skipped_by_filter": self.skipped_by_filter,
            "repeated": self.repeated, "not_papers": self.not_papers, "failed": self.failed,
            "pdf_unresolved": self.pdf_unresolved, "records": self.records,
        }
        out.update({f"skipped_{k}": v for k, v in sorted(self.skipped.items())})
        out.update({f"duplicate_{k}": v for k, v in sorted(self.duplicate_reasons.items())})
        for (venue, year), n in sorted(self.found.items()):
            out[f"found_{venue}_{year}"] = n
            out[f"kept_{venue}_{year}"] = self.kept[(venue, year)]
        out.update({f"not_main_{toc}": n for toc, n in sorted(self.other_tocs.items())})
        if self.warnings:
            out["coverage_warnings"] = len(self.warnings)
        return out

    def venue_years(self) -> dict[str, dict[str, dict[str, int]]]:
        """{venue: {year: {found, kept}}}: venues in the order first met (the venue table's), years in order."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for venue, _ in self.found:
            out.setdefault(venue, {})
        for venue, year in sorted(self.found, key=lambda vy: vy[1]):
            out[venue][str(year)] = {"found": self.found[(venue, year)], "kept": self.kept[(venue, year)]}
        return out

    def as_dict(self) -> dict[str, Any]:
        """What `--json` prints: the counts, the failures, and the per-venue-year detail."""
        out: dict[str, Any] = {"source": self.source, "run": self.run_id}
        out.update({k: v for k, v in self.counts().items()
                    if not k.startswith(("found_", "kept_", "not_main_"))})
        out["failures"] = self.failures
        if self.found:
            out["venue_years"] = self.venue_years()
        if self.other_tocs:
            out["not_main_conference"] = dict(self.other_tocs.most_common())
        if self.found or self.warnings:
            out["warnings"] = self.warnings
        return out

    def summary(self) -> str:
        """The one-line summary the command prints."""
        text = (f"harvest {self.source}: {self.added} added, {self.updated} updated, "
                f"{self.unchanged} unchanged, {self.duplicates} duplicates, "
                f"{self.skipped_by_filter} skipped by filter")
        if self.not_papers:
            text += f", {self.not_papers} not a paper"
        if self.pdf_unresolved:
            text += f", {self.pdf_unresolved} without a PDF URL"
        if self.failed:
            text += f", {self.failed} failed"
        if self.warnings:
            text += f", {len(self.warnings)} coverage warning{'s' if len(self.warnings) != 1 else ''}"
        if self.run_id is not None:
            text += f" (run {self.run_id})"
        return text

    def detail_lines(self, top: int = 8) -> list[str]:
        """Per-venue-year counts and the largest non-main TOCs, for people reading the output."""
        lines = []
        for venue, years in self.venue_years().items():
            cells = []
            for year, n in years.items():
                cells.append(f"{year} {n['found']:,}" + (f" ({n['kept']:,} kept)" if n["kept"] != n["found"] else ""))
            lines.append(f"  {venue}: " + ", ".join(cells))
        if self.other_tocs:
            shown = [f"{toc} \u00d7{n:,}" for toc, n in self.other_tocs.most_common(top)]
            more = len(self.other_tocs) - top
            lines.append("  not main conference: " + ", ".join(shown) + (f", {more} more TOCs" if more > 0 else ""))
        return lines

    def note_failure(self, item: str, reason: str) -> None:
        self.failed += 1
        if len(self.failures) < 100:
            self.failures.append(f"{item}: {reason}")
