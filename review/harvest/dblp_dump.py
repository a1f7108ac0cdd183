"""DBLP dump mode: stream dblp.xml(.gz) in constant memory, entities from the local DTD.

Why this shape: the dump is several GB with millions of records and uses named entities
(`&uuml;`) defined only in dblp.dtd. lxml's pull parser is fed 64 KB at a time and hands over
each record as it ends; each record is cleared and its finished siblings dropped, so
memory stays flat whatever the size. A dump that breaks off (a truncated gzip, a bad
element) still delivers every record completed before the fault, then raises
`InputFileError` with the reason; the harvest keeps those records. The DTD comes from a local file through a resolver, and the parser runs with
`no_network=True`: parsing never touches the network.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NamedTuple

from lxml import etree

from review.errors import InputFileError
from review.harvest.dblp_record import DblpPublication
from review.harvest.dblp_venues import Venue, toc_of

CHUNK = 1 << 16  # bytes fed to the parser at a time; a fault costs at most the record it falls in
_KEPT = "the records read before the fault were kept; fetch the dump again and rerun"

# Every record type of dblp.dtd; all are top-level children of <dblp>.
RECORD_TAGS = ("article", "inproceedings", "proceedings", "book", "incollection", "phdthesis",
               "mastersthesis", "www", "person", "data")


class _LocalDtd(etree.Resolver):
    """Answer every request for a .dtd with the one local file; refuse anything else."""

    def __init__(self, dtd: Path):
        super().__init__()
        self.dtd = dtd

    def resolve(self, url, public_id, context):  # type: ignore[no-untyped-def]
        if url and str(url).lower().endswith(".dtd"):
            return self.resolve_filename(str(self.dtd), context)
        return self.resolve_string("", context)  # external entities other than the DTD: empty


class DumpItem(NamedTuple):
    """One record of a venue's stream: what it is, for which venue, and its TOC name."""

    outcome: str  # paper | main_conference | year | not_paper
    venue: Venue | None
    pub: DblpPublication | None = None
    toc: str | None = None  # the TOC page name of the record's <url>, e.g. nips2018


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")


def _text(elem: etree._Element | None) -> str:
    return "".join(elem.itertext()).strip() if elem is not None else ""


def iter_dump(path: Path, dtd: Path | None, venues: list[Venue]) -> Iterator[DumpItem]:
    """Yield a `DumpItem` for every record of the venues' streams.

    outcome is "paper" (a main-conference paper), "main_conference" (a paper of the
    stream in another TOC: workshops, companions, or a main TOC the venue table does not
    name), "year" (a TOC of a year outside the venue's years), or "not_paper" (the
    proceedings volume itself). Records of other streams are passed over without a yield.
    """
    path = Path(path)
    if not path.is_file():
        raise InputFileError("DBLP dump not found", item=str(path), hint="download dblp.xml.gz and set harvest.dblp_dump")
    dtd = Path(dtd) if dtd else path.parent / "dblp.dtd"
    if not dtd.is_file():
        raise InputFileError("dblp.dtd not found: the dump's entities need it", item=str(dtd),
                             hint="put dblp.dtd next to the dump or set harvest.dblp_dtd")
    by_stream = {v.stream: v for v in venues}
    prefixes = tuple(f"{s}/" for s in by_stream)
    parser = etree.XMLPullParser(events=("end",), tag=RECORD_TAGS, load_dtd=True, no_network=True,
                                 resolve_entities=True, huge_tree=True, remove_comments=True)
    parser.resolvers.add(_LocalDtd(dtd))
    fault: InputFileError | None = None
    with _open(path) as fh:
        while fault is None:
            block = b""
            try:
                block = fh.read(CHUNK)
                if block:
                    parser.feed(block)
                else:
                    parser.close()
            except etree.XMLSyntaxError as exc:
                fault = InputFileError(f"unreadable DBLP XML: {exc}", item=str(path), hint=_KEPT)
            except (EOFError, OSError, zlib.error) as exc:  # a gzip cut short (BadGzipFile is an OSError)
                fault = InputFileError(f"unreadable DBLP dump: {type(exc).__name__}: {exc}", item=str(path),
                                       hint=_KEPT)
            # the records completed before a fault are still delivered (the pull parser keeps them)
            for _event, elem in parser.read_events():
                key = elem.get("key") or ""
                if key.startswith(prefixes):
                    yield _classify(elem, key, by_stream)
                _drop(elem)
            if not block:
                break
    if fault is not None:
        raise fault


def _drop(elem: etree._Element) -> None:
    """Free a finished record and its finished siblings: memory stays flat whatever the size."""
    elem.clear()
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def _classify(elem: etree._Element, key: str, by_stream: dict[str, Venue]) -> DumpItem:
    stream = key.rsplit("/", 1)[0]
    venue = by_stream.get(stream)
    if venue is None:  # a deeper key such as conf/nips/2019w/...: not the stream itself
        return DumpItem("main_conference", None)
    if elem.tag != "inproceedings":
        return DumpItem("not_paper", venue)
    toc = toc_of(elem.findtext("url"))
    if toc is None or toc[0] != venue.stream:
        return DumpItem("main_conference", venue, toc=toc[1] if toc else "(no TOC url)")
    if venue.main_toc_year(toc[1]) is None:
        year_of_toc = venue.year_in(toc[1])
        if year_of_toc is not None and not venue.covers(year_of_toc):
            return DumpItem("year", venue, toc=toc[1])
        return DumpItem("main_conference", venue, toc=toc[1])
    year = (elem.findtext("year") or "").strip()
    pub = DblpPublication(
        key=key, title=_text(elem.find("title")), authors=[_text(a) for a in elem.iterfind("author")],
        year=int(year) if year.isdigit() else None, pages=_text(elem.find("pages")) or None,
        booktitle=_text(elem.find("booktitle")) or None, ee=[t for t in (_text(e) for e in elem.iterfind("ee")) if t],
        toc=toc[1])
    return DumpItem("paper", venue, pub, toc[1])
