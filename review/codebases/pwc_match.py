"""Which of our papers a Papers With Code link record is about.

Why exact keys first: DBLP records of NeurIPS, ICML, ICLR, CVPR and IJCAI carry no arXiv
id, and an arXiv title often differs from the proceedings title ("Wasserstein GAN" vs
"Wasserstein Generative Adversarial Networks"), so a title-only match loses such links
without a word. A record's `paper_url_pdf` / `paper_url_abs` are often the very proceedings
pages our papers were harvested from. The keys are tried in this order:

  arxiv          the record's arXiv id (or an arXiv URL) = the paper's arXiv id
  pdf_url        the record's PDF URL = the paper's PDF URL (or the PDF of one of its links)
  abstract_page  the record's abstract page = the paper's landing page or one of its DBLP
                 `ee` links, or the PDF that page leads to = the paper's PDF
  anthology      an ACL Anthology id in the record's URLs or DOI = the paper's id
  doi            a DOI in the record's URLs = the paper's DOI
  title          the same normalized title, and no contradiction in year (within one year:
                 a preprint is often dated the year before its proceedings) or first
                 author's surname when the record has them (from the arXiv id, or from
                 the papers-with-abstracts dump); a title shared by several of our papers
                 that year and author cannot tell apart matches none (`ambiguous_title`).

URLs are compared without scheme, `www.`, trailing slash or arXiv version, and the three
NeurIPS proceedings hosts count as one.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import parse_qs, urlsplit

from review.codebases.pwc import ARXIV_URL, PaperFacts, anthology_key, arxiv_key, doi_key, title_key
from review.harvest.pdf_urls import resolve

MATCH_KEYS = ("arxiv", "pdf_url", "abstract_page", "anthology", "doi", "title")
_NEURIPS_HOSTS = {"papers.nips.cc", "papers.neurips.cc", "proceedings.neurips.cc"}
_ANTHOLOGY_IDENT = re.compile(r"[A-Za-z]\d{2}-\d{4}|\d{4}\.[a-z0-9]+(?:-[a-z0-9]+)*\.\d+")
_ARXIV_NEW = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")
_ARXIV_OLD = re.compile(r"^[a-z-]+(?:\.[a-z]{2})?/(\d{2})\d{5}$")


def url_key(url: str | None) -> str | None:
    """host/path[?id=...] of a URL, the same for http/https, www. or not, a trailing slash."""
    if not url or not str(url).strip():
        return None
    parts = urlsplit(str(url).strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    if not host:
        return None
    if host in _NEURIPS_HOSTS:
        host = "proceedings.neurips.cc"
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    ids = parse_qs(parts.query).get("id")  # openreview.net/forum?id=X, /pdf?id=X
    return f"{host}{path}" + (f"?id={ids[0]}" if ids else "")


def arxiv_year(ident: str | None) -> int | None:
    """2017 from 1706.03762, 2001 from cs/0112017: a year hint when the record has no date."""
    key = arxiv_key(ident)
    if not key:
        return None
    m = _ARXIV_NEW.match(key) or _ARXIV_OLD.match(key)
    if not m:
        return None
    yy = int(m.group(1))
    return 2000 + yy if yy < 90 else 1900 + yy


def surname(name: str | None) -> str | None:
    words = (title_key(name) or "").split()
    return words[-1] if words else None


@dataclass
class PaperKeys:
    """Everything of one of our papers a link record may be matched on."""

    id: int
    ident: str
    title: str | None
    doi: str | None
    arxiv_id: str | None
    year: int | None = None
    first_author: str | None = None
    urls: tuple[str, ...] = ()  # landing page, PDF URL, and the source's links (DBLP `ee`)
    pdf_url: str | None = None


@dataclass
class PaperIndex:
    """Our papers, findable by every identifier a dump record may carry."""

    by_arxiv: dict[str, int] = field(default_factory=dict)
    by_anthology: dict[str, int] = field(default_factory=dict)
    by_doi: dict[str, int] = field(default_factory=dict)
    by_pdf: dict[str, int] = field(default_factory=dict)
    by_page: dict[str, int] = field(default_factory=dict)
    by_title: dict[str, list[tuple[int, int | None, str | None]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def build(cls, papers: Iterable[PaperKeys]) -> PaperIndex:
        idx = cls()
        for p in papers:
            idx._add(p)
        return idx

    def _add(self, p: PaperKeys) -> None:
        if (a := arxiv_key(p.arxiv_id)) is not None:
            self.by_arxiv.setdefault(a, p.id)
        if _ANTHOLOGY_IDENT.fullmatch(p.ident or ""):
            self.by_anthology.setdefault(p.ident.lower(), p.id)
        if p.doi:
            d = p.doi.lower().removeprefix("https://doi.org/").removeprefix("doi:")
            self.by_doi.setdefault(d, p.id)
            if (ak := anthology_key(d)) is not None:
                self.by_anthology.setdefault(ak, p.id)
        pdfs = [p.pdf_url, *(resolve([u]).pdf_url for u in p.urls)]
        for k in filter(None, map(url_key, pdfs)):
            self.by_pdf.setdefault(k, p.id)
        for k in filter(None, map(url_key, p.urls)):
            self.by_page.setdefault(k, p.id)
        if (t := title_key(p.title)) is not None and len(t) >= 12:
            if all(pid != p.id for pid, _, _ in self.by_title[t]):
                self.by_title[t].append((p.id, p.year, surname(p.first_author)))

    def match(self, rec: dict[str, Any], facts: PaperFacts | None = None) -> tuple[int | None, str]:
        """(paper id, how) where how is one of MATCH_KEYS, or (None, unmatched|ambiguous_title)."""
        abs_url, pdf_url = rec.get("paper_url_abs"), rec.get("paper_url_pdf")
        a = _record_arxiv(rec)
        if a and a in self.by_arxiv:
            return self.by_arxiv[a], "arxiv"
        for key in (url_key(pdf_url), url_key(resolve([pdf_url]).pdf_url) if pdf_url else None):
            if key and key in self.by_pdf:
                return self.by_pdf[key], "pdf_url"
        page = url_key(abs_url)
        if page and page in self.by_page:
            return self.by_page[page], "abstract_page"
        derived = url_key(resolve([abs_url]).pdf_url) if abs_url else None
        if derived and derived in self.by_pdf:
            return self.by_pdf[derived], "abstract_page"
        ak = anthology_key(abs_url, pdf_url)
        if ak and ak in self.by_anthology:
            return self.by_anthology[ak], "anthology"
        d = doi_key(abs_url, pdf_url)
        if d and d in self.by_doi:
            return self.by_doi[d], "doi"
        return self._by_title(rec, a, facts)

    def _by_title(self, rec: dict[str, Any], arxiv: str | None, facts: PaperFacts | None) -> tuple[int | None, str]:
        t = title_key(rec.get("paper_title"))
        if not t or t not in self.by_title:
            return None, "unmatched"
        year = (facts.year if facts else None) or arxiv_year(arxiv)
        author = surname(facts.first_author) if facts else None
        keep = [pid for pid, p_year, p_author in self.by_title[t]
                if (year is None or p_year is None or abs(p_year - year) <= 1)
                and (author is None or p_author is None or p_author == author)]
        if len(keep) == 1:
            return keep[0], "title"
        return (None, "ambiguous_title") if keep else (None, "unmatched")


def _record_arxiv(rec: dict[str, Any]) -> str | None:
    a = arxiv_key(rec.get("paper_arxiv_id"))
    if a is None:
        for u in (rec.get("paper_url_abs"), rec.get("paper_url_pdf")):
            m = ARXIV_URL.search(u or "")
            if m:
                return arxiv_key(m.group(1))
    return a
