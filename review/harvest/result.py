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

    @property
    def skipped_by_filter(self) -> int:
        return sum(self.skipped.values())

    @property
    def records(self) -> int:
        """Records taken in (the PRISMA 'records identified' for this source)."""
        return self.added + self.updated + self.unchanged + self.duplicates

    def counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged,
            "duplicates": self.duplicates, "skipped_by_filter": self.skipped_by_filter,
            "repeated": self.repeated, "not_papers": self.not_papers, "failed": self.failed,
            "pdf_unresolved": self.pdf_unresolved, "records": self.records,
        }
        out.update({f"skipped_{k}": v for k, v in sorted(self.skipped.items())})
        out.update({f"duplicate_{k}": v for k, v in sorted(self.duplicate_reasons.items())})
        return out

    def summary(self) -> str:
        """The one-line summary the command prints."""
        text = (f"harvest {self.source}: {self.added} added, {self.updated} updated, "
                f"{self.unchanged} unchanged, {self.duplicates} duplicates, "
                f"{self.skipped_by_filter} skipped by filter")
        if self.pdf_unresolved:
            text += f", {self.pdf_unresolved} without a PDF URL"
        if self.failed:
            text += f", {self.failed} failed"
        if self.run_id is not None:
            text += f" (run {self.run_id})"
        return text

    def note_failure(self, item: str, reason: str) -> None:
        self.failed += 1
        if len(self.failures) < 100:
            self.failures.append(f"{item}: {reason}")
