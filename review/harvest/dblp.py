"""`review harvest dblp`: main-conference papers of the venue table, from the API or the dump.

Library entry point: `harvest_dblp(db, settings, run=..., mode="api"|"dump", ...)`.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from review.db.session import Database
from review.errors import ConfigError, FetchError, InputFileError, ItemsFailed
from review.harvest.dblp_coverage import Coverage, coverage_warnings, empty_venues
from review.harvest.dblp_record import SOURCE, DblpPublication, to_record
from review.harvest.dblp_venues import Venue, venues_for
from review.harvest.filters import RecordFilter
from review.harvest.result import HarvestResult
from review.harvest.runner import HarvestRun, harvest_run
from review.harvest.store import RecordStore
from review.http import HttpClient
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("harvest.dblp")

MODES = ("api", "dump")


class CoverageIncomplete(ItemsFailed):
    """`--strict`: the harvest finished, but some venue-years came back empty.

    Raised inside the run, so the run row says `failed` with the reasons; `result` keeps
    the counts for the command's summary.
    """

    def __init__(self, result: HarvestResult):
        shown = "; ".join(result.warnings[:3]) + (" ..." if len(result.warnings) > 3 else "")
        super().__init__(f"{len(result.warnings)} DBLP coverage warning(s): {shown}",
                         hint="fix the TOC names in the venue table (harvest.dblp_venues) and rerun")
        self.result = result


def harvest_dblp(db: Database, settings: Settings, *, run: RunRecorder | None = None, mode: str | None = None,
                 venues: list[str] | None = None, dump: Path | str | None = None, dtd: Path | str | None = None,
                 from_year: int | None = None, cutoff: date | str | None = None,
                 venues_include: list[str] | None = None, venues_exclude: list[str] | None = None,
                 client: HttpClient | None = None, strict: bool = False) -> HarvestResult:
    """Harvest the DBLP venues (all of the venue table, or the ids in `venues`).

    mode "api" queries the search API at `harvest.dblp_api_url` TOC by TOC; "dump"
    streams the dblp.xml(.gz) at `dump` (default `harvest.dblp_dump`). Per-TOC fetch
    failures are recorded (`result.failed`) and the harvest goes on with the rest.
    Venue-years that came back empty are logged as warnings (`result.warnings`); with
    `strict` they also fail the run (`CoverageIncomplete`).
    """
    hs = settings.harvest
    mode = (mode or hs.dblp_mode).lower()
    if mode not in MODES:
        raise ConfigError(f"unknown DBLP mode {mode!r} (use api or dump)", item="harvest.dblp_mode")
    table = venues_for(settings, venues)
    record_filter = RecordFilter.from_settings(hs, from_year=from_year, cutoff=cutoff,
                                               include=venues_include, exclude=venues_exclude)
    arguments: dict[str, Any] = {"mode": mode, "venues": [v.id for v in table], **record_filter.describe(),
                                 "strict": strict}
    dump_path = dtd_path = None
    if mode == "dump":
        if not (dump or hs.dblp_dump):
            raise ConfigError("dump mode needs the path of dblp.xml.gz", item="harvest.dblp_dump",
                              hint="pass --dump PATH or set harvest.dblp_dump")
        dump_path = Path(dump) if dump else settings.resolve(hs.dblp_dump)
        dtd_path = Path(dtd) if dtd else (settings.resolve(hs.dblp_dtd) if hs.dblp_dtd else None)
        arguments["dump"] = str(dump_path)
    else:
        arguments["api"] = hs.dblp_api_url
    coverage = Coverage()
    for venue in table:
        coverage.expect(venue, _years(venue, record_filter))
    with harvest_run(db, "harvest dblp", arguments, run, SOURCE) as handle:
        handle.recorder.signature.update({"dblp_mode": mode})
        for venue_id, years in coverage.expected.items():  # table order; an empty year shows as 0
            for year in years:
                handle.result.found[(venue_id, year)] += 0
                handle.result.kept[(venue_id, year)] += 0
        with RecordStore(db, handle.result, run_id=handle.id, counts=handle.extra) as store:
            if mode == "dump":
                _from_dump(handle, store, table, record_filter, dump_path, dtd_path)  # type: ignore[arg-type]
            else:
                own = client is None
                client = client or HttpClient(settings.http)
                try:
                    _from_api(handle, store, table, record_filter, client, coverage, hs.dblp_api_url,
                              hs.dblp_page_size, hs.dblp_delay)
                finally:
                    if own:
                        client.close()
        _judge_coverage(handle.result, coverage, mode)
        if strict and handle.result.warnings:
            raise CoverageIncomplete(handle.result)
    return handle.result


def _judge_coverage(result: HarvestResult, coverage: Coverage, mode: str) -> None:
    this_year = date.today().year
    result.warnings.extend(coverage_warnings(result, coverage, this_year))
    if mode == "dump":
        result.warnings.extend(empty_venues(result, coverage, this_year))
    for warning in result.warnings:
        log.warning("DBLP coverage: %s", warning)


def _keep(handle: HarvestRun, store: RecordStore, record_filter: RecordFilter, pub: DblpPublication, venue: Venue,
          year: int) -> None:
    result = handle.result
    result.found[(venue.id, year)] += 1
    try:
        record = to_record(pub, venue)
    except (ValueError, TypeError) as exc:
        result.note_failure(pub.key, str(exc))
        log.error("%s: unusable DBLP record (%s)", pub.key, exc)
        return
    reason = record_filter.rejects(record)
    if reason:
        result.skipped[reason] += 1
    elif not record.title:
        result.note_failure(record.source_id, "no title")
        log.error("%s: no title; record left out", record.source_id)
    else:
        store.add(record)
        result.kept[(venue.id, year)] += 1


def _years(venue: Venue, record_filter: RecordFilter) -> range:
    """The venue's years worth asking for: none past the cut-off.

    A DBLP record has a year but no month, so the filter dates it January 1st: a cut-off
    on January 1st leaves out its whole year, and that year's TOCs are not queried.
    """
    first = max(venue.from_year, record_filter.from_year or venue.from_year)
    last = date.today().year
    if venue.to_year is not None:
        last = min(last, venue.to_year)
    cutoff = record_filter.cutoff
    if cutoff is not None:
        last = min(last, cutoff.year - 1 if (cutoff.month, cutoff.day) == (1, 1) else cutoff.year)
    return range(first, last + 1)


def _from_api(handle: HarvestRun, store: RecordStore, table: list[Venue], record_filter: RecordFilter,
              client: HttpClient, coverage: Coverage, base: str, page_size: int, delay: float) -> None:
    from review.harvest.dblp_api import fetch_toc

    tocs = [(v, year, name) for v in table for year in _years(v, record_filter) for name in v.toc_names(year)]
    with progress(len(tocs), "harvest dblp (api)") as bar:
        for venue, year, name in tocs:
            _one_toc(handle, store, record_filter, coverage,
                     fetch_toc(client, base, venue, name, page_size=page_size, delay=delay), venue, year, name)
            bar.advance()
            handle.checkpoint()
            if delay > 0:
                client.sleep(delay)


def _one_toc(handle: HarvestRun, store: RecordStore, record_filter: RecordFilter, coverage: Coverage,
             hits: Any, venue: Venue, year: int, name: str) -> None:
    from review.harvest.dblp_api import parse_hit

    result = handle.result
    query = venue.toc_query(name)
    seen = 0
    try:
        for hit in hits:
            seen += 1
            try:
                pub = parse_hit(hit, name)
            except ValueError as exc:
                key = (hit.get("info") or {}).get("key") if isinstance(hit.get("info"), dict) else None
                result.note_failure(f"{query} {key or f'hit #{seen}'}", f"bad hit: {exc}")
                log.error("%s: bad hit #%d (%s); the other hits go on", query, seen, exc)
                continue
            if pub is None:
                result.not_papers += 1
            else:
                _keep(handle, store, record_filter, pub, venue, year)
    except FetchError as exc:
        coverage.failed.add((venue.id, year))
        result.note_failure(query, f"{exc.reason or 'fetch failed'}: {exc.message}")
        log.error("%s: %s; the other TOCs go on", query, exc.message)
        return
    if seen == 0:
        coverage.note_silent(venue, year, query)


def _from_dump(handle: HarvestRun, store: RecordStore, table: list[Venue], record_filter: RecordFilter,
               dump: Path, dtd: Path | None) -> None:
    from review.harvest.dblp_dump import iter_dump

    result = handle.result
    with progress(None, "harvest dblp (dump)") as bar:
        try:
            _read_dump(handle, store, record_filter, iter_dump(dump, dtd, table), bar)
        except InputFileError as exc:  # the dump broke off: every record before the fault is complete, keep it
            store.flush()
            result.note_failure(str(dump), exc.message)
            raise


def _read_dump(handle: HarvestRun, store: RecordStore, record_filter: RecordFilter, items: Any, bar: Any) -> None:
    """Count and keep the dump's records one by one (each is written through the store)."""
    result = handle.result
    for item in items:
        if item.outcome == "paper" and item.pub is not None and item.venue is not None:
            year = item.venue.main_toc_year(item.toc or "")
            _keep(handle, store, record_filter, item.pub, item.venue, year if year is not None else 0)
        elif item.outcome == "not_paper":
            result.not_papers += 1
        else:
            result.skipped[item.outcome] += 1
            if item.outcome == "main_conference" and item.toc:
                result.other_tocs[item.toc] += 1
        bar.advance()
        handle.checkpoint()
