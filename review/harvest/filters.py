"""The record filters every harvester applies: first year, cut-off date, venues.

Why one class: the ACL and DBLP harvests must leave out the same things for the same
settings, and the run row must say exactly which filter was used.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from review.errors import ConfigError
from review.harvest.records import HarvestRecord, month_number
from review.settings import HarvestSettings


def parse_date(value: date | str | None, item: str, what: str = "date") -> date | None:
    """A date from 'YYYY-MM-DD' (empty = none), naming the setting and the bad value otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise ConfigError(f"{what} is not a date (YYYY-MM-DD): {value!r}", item=item) from None


def parse_cutoff(value: date | str | None) -> date | None:
    """A cut-off date from 'YYYY-MM-DD' (empty = none), naming the bad value otherwise."""
    return parse_date(value, "harvest.cutoff", "cut-off")


@dataclass
class RecordFilter:
    """`rejects(record)` returns the reason a record is left out, or None to keep it.

    The cut-off compares the publication month (the first of the month; January when
    only the year is known): a record published on or after the cut-off is left out.
    Venue include keeps a record when any of its venues is listed; exclude drops it when
    any of its venues is listed.
    """

    from_year: int | None = None
    cutoff: date | None = None
    include: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, hs: HarvestSettings, *, from_year: int | None = None, cutoff: date | str | None = None,
                      include: list[str] | None = None, exclude: list[str] | None = None) -> RecordFilter:
        return cls(
            from_year=hs.from_year if from_year is None else from_year,
            cutoff=parse_cutoff(hs.cutoff if cutoff is None else cutoff),
            include=frozenset(v.lower() for v in (hs.venues_include if include is None else include)),
            exclude=frozenset(v.lower() for v in (hs.venues_exclude if exclude is None else exclude)),
        )

    def rejects(self, record: HarvestRecord) -> str | None:
        if self.from_year and (record.year is None or record.year < self.from_year):
            return "year"
        if self.cutoff and record.year is not None:
            published = date(record.year, month_number(record.month) or 1, 1)
            if published >= self.cutoff:
                return "cutoff"
        venues = {v.lower() for v in (record.venues or ([record.venue] if record.venue else []))}
        if self.include and not venues & self.include:
            return "venue"
        if self.exclude and venues & self.exclude:
            return "venue"
        return None

    def describe(self) -> dict[str, Any]:
        return {"from_year": self.from_year, "cutoff": self.cutoff.isoformat() if self.cutoff else None,
                "venues_include": sorted(self.include), "venues_exclude": sorted(self.exclude)}
