"""`review harvest acl`: every paper of a local ACL Anthology data checkout as a record.

Why we parse the XML ourselves instead of using the `acl-anthology` PyPI library (1.3.4):
that library validates against the data format of its own release and refuses real
historical checkouts (every collection in our fixtures fails with "'urls' must only
contain non-local file references" on the volume `<url hash=...>`), it needs
`data/xml/schema.rnc`, and it builds the whole object model (people, events, sigs) when
we need a dozen flat fields per paper. Streaming each file volume by volume with lxml
reads old-style (U03-1001) and new-style (2025.newsum-main.1) ids alike, keeps memory
flat, and does 100k papers in well under the two-minute budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import IO, Any

from lxml import etree

from review.db.session import Database
from review.harvest.acl_files import CheckoutFiles, CommitFiles, VenueIndex
from review.harvest.filters import RecordFilter, parse_date
from review.harvest.git_update import GitTree, checkout_state, clone_or_pull, commit_before, is_clone
from review.harvest.pdf_urls import resolve_anthology_url
from review.harvest.records import HarvestRecord, clean_text
from review.harvest.result import HarvestResult
from review.harvest.runner import HarvestRun, harvest_run
from review.harvest.store import RecordStore
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("harvest.acl")

SOURCE = "acl"
SITE = "https://aclanthology.org"
OLD_STYLE = re.compile(r"^[A-Z]\d{2}$")
_OLD_STYLE_PAPER = re.compile(r"^[A-Z]\d{2}-\d{4}$")


def two_digit_volume(collection_id: str, volume: int) -> bool:
    """The Anthology's rule: the four digits after the dash of an old-style id are one volume
    digit and three paper digits (P02-1040), except for W collections, C69 and D19 volumes 5
    and up, which take two and two (W02-1001 is volume 10, paper 1; D19-5001 volume 50)."""
    return collection_id.startswith("W") or collection_id == "C69" or (collection_id == "D19" and volume >= 5)


def old_style_volume_id(collection_id: str, vol: str) -> str:
    if not vol.isdigit():
        return f"{collection_id}-{vol}"
    width = 2 if two_digit_volume(collection_id, int(vol)) else 1
    return f"{collection_id}-{int(vol):0{width}d}"


def old_style_paper_id(collection_id: str, vol: str, num: str, url_text: str | None) -> str:
    """The paper's `<url>` when it is an anthology id of this collection (the Anthology's own
    record of the id), else the id the Anthology's rule builds."""
    if url_text and _OLD_STYLE_PAPER.match(url_text) and url_text.startswith(f"{collection_id}-"):
        return url_text
    volume_id = old_style_volume_id(collection_id, vol)
    if not (vol.isdigit() and num.isdigit()):
        return f"{volume_id}{num}"
    width = 2 if two_digit_volume(collection_id, int(vol)) else 3
    return f"{volume_id}{int(num):0{width}d}"

def _text(elem: etree._Element | None) -> str | None:
    if elem is None:
        return None
    text = clean_text("".join(elem.itertext()))
    return text or None


def _person(elem: etree._Element) -> str:
    first = _text(elem.find("first")) or ""
    last = _text(elem.find("last")) or ""
    return f"{first} {last}".strip() or (_text(elem) or "")


def _status(elem: etree._Element | None, word: str) -> str | None:
    if elem is None:
        return None
    when = elem.get("date")
    why = _text(elem) or ""
    return f"{word}{' ' + when if when else ''}: {why}".rstrip(": ")


def parse_collection(path: Path | str | IO[bytes], venues: VenueIndex, name: str | None = None
                     ) -> Iterator[HarvestRecord | str]:
    """Yield one record per paper of one collection file (a path, or its bytes as a stream
    with its file `name`); frontmatter yields the string "frontmatter" so callers can count
    what is not a paper. Raises `etree.XMLSyntaxError` on a broken file (the caller records
    it and goes on with the next file)."""
    source = str(path) if isinstance(path, Path) else path
    collection_id = Path(name or str(path)).stem
    old_style = bool(OLD_STYLE.match(collection_id))
    context = etree.iterparse(source, events=("start", "end"), tag=("collection", "volume"),
                              no_network=True, resolve_entities=False, huge_tree=True)
    for event, elem in context:
        if elem.tag == "collection":
            if event == "start":
                collection_id = elem.get("id") or collection_id
                old_style = bool(OLD_STYLE.match(collection_id))
            continue
        if event != "end":
            continue
        yield from _volume_records(elem, collection_id, old_style, venues)
        elem.clear()
        parent = elem.getparent()
        while parent is not None and elem.getprevious() is not None:
            del parent[0]


def _volume_records(vol: etree._Element, collection_id: str, old_style: bool,
                    venues: VenueIndex) -> Iterator[HarvestRecord | str]:
    vol_num = vol.get("id") or ""
    volume_id = old_style_volume_id(collection_id, vol_num) if old_style else f"{collection_id}-{vol_num}"
    meta = vol.find("meta")
    if meta is None:
        meta = etree.Element("meta")
    year_text = _text(meta.find("year"))
    year = int(year_text) if year_text and year_text[:4].isdigit() else None
    venue_ids = [v for v in (_text(e) for e in meta.findall("venue")) if v]
    if not venue_ids:
        venue_ids = list(venues.volumes.get(volume_id, []))
    if not venue_ids and old_style and collection_id[:1] in venues.letters:
        venue_ids = [venues.letters[collection_id[:1]]]
    shared = {
        "booktitle": _text(meta.find("booktitle")),
        "address": _text(meta.find("address")),
        "publisher": _text(meta.find("publisher")),
        "month": _text(meta.find("month")),
    }
    volume_raw = {"collection": collection_id, "volume": volume_id, "ingest_date": vol.get("ingest-date"),
                  "volume_type": vol.get("type")}
    if vol.find("frontmatter") is not None:
        yield "frontmatter"
    for paper in vol.iterfind("paper"):
        num = paper.get("id") or ""
        url_elem = paper.find("url")
        url_text = _text(url_elem)
        paper_id = (old_style_paper_id(collection_id, vol_num, num, url_text) if old_style
                    else f"{volume_id}.{num}")
        link = resolve_anthology_url(url_text)
        removed, retracted = paper.find("removed"), paper.find("retracted")
        notes = [n for n in (_status(removed, "removed"), _status(retracted, "retracted")) if n]
        rec = HarvestRecord(
            source=SOURCE, source_id=paper_id, ident=paper_id,
            title=_text(paper.find("title")) or "", year=year,
            url=f"{SITE}/{paper_id}/", pdf_url=link.pdf_url, pdf_unresolved_reason=link.reason,
            pdf_crc32=(url_elem.get("hash") if url_elem is not None and link.pdf_url else None),
            authors=[_person(a) for a in paper.iterfind("author")],
            venue=venue_ids[0] if venue_ids else None, venues=venue_ids,
            pages=_text(paper.find("pages")), doi=_text(paper.find("doi")) or link.doi,
            bibkey=_text(paper.find("bibkey")), pwc_code=_code_links(paper),
            removed=removed is not None, retracted=retracted is not None,
            status_note="; ".join(notes) or None,
            **shared,
        )
        rec.raw = {**volume_raw, "abstract": _text(paper.find("abstract")),
                   "pwcdataset": [_text(e) for e in paper.iterfind("pwcdataset")],
                   "revisions": [r.get("id") for r in paper.iterfind("revision")]}
        if link.publisher_url:
            rec.raw["publisher_url"] = link.publisher_url
        yield rec


def _code_links(paper: etree._Element) -> list[dict[str, Any]]:
    """`<pwccode>` links; `url=""` (Papers With Code knew only unofficial code, or none) is no link."""
    return [{"url": url, "name": _text(e), "official": e.get("additional") == "false"}
            for e in paper.iterfind("pwccode") if (url := (e.get("url") or "").strip())]


def harvest_acl(db: Database, settings: Settings, *, run: RunRecorder | None = None, data_dir: Path | str | None = None,
                from_year: int | None = None, cutoff: date | str | None = None,
                venues_include: list[str] | None = None, venues_exclude: list[str] | None = None,
                update: bool = False, as_of: date | str | None = None) -> HarvestResult:
    """Harvest every paper of the anthology checkout at `data_dir` (default: the setting).

    Callable without the CLI (e.g. by `review survey`). `run` is an open
    `review.runs.RunRecorder`; without one, a run named "harvest acl" is recorded here.
    `update=True` clones or pulls the data repository first. `as_of` (default: the setting
    harvest.acl_as_of) harvests the repository as it was at its last commit before that
    date instead of the files on disk. The commit harvested goes into the run's signature.
    """
    root = Path(data_dir) if data_dir else default_acl_dir(settings)
    record_filter = RecordFilter.from_settings(settings.harvest, from_year=from_year, cutoff=cutoff,
                                               include=venues_include, exclude=venues_exclude)
    when = parse_date(settings.harvest.acl_as_of if as_of is None else as_of, "harvest.acl_as_of", "as-of")
    arguments = {"data_dir": str(root), "update": update, "as_of": when.isoformat() if when else None,
                 **record_filter.describe()}
    with harvest_run(db, "harvest acl", arguments, run, SOURCE) as handle:
        if update:
            commit = clone_or_pull(settings.harvest.acl_repo_url, root, full_history=when is not None)
            handle.recorder.signature.update({"acl_data_commit": commit})
        if when is None:
            if not update and is_clone(root):
                handle.recorder.signature.update(checkout_state(root))
            _harvest_files(CheckoutFiles(root), db, handle, record_filter)
            return handle.result
        commit = commit_before(root, when)
        handle.recorder.signature.update({"acl_data_commit": commit, "acl_as_of": when.isoformat()})
        log.info("harvesting %s as it was before %s: commit %s", root, when.isoformat(), commit[:12])
        with GitTree(root, commit) as tree:
            _harvest_files(CommitFiles(tree), db, handle, record_filter)
    return handle.result


def _harvest_files(files: CheckoutFiles | CommitFiles, db: Database, handle: HarvestRun,
                   record_filter: RecordFilter) -> None:
    venues = files.venues()
    names = files.xml_names()
    result = handle.result
    with RecordStore(db, result, run_id=handle.id, counts=handle.extra) as store, \
            progress(len(names), "harvest acl") as bar:
        for name in names:
            _harvest_file(name, files.open_xml(name), venues, record_filter, store, result)
            bar.advance()
            handle.checkpoint()


def _harvest_file(name: str, source: str | IO[bytes], venues: VenueIndex, record_filter: RecordFilter,
                  store: RecordStore, result: HarvestResult) -> None:
    try:
        for item in parse_collection(source, venues, name=name):
            if isinstance(item, str):
                result.not_papers += 1
                continue
            reason = record_filter.rejects(item)
            if reason:
                result.skipped[reason] += 1
                continue
            if not item.title:
                result.note_failure(item.source_id, "no title")
                log.error("%s: no title; record left out", item.source_id)
                continue
            store.add(item)
    except (etree.XMLSyntaxError, ValueError) as exc:
        result.note_failure(name, f"unreadable XML: {exc}")
        log.error("%s: unreadable XML (%s); the other files go on", name, exc)


def default_acl_dir(settings: Settings) -> Path:
    if settings.harvest.acl_data_dir:
        return settings.resolve(settings.harvest.acl_data_dir)
    return settings.resolve(settings.data_dir) / "acl-anthology"
