"""Turn a DBLP record's `ee` links into the URL of the paper's PDF, for every venue and era.

Why a table of URL shapes: DBLP links to landing pages, and each proceedings site has
its own way from landing page to PDF (and changed it over the years). Each rule below
names the site and era it handles; a record none of them fits keeps the reason, so the
download step and the PRISMA counts can say why a paper has no full text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Resolution:
    pdf_url: str | None
    landing: str | None  # the ee link the PDF came from (or the first one)
    reason: str | None  # why there is no PDF URL
    arxiv_id: str | None = None
    rule: str | None = None  # which rule matched (kept in the raw record)


Rule = Callable[[str], "str | None"]

_NEURIPS_HASH = re.compile(
    r"^https?://(?:papers\.nips\.cc|proceedings\.neurips\.cc|papers\.neurips\.cc)(/paper(?:_files/paper)?/\d{4})"
    r"/hash/([0-9a-f]+)-Abstract(-[A-Za-z_]+)?\.html$")
_NIPS_OLD = re.compile(r"^https?://papers\.nips\.cc/paper/(\d+-[^/?#]+?)/?$")
_PMLR = re.compile(r"^https?://(proceedings\.mlr\.press|jmlr\.org/proceedings/papers)/(v\d+)/([^/]+?)\.html$")
_AAAI_ICML = re.compile(r"^https?://(?:www\.)?aaai\.org/Library/ICML/(\d{4})/icml(\d\d)-(\d+)\.php$", re.I)
_IJCAI_DOI = re.compile(r"^https?://(?:dx\.)?doi\.org/10\.24963/ijcai\.(\d{4})/(\d+)$", re.I)
_IJCAI_NEW = re.compile(r"^https?://(?:www\.)?ijcai\.org/proceedings/(\d{4})/(\d+)/?$", re.I)
_IJCAI_ABSTRACT = re.compile(r"^https?://(?:www\.)?ijcai\.org/Abstract/(\d\d)/(\d+)/?$", re.I)
_OPENREVIEW = re.compile(r"^https?://openreview\.net/(?:forum|pdf)\?", re.I)
_CVF = re.compile(r"^(https?://openaccess\.thecvf\.com/(?:content_[a-z]+_\d{4}|content/[A-Za-z]+\d{4}))/html/"
                  r"(.+_paper)\.html$", re.I)
_ARXIV = re.compile(r"^https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:v\d+)?(?:\.pdf)?/?$", re.I)
_DOI = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\.\d+/.+)$", re.I)


def _neurips(url: str) -> str | None:
    """NeurIPS/NIPS 2019-: .../hash/<h>-Abstract[-Track].html -> .../file/<h>-Paper[-Track].pdf;
    the same shape on papers.nips.cc (2019-2020) and proceedings.neurips.cc (paper_files/ from 2022)."""
    m = _NEURIPS_HASH.match(url)
    if not m:
        return None
    base = url[: url.index(m.group(1))]
    return f"{base}{m.group(1)}/file/{m.group(2)}-Paper{m.group(3) or ''}.pdf"


def _nips_old(url: str) -> str | None:
    """NIPS 1987-2018: papers.nips.cc/paper/<n>-<slug> -> the same plus .pdf."""
    m = _NIPS_OLD.match(url)
    return f"{url.rstrip('/')}.pdf" if m else None


def _pmlr(url: str) -> str | None:
    """ICML 2013- (PMLR, earlier JMLR W&CP): v97/smith19a.html -> v97/smith19a/smith19a.pdf (JMLR: v28/x.pdf)."""
    m = _PMLR.match(url)
    if not m:
        return None
    host, volume, name = m.groups()
    if host.startswith("jmlr.org"):
        return f"{url[: -len('.html')]}.pdf"
    return f"{url.rsplit('/', 1)[0]}/{name}/{name}.pdf"


def _aaai_icml(url: str) -> str | None:
    """ICML 2003 (AAAI library): Library/ICML/2003/icml03-001.php -> Papers/ICML/2003/ICML03-001.pdf."""
    m = _AAAI_ICML.match(url)
    if not m:
        return None
    year, yy, num = m.groups()
    return f"https://www.aaai.org/Papers/ICML/{year}/ICML{yy}-{num}.pdf"


def _ijcai(url: str) -> str | None:
    """IJCAI 2017- (doi 10.24963/ijcai.Y/N or ijcai.org/proceedings/Y/N) -> proceedings/Y/0NNN.pdf;
    IJCAI 2015-2016 (ijcai.org/Abstract/15/N) -> Proceedings/15/Papers/NNN.pdf."""
    m = _IJCAI_DOI.match(url) or _IJCAI_NEW.match(url)
    if m:
        return f"https://www.ijcai.org/proceedings/{m.group(1)}/{int(m.group(2)):04d}.pdf"
    m = _IJCAI_ABSTRACT.match(url)
    if m:
        return f"https://www.ijcai.org/Proceedings/{m.group(1)}/Papers/{int(m.group(2)):03d}.pdf"
    return None


def _openreview(url: str) -> str | None:
    """ICLR 2017- (OpenReview): forum?id=X -> pdf?id=X."""
    if not _OPENREVIEW.match(url):
        return None
    ids = parse_qs(urlsplit(url).query).get("id")
    return f"https://openreview.net/pdf?id={ids[0]}" if ids else None


def _cvf(url: str) -> str | None:
    """CVPR 2013- (CVF open access): .../html/<name>_paper.html -> .../papers/<name>_paper.pdf,
    both the content_cvpr_2018 and the content/CVPR2021 layouts."""
    m = _CVF.match(url)
    return f"{m.group(1)}/papers/{m.group(2)}.pdf" if m else None


def _direct_pdf(url: str) -> str | None:
    """Any link that already is a PDF (old NIPS books, ICML 2008-2012 sites, IJCAI 2003-2013)."""
    path = urlsplit(url).path.lower()
    if path.endswith(".pdf") and "arxiv.org" not in url:
        return url
    return None


def arxiv_id(url: str) -> str | None:
    m = _ARXIV.match(url)
    return m.group(1) if m else None


def _arxiv(url: str) -> str | None:
    """ICLR 2013-2016 (papers only on arXiv), and a last resort elsewhere: abs/X -> pdf/X."""
    ident = arxiv_id(url)
    return f"https://arxiv.org/pdf/{ident}" if ident else None


# Proceedings sites first: the version of record beats a preprint of it.
RULES: tuple[tuple[str, Rule], ...] = (
    ("neurips", _neurips), ("nips_old", _nips_old), ("pmlr", _pmlr), ("aaai_icml", _aaai_icml),
    ("ijcai", _ijcai), ("openreview", _openreview), ("cvf", _cvf), ("direct_pdf", _direct_pdf),
    ("arxiv", _arxiv),
)


def resolve(ee_links: Iterable[str]) -> Resolution:
    """The best PDF URL among a record's `ee` links, or the reason there is none."""
    links = [link.strip() for link in ee_links if link and link.strip()]
    arxiv = next((a for a in (arxiv_id(link) for link in links) if a), None)
    if not links:
        return Resolution(None, None, "no ee link in the DBLP record")
    for name, rule in RULES:
        for link in links:
            pdf = rule(link)
            if pdf:
                return Resolution(pdf, link, None, arxiv, name)
    hosts = sorted({urlsplit(link).hostname or link for link in links})
    if all(_DOI.match(link) for link in links):
        reason = f"only publisher DOI links (no open-access PDF): {', '.join(links[:3])}"
    else:
        reason = f"no known PDF URL pattern for: {', '.join(hosts)}"
    return Resolution(None, links[0], reason, arxiv)


# -- ACL Anthology: the paper's <url> element ---------------------------------------------
#
# Usually an anthology id (the PDF is <site>/<id>.pdf). A few hundred papers carry a
# publisher link instead (RANLP: doi.org; AMTA: Springer chapters), which serves an HTML
# landing page: never a PDF candidate. What can be resolved offline is; the rest keeps the
# reason, and the DOI a link spells is kept for matching.

ANTHOLOGY_SITE = "https://aclanthology.org"
_ANTHOLOGY_PAGE = re.compile(r"^https?://(?:www\.)?(?:aclanthology\.org|aclweb\.org/anthology)/"
                             r"([A-Za-z0-9.]+-[A-Za-z0-9.]+?)(?:\.pdf)?/?$")
_SPRINGER_CHAPTER = re.compile(r"^https?://link\.springer\.com/chapter/(10\.\d{4,9}/[^?#]+)$", re.I)


@dataclass(frozen=True)
class AnthologyUrl:
    pdf_url: str | None
    reason: str | None  # why there is no PDF URL
    publisher_url: str | None = None  # the publisher link the anthology gives instead of a PDF
    doi: str | None = None  # the DOI that link spells, if any


def resolve_anthology_url(url_text: str | None) -> AnthologyUrl:
    """The PDF URL of an anthology `<url>` text, or why there is none (without the network)."""
    if not url_text:
        return AnthologyUrl(None, "the anthology XML has no <url> for this paper")
    if "://" not in url_text:
        return AnthologyUrl(f"{ANTHOLOGY_SITE}/{url_text}.pdf", None)
    page = _ANTHOLOGY_PAGE.match(url_text)
    if page:
        return AnthologyUrl(f"{ANTHOLOGY_SITE}/{page.group(1)}.pdf", None)
    if _direct_pdf(url_text) or arxiv_id(url_text):
        return AnthologyUrl(_direct_pdf(url_text) or _arxiv(url_text), None)
    doi = _DOI.match(url_text)
    if doi:
        return AnthologyUrl(None, f"publisher DOI link, not a PDF (the landing page needs the network): {url_text}",
                            url_text, doi.group(1))
    chapter = _SPRINGER_CHAPTER.match(url_text)
    if chapter:
        return AnthologyUrl(None, f"Springer chapter page, not a PDF (the PDF is behind a paywall): {url_text}",
                            url_text, chapter.group(1))
    return AnthologyUrl(None, f"publisher landing page, not a PDF: {url_text}", url_text)
