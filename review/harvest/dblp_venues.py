"""The DBLP venue table: which streams, which years, and which TOCs are the main conference.

Why a data file: the scope of a review is a research decision, not code. A user widens
or narrows it (another venue, a workshop TOC, an end year) by editing TOML.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review.errors import ConfigError
from review.settings import Settings

BUNDLED = Path(__file__).with_name("dblp_venues.toml")
_TOC_URL = re.compile(r"^(?:https?://[^/]+/)?db/(.+)/([^/]+)\.(?:html|bht)(?:#.*)?$")


@dataclass(frozen=True)
class TocRange:
    first: int
    last: int | None
    names: tuple[str, ...]
    every: int = 1  # 2 for a biennial conference (IJCAI until 2015)

    def holds(self, year: int) -> bool:
        return self.first <= year and (self.last is None or year <= self.last) and (year - self.first) % self.every == 0


@dataclass
class Venue:
    id: str
    name: str
    stream: str  # "conf/nips"
    from_year: int
    to_year: int | None = None
    tocs: list[TocRange] = field(default_factory=list)

    def covers(self, year: int) -> bool:
        return self.from_year <= year and (self.to_year is None or year <= self.to_year)

    @staticmethod
    def year_in(toc_name: str) -> int | None:
        digits = re.search(r"(\d{4})", toc_name)
        return int(digits.group(1)) if digits else None

    def toc_names(self, year: int) -> list[str]:
        """Main-conference TOC names for one year (empty when the year is out of range)."""
        if not self.covers(year):
            return []
        out: list[str] = []
        for rng in self.tocs:
            if rng.holds(year):
                out.extend(name.format(year=year) for name in rng.names)
        return out

    def has_proceedings(self, year: int) -> bool:
        """True when the table names a main TOC for this year (no IJCAI 2004: not a gap)."""
        return bool(self.toc_names(year))

    def toc_query(self, name: str) -> str:
        return f"toc:db/{self.stream}/{name}.bht:"

    def main_toc_year(self, toc_name: str) -> int | None:
        """The year whose main TOC is `toc_name`, or None if it is not a main TOC."""
        year = self.year_in(toc_name)
        return year if year is not None and toc_name in self.toc_names(year) else None


def toc_of(url: str | None) -> tuple[str, str] | None:
    """(stream, toc name) from a dump record's `<url>db/conf/nips/nips2019.html#X</url>`."""
    if not url:
        return None
    m = _TOC_URL.match(url.strip())
    return (m.group(1), m.group(2)) if m else None


def load_venues(path: Path | str | None = None) -> list[Venue]:
    """Read a venue table, naming the file and the entry when something is wrong."""
    path = Path(path) if path else BUNDLED
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("venue table not found", item=str(path), hint="see harvest.dblp_venues") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"venue table is not valid TOML: {exc}", item=str(path)) from None
    venues: list[Venue] = []
    for i, entry in enumerate(data.get("venue", [])):
        where = f"{path}: venue #{i + 1}"
        try:
            tocs = [_toc_range(t) for t in entry["tocs"]]
            venue = Venue(id=str(entry["id"]), name=str(entry.get("name", entry["id"])),
                          stream=str(entry["stream"]).strip("/"), from_year=int(entry["from_year"]),
                          to_year=int(entry["to_year"]) if "to_year" in entry else None, tocs=tocs)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"bad entry ({type(exc).__name__}: {exc}); needs id, stream, from_year, "
                              "tocs = [{from, names}] (optional to, every)", item=where) from None
        venues.append(venue)
    if not venues:
        raise ConfigError("venue table lists no [[venue]]", item=str(path))
    return venues


def _toc_range(t: dict[str, Any]) -> TocRange:
    every = int(t.get("every", 1))
    if every < 1:
        raise ValueError(f"every must be 1 or more, not {every}")
    names = t["names"]
    if isinstance(names, str) or not names:
        raise ValueError("names must be a non-empty list of TOC names")
    return TocRange(int(t["from"]), int(t["to"]) if "to" in t else None, tuple(str(n) for n in names), every)


def venues_for(settings: Settings, only: list[str] | None = None) -> list[Venue]:
    """The configured venue table, optionally narrowed to some venue ids."""
    path = settings.resolve(settings.harvest.dblp_venues) if settings.harvest.dblp_venues else None
    venues = load_venues(path)
    if only:
        wanted = {v.lower() for v in only}
        unknown = wanted - {v.id for v in venues}
        if unknown:
            raise ConfigError(f"unknown DBLP venue(s): {', '.join(sorted(unknown))}",
                              hint=f"the venue table has: {', '.join(v.id for v in venues)}")
        venues = [v for v in venues if v.id in wanted]
    return venues
