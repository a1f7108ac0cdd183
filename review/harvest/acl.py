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
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

from review.db.session import Database
from review.errors import InputFileError
from review.harvest.filters import RecordFilter
from review.harvest.records import HarvestRecord, clean_text
from review.harvest.result import HarvestResult
from review.harvest.runner import harvest_run
from review.harvest.store import RecordStore
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("harvest.acl")

SOURCE = "acl"
SITE = "https://aclanthology.org"
OLD_STYLE = re.compile(r"^[A-Z]\d{2}$")

try:  # the C loader is ten times faster on the big venue files
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YamlLoader = yaml.SafeLoader


@dataclass
class VenueIndex:
    """What `data/yaml` says about venues: old-style letters and explicit volume lists."""

    letters: dict[str, str] = field(default_factory=dict)  # "U" -> "alta"
    volumes: dict[str, list[str]] = field(default_factory=dict)  # "2021.gem-1" -> ["ws"]

    @classmethod
    def load(cls, yaml_dir: Path) -> VenueIndex:
        index = cls()
        entries: dict[str, Any] = {}
        single = yaml_dir / "venues.yaml"  # older checkouts: one file for all venues
        if single.is_file():
            entries.update(_read_yaml(single) or {})
        venue_dir = yaml_dir / "venues"
        if venue_dir.is_dir():
            for path in sorted(venue_dir.glob("*.yaml")):
                entries[path.stem] = _read_yaml(path) or {}
        for venue_id, info in entries.items():
            if not isinstance(info, dict):
                continue
            letter = info.get("oldstyle_letter")
            if letter:
                index.letters[str(letter)] = venue_id
            vols = info.get("volumes") or {}
            lists = vols.values() if isinstance(vols, dict) else [vols]
            for items in lists:
                for vol in items or []:
                    index.volumes.setdefault(str(vol), []).append(venue_id)
        return index


def _read_yaml(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return yaml.load(fh, Loader=_YamlLoader)
    except (OSError, yaml.YAMLError) as exc:
        raise InputFileError(f"unreadable venue file: {exc}", item=str(path)) from None


def find_xml_dir(data_dir: Path) -> Path:
    """`data/xml` of an anthology checkout (or the folder itself if it holds the XML)."""
    for candidate in (data_dir / "data" / "xml", data_dir / "xml", data_dir):
        if candidate.is_dir() and any(candidate.glob("*.xml")):
            return candidate
    raise InputFileError("no anthology XML found (expected data/xml/*.xml)", item=str(data_dir),
                         hint="point harvest.acl_data_dir at a checkout, or use --update to clone one")


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


def parse_collection(path: Path, venues: VenueIndex) -> Iterator[HarvestRecord | str]:
    """Yield one record per paper of one collection file; frontmatter yields the string
    "frontmatter" so callers can count what is not a paper. Raises `etree.XMLSyntaxError`
    on a broken file (the caller records it and goes on with the next file)."""
    collection_id = path.stem
    old_style = bool(OLD_STYLE.match(collection_id))
    context = etree.iterparse(str(path), events=("start", "end"), tag=("collection", "volume"),
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
    volume_id = f"{collection_id}-{vol_num}"
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
        if old_style:
            paper_id = f"{collection_id}-{vol_num}{int(num):03d}" if num.isdigit() else f"{volume_id}{num}"
        else:
            paper_id = f"{volume_id}.{num}"
        url_elem = paper.find("url")
        url_text = _text(url_elem)
        pdf_url: str | None
        unresolved = None
        if url_text and "://" in url_text:
            pdf_url = url_text
        elif url_text:
            pdf_url = f"{SITE}/{url_text}.pdf"
        else:
            pdf_url, unresolved = None, "the anthology XML has no <url> for this paper"
        removed, retracted = paper.find("removed"), paper.find("retracted")
        notes = [n for n in (_status(removed, "removed"), _status(retracted, "retracted")) if n]
        rec = HarvestRecord(
            source=SOURCE, source_id=paper_id, ident=paper_id,
            title=_text(paper.find("title")) or "", year=year,
            url=f"{SITE}/{paper_id}/", pdf_url=pdf_url, pdf_unresolved_reason=unresolved,
            pdf_crc32=(url_elem.get("hash") if url_elem is not None else None),
            authors=[_person(a) for a in paper.iterfind("author")],
            venue=venue_ids[0] if venue_ids else None, venues=venue_ids,
            pages=_text(paper.find("pages")), doi=_text(paper.find("doi")), bibkey=_text(paper.find("bibkey")),
            pwc_code=[{"url": e.get("url"), "name": _text(e), "official": e.get("additional") == "false"}
                      for e in paper.iterfind("pwccode")],
            removed=removed is not None, retracted=retracted is not None,
            status_note="; ".join(notes) or None,
            **shared,
        )
        rec.raw = {**volume_raw, "abstract": _text(paper.find("abstract")),
                   "pwcdataset": [_text(e) for e in paper.iterfind("pwcdataset")],
                   "revisions": [r.get("id") for r in paper.iterfind("revision")]}
        yield rec


def harvest_acl(db: Database, settings: Settings, *, run: RunRecorder | None = None, data_dir: Path | str | None = None,
                from_year: int | None = None, cutoff: date | str | None = None,
                venues_include: list[str] | None = None, venues_exclude: list[str] | None = None,
                update: bool = False) -> HarvestResult:
    """Harvest every paper of the anthology checkout at `data_dir` (default: the setting).

    Callable without the CLI (e.g. by `review survey`). `run` is an open
    `review.runs.RunRecorder`; without one, a run named "harvest acl" is recorded here.
    `update=True` clones or pulls the data repository first.
    """
    root = Path(data_dir) if data_dir else default_acl_dir(settings)
    record_filter = RecordFilter.from_settings(settings.harvest, from_year=from_year, cutoff=cutoff,
                                               include=venues_include, exclude=venues_exclude)
    arguments = {"data_dir": str(root), "update": update, **record_filter.describe()}
    with harvest_run(db, "harvest acl", arguments, run, SOURCE) as handle:
        result = handle.result
        if update:
            from review.harvest.git_update import clone_or_pull

            commit = clone_or_pull(settings.harvest.acl_repo_url, root)
            handle.recorder.signature.update({"acl_data_commit": commit})
        xml_dir = find_xml_dir(root)
        venues = VenueIndex.load(xml_dir.parent / "yaml")
        files = sorted(xml_dir.glob("*.xml"))
        with RecordStore(db, result, run_id=handle.id) as store, progress(len(files), "harvest acl") as bar:
            for path in files:
                _harvest_file(path, venues, record_filter, store, result)
                bar.advance()
                handle.checkpoint()
    return result


def _harvest_file(path: Path, venues: VenueIndex, record_filter: RecordFilter, store: RecordStore,
                  result: HarvestResult) -> None:
    try:
        for item in parse_collection(path, venues):
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
        result.note_failure(path.name, f"unreadable XML: {exc}")
        log.error("%s: unreadable XML (%s); the other files go on", path, exc)


def default_acl_dir(settings: Settings) -> Path:
    if settings.harvest.acl_data_dir:
        return settings.resolve(settings.harvest.acl_data_dir)
    return settings.resolve(settings.data_dir) / "acl-anthology"
