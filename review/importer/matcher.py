"""Which harvested paper a file is: by the ids in its name, else by its hashes.

Order, most certain first: an ACL Anthology id in the name (the paper's ident, or the
source id of its `acl` record), a DOI, an arXiv id; then the file's sha256 (a stored
document with the same bytes, or a record that gives the sha256), then its CRC32 (the
Anthology's `hash` attribute). A CRC32 is 32 bits: among 100,000 records a random file
collides with one in about 43,000, so a CRC32-only match must be confirmed by the
paper's title on the file's first page (`needs_title`).

Name lookups are indexed queries; an Anthology id that is no paper's ident is also
looked up as the file name of an Anthology PDF URL (the name the Anthology's own bundle
uses). The hash columns and PDF URLs have no index, so their maps are loaded once, on
the first file that needs them (memory grows with the records, not with the files).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Document, Paper, SourceRecord
from review.importer.names import NameIds


@dataclass(frozen=True)
class Match:
    paper_id: int
    ident: str
    by: str  # anthology_id | doi | arxiv | sha256 | crc32 | title | created
    crc32: str | None = None
    sha256: str | None = None
    title: str = ""
    needs_title: bool = False  # a CRC32-only match, to be confirmed by the first page


@dataclass(frozen=True)
class Ambiguous:
    """The name points at several papers: the file is matched by its hashes instead."""

    idents: tuple[str, ...]


class Matcher:
    def __init__(self, session: Session):
        self.session = session
        self._crc: dict[str, list[int]] | None = None
        self._sha: dict[str, int] | None = None
        self._arxiv: dict[str, int] | None = None
        self._pdf_names: dict[str, int] | None = None

    # -- by name ------------------------------------------------------------------------

    def by_name(self, ids: NameIds) -> Match | Ambiguous | None:
        for by, found in (("anthology_id", self._anthology(ids.anthology)), ("doi", self._doi(ids.dois)),
                          ("arxiv", self._arxiv_ids(ids.arxiv))):
            papers = list(dict.fromkeys(found))
            if len(papers) == 1:
                return self._match(papers[0], by)
            if len(papers) > 1:
                return Ambiguous(tuple(self._ident(p) for p in papers))
        return None

    def _anthology(self, idents: tuple[str, ...]) -> list[int]:
        if not idents:
            return []
        found = list(self.session.scalars(select(SourceRecord.paper_id).where(
            SourceRecord.source == "acl", SourceRecord.source_id.in_(idents))))
        found = found or list(self.session.scalars(select(Paper.id).where(Paper.ident.in_(idents))))
        if found:
            return found
        if self._pdf_names is None:  # the id the Anthology itself names the file by, from its URL
            self._pdf_names = {}
            for pid, url in self.session.execute(select(Paper.id, Paper.pdf_url).where(
                    Paper.pdf_url.like("%aclanthology.org/%.pdf"))):
                self._pdf_names.setdefault(url.rsplit("/", 1)[-1][:-4], pid)
        return [self._pdf_names[i] for i in idents if i in self._pdf_names]

    def _doi(self, dois: tuple[str, ...]) -> list[int]:
        return list(self.session.scalars(select(Paper.id).where(Paper.doi.in_(dois)))) if dois else []

    def _arxiv_ids(self, ids: tuple[str, ...]) -> list[int]:
        if not ids:
            return []
        if self._arxiv is None:
            self._arxiv = {a.lower(): pid for pid, a in self.session.execute(
                select(Paper.id, Paper.arxiv_id).where(Paper.arxiv_id.is_not(None)))}
        return [self._arxiv[a.lower()] for a in ids if a.lower() in self._arxiv]

    # -- by content ---------------------------------------------------------------------

    def by_hash(self, sha256: str, crc32: str) -> Match | None:
        stored = self.session.scalar(select(Document.paper_id).where(Document.sha256 == sha256,
                                                                    Document.outcome == "ok").limit(1))
        if stored is not None:
            return self._match(stored, "sha256")
        if self._sha is None:
            self._sha = {s.lower(): pid for pid, s in self.session.execute(
                select(Paper.id, Paper.pdf_sha256).where(Paper.pdf_sha256.is_not(None)))}
        if sha256 in self._sha:
            return self._match(self._sha[sha256], "sha256")
        if self._crc is None:
            self._crc = {}
            for pid, c in self.session.execute(select(Paper.id, Paper.pdf_crc32).where(Paper.pdf_crc32.is_not(None))):
                self._crc.setdefault(c.strip().lower().zfill(8), []).append(pid)
        hits = self._crc.get(crc32, [])
        if len(hits) == 1:
            m = self._match(hits[0], "crc32")
            return Match(m.paper_id, m.ident, m.by, m.crc32, m.sha256, m.title, needs_title=True)
        return None

    def remember(self, paper_id: int, sha256: str) -> None:
        """A paper created during this import is found by its sha256 from now on."""
        if self._sha is not None:
            self._sha[sha256] = paper_id

    # -- helpers ------------------------------------------------------------------------

    def _match(self, paper_id: int, by: str) -> Match:
        p = self.session.execute(select(Paper.ident, Paper.pdf_crc32, Paper.pdf_sha256, Paper.title)
                                 .where(Paper.id == paper_id)).one()
        return Match(paper_id, p.ident, by, p.pdf_crc32, p.pdf_sha256, p.title or "")

    def _ident(self, paper_id: int) -> str:
        return self.session.scalar(select(Paper.ident).where(Paper.id == paper_id)) or str(paper_id)
