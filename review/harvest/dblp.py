"""`review harvest dblp`: main-conference papers of the venue table, from the API or the dump.

Library entry point: `harvest_dblp(db, settings, run=..., mode="api"|"dump", ...)`.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from review.db.session import Database
from review.errors import ConfigError, FetchError
from review.harvest.dblp_record import SOURCE, to_record
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


def harvest_dblp(db: Database, settings: Settings, *, run: RunRecorder | None = None, mode: str | None = None,
                 venues: list[str] | None = None, dump: Path | str | None = None, dtd: Path | str | None = None,
                 from_year: int | None = None, cutoff: date | str | None = None,
                 venues_include: list[str] | None = None, venues_exclude: list[str] | None = None,
                 client: HttpClient | None = None) -> HarvestResult:
    """Harvest the DBLP venues (all of the venue table, or the ids in `venues`).

    mode "api" queries the search API at `harvest.dblp_api_url` TOC by TOC; "dump"
    streams the dblp.xml(.gz) at `dump` (default `harvest.dblp_dump`). Per-TOC fetch
    failures are recorded (`result.failed`) and the harvest goes on with the rest.
    """
    hs = settings.harvest
    mode = (mode or hs.dblp_mode).lower()
    if mode not in MODES:
        raise ConfigError(f"unknown DBLP mode {mode!r} (use api or dump)", item="harvest.dblp_mode")
    table = venues_for(settings, venues)
    record_filter = RecordFilter.from_settings(hs, from_year=from_year, cutoff=cutoff,
                                               include=venues_include, exclude=venues_exclude)
    arguments: dict[str, Any] = {"mode": mode, "venues": [v.id for v in table], **record_filter.describe()}
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
    with harvest_run(db, "harvest dblp", arguments, run, SOURCE) as handle:
        handle.recorder.signature.update({"dblp_mode": mode})
        with RecordStore(db, handle.result, run_id=handle.id) as store:
            if mode == "dump":
                _from_dump(handle, store, table, record_filter, dump_path, dtd_path)  # type: ignore[arg-type]
            else:
                own = client is None
                client = client or HttpClient(settings.http)
                try:
                    _from_api(handle, store, table, record_filter, client, hs.dblp_api_url, hs.dblp_page_size,
                              hs.dblp_delay)
                finally:
                    if own:
                        client.close()
    return handle.result


def _keep(handle: HarvestRun, store: RecordStore, record_filter: RecordFilter, pub: Any, venue: Venue) -> None:
    result = handle.result
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


def _years(venue: Venue, record_filter: RecordFilter) -> range:
    first = max(venue.from_year, record_filter.from_year or venue.from_year)
    last = date.today().year
    if venue.to_year is not None:
        last = min(last, venue.to_year)
    if record_filter.cutoff is not None:
        last = min(last, record_filter.cutoff.year)
    return range(first, last + 1)


def _from_api(handle: HarvestRun, store: RecordStore, table: list[Venue], record_filter: RecordFilter,
              client: HttpClient, base: str, page_size: int, delay: float) -> None:
    from review.harvest.dblp_api import fetch_toc

    tocs = [(v, name) for v in table for year in _years(v, record_filter) for name in v.toc_names(year)]
    result = handle.result
    with progress(len(tocs), "harvest dblp (api)") as bar:
        for venue, name in tocs:
            try:
                for pub in fetch_toc(client, base, venue, name, page_size=page_size, delay=delay):
                    if pub is None:
                        result.not_papers += 1
                    else:
                        _keep(handle, store, record_filter, pub, venue)
            except FetchError as exc:
                result.note_failure(venue.toc_query(name), f"{exc.reason or 'fetch failed'}: {exc.message}")
                log.error("%s: %s; the other TOCs go on", venue.toc_query(name), exc.message)
            except ValueError as exc:
                result.note_failure(venue.toc_query(name), f"bad hit: {exc}")
                log.error("%s: bad hit (%s)", venue.toc_query(name), exc)
            bar.advance()
            handle.checkpoint()
            if delay > 0:
                client.sleep(delay)


def _from_dump(handle: HarvestRun, store: RecordStore, table: list[Venue], record_filter: RecordFilter,
               dump: Path, dtd: Path | None) -> None:
    from review.harvest.dblp_dump import iter_dump

    result = handle.result
    with progress(None, "harvest dblp (dump)") as bar:
        for outcome, venue, pub in iter_dump(dump, dtd, table):
            if outcome == "paper" and pub is not None and venue is not None:
                _keep(handle, store, record_filter, pub, venue)
            elif outcome == "not_paper":
                result.not_papers += 1
            else:
                result.skipped[outcome] += 1
            bar.advance()
            handle.checkpoint()
