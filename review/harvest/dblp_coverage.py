"""Which venue-years of a DBLP harvest came back empty when they should not have.

Why a check of its own: a wrong table-of-contents name is not an error anywhere else. DBLP
answers a query for a TOC it does not have with zero hits, and in the dump the papers of
that TOC only look like "not main conference". Both read as a quiet, successful harvest
that lost a whole year (NeurIPS 2018-2019 under `neurips{year}`). A year is worth a warning
when its TOC query returned nothing at all, or when it has no papers while a neighbouring
year of the same venue has some. The current year and later ones may simply not be
published yet: they are not warned about.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from review.harvest.dblp_venues import Venue
from review.harvest.result import HarvestResult


@dataclass
class Coverage:
    """What the harvest expected and what it saw, per (venue id, year)."""

    expected: dict[str, list[int]] = field(default_factory=dict)  # venue -> years with main TOCs, in order
    silent: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # TOC queries with no hit at all
    failed: set[tuple[str, int]] = field(default_factory=set)  # TOCs that could not be fetched

    def expect(self, venue: Venue, years: Iterable[int]) -> None:
        self.expected[venue.id] = [y for y in years if venue.has_proceedings(y)]

    def note_silent(self, venue: Venue, year: int, query: str) -> None:
        self.silent.setdefault((venue.id, year), []).append(query)


def coverage_warnings(result: HarvestResult, coverage: Coverage, this_year: int) -> list[str]:
    """One warning per venue-year that looks lost, naming its neighbours' counts."""
    warnings: list[str] = []
    for venue, years in coverage.expected.items():
        for i, year in enumerate(years):
            if (venue, year) in coverage.failed or result.found[(venue, year)] > 0 or year >= this_year:
                continue
            neighbours = [y for y in (years[i - 1] if i else None, years[i + 1] if i + 1 < len(years) else None)
                          if y is not None and result.found[(venue, y)] > 0]
            silent = coverage.silent.get((venue, year))
            if not silent and not neighbours:
                continue
            why = (f"{', '.join(silent)} returned nothing at all" if silent
                   else "no record of its main table of contents")
            around = " and ".join(f"{y} has {result.found[(venue, y)]:,}" for y in neighbours)
            warnings.append(f"{venue} {year}: no papers ({why})" + (f", while {around}" if around else "")
                            + "; check this year's TOC name in the venue table")
    return warnings


def empty_venues(result: HarvestResult, coverage: Coverage, this_year: int) -> list[str]:
    """Dump mode: a venue none of whose past years has a single main-conference record."""
    out = []
    for venue, years in coverage.expected.items():
        past = [y for y in years if y < this_year]
        if past and not any(result.found[(venue, y)] for y in past):
            out.append(f"{venue} {past[0]}-{past[-1]}: no main-conference record in the dump for any year; "
                       "check the venue's stream and TOC names")
    return out
