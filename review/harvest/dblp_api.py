"""DBLP search API mode: one table-of-contents query per main proceedings, page by page.

Why TOC queries: `q=toc:db/conf/nips/nips2019.bht:` returns exactly the papers of that
proceedings volume, so the main-conference filter is the query itself. All requests go
through the one HTTP layer (per-host rate, retries, 429 with Retry-After); between pages
we add the `harvest.dblp_delay` DBLP asks of bulk users.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from review.errors import FetchError
from review.harvest.dblp_record import DblpPublication, as_list, author_name, text, texts
from review.harvest.dblp_venues import Venue
from review.http import HttpClient
from review.log import get_logger

log = get_logger("harvest.dblp")

MAX_PAGE = 1000  # the API's own maximum for h
PAPER_TYPES = {"Conference and Workshop Papers"}


def toc_url(base: str, venue: Venue, toc_name: str, first: int, size: int) -> str:
    query = urlencode({"q": venue.toc_query(toc_name), "format": "json", "h": size, "f": first})
    return f"{base.rstrip('/')}/search/publ/api?{query}"


def parse_hit(hit: dict[str, Any], toc_name: str) -> DblpPublication | None:
    """A search hit as a publication; None for what is not a paper (the proceedings volume).

    Every field is read whether it comes as a string, an object or a list (`texts`): one
    odd field must not cost the paper.
    """
    info = hit.get("info") or {}
    if not isinstance(info, dict):
        raise ValueError(f"hit info is a {type(info).__name__}, not an object")
    kind = text(info.get("type"))
    if kind and kind not in PAPER_TYPES:
        return None
    key = text(info.get("key"))
    if not key:
        raise ValueError("hit without a key")
    authors_field = info.get("authors")
    people = authors_field.get("author") if isinstance(authors_field, dict) else authors_field
    year = text(info.get("year")) or ""
    return DblpPublication(
        key=key, title=text(info.get("title"), " ") or "", authors=[author_name(a) for a in texts(people)],
        year=int(year) if year.isdigit() else None, pages=text(info.get("pages"), ", "),
        booktitle=text(info.get("venue")), ee=texts(info.get("ee")), doi=text(info.get("doi")), toc=toc_name)


def fetch_toc(client: HttpClient, base: str, venue: Venue, toc_name: str, *, page_size: int = MAX_PAGE,
              delay: float = 0.0) -> Iterator[dict[str, Any]]:
    """Every hit of one TOC as DBLP sent it, paging until the reported total.

    The caller parses each hit (`parse_hit`), so one unusable hit costs one record, not
    the rest of the TOC. Raises `FetchError` when a page cannot be had (after the HTTP
    layer's retries) or is not the API's JSON; the caller records the TOC as failed and
    goes on.
    """
    size = max(1, min(page_size, MAX_PAGE))
    first = 0
    while True:
        url = toc_url(base, venue, toc_name, first, size)
        resp = client.get(url, headers={"Accept": "application/json"})
        if resp.status_code != 200:
            raise FetchError(f"DBLP answered HTTP {resp.status_code}", item=venue.toc_query(toc_name),
                             reason=f"http_{resp.status_code}")
        body = client.read_json(resp, "DBLP search answer")  # capped in size and depth: FetchError otherwise
        try:
            hits = body["result"]["hits"]
            total = int(hits.get("@total", 0))
            page = as_list(hits.get("hit"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise FetchError(f"not DBLP search JSON ({type(exc).__name__}: {exc})",
                             item=venue.toc_query(toc_name), reason="bad_response") from None
        for hit in page:
            yield hit if isinstance(hit, dict) else {"info": hit}
        first += len(page)
        if not page or first >= total:
            return
        if delay > 0:
            client.sleep(delay)
