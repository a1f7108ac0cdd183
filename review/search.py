"""Full-text search over extracted texts: SQLite FTS5, or PostgreSQL full-text search.

Query language (the same on both databases): words are ANDed, a "double-quoted" part is
a phrase. Punctuation inside a word splits it into a phrase of tokens, so ROUGE-1.5.5
finds "ROUGE-1.5.5" (and "ROUGE 1.5.5"), and "-c 95 -r 1000" (quoted) finds that
parameter string. Matching ignores case and, on SQLite, diacritics; PostgreSQL uses
its English configuration (stemming: "scores" finds "score").

Results are papers, best first (bm25 on SQLite, ts_rank on PostgreSQL), each with a
snippet whose matches are wrapped in HIT_START / HIT_END.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import text

from review.db.session import Database
from review.errors import ReviewError
from review.extract.fts import FTS_TABLE, PG_TSVECTOR

HIT_START, HIT_END = "\x02", "\x03"
_TERM = re.compile(r'"([^"]*)"|(\S+)')


class SearchQueryError(ReviewError, ValueError):
    """The search query has no searchable word."""

    exit_code = 2


@dataclass
class SearchHit:
    paper_id: int
    ident: str
    title: str
    year: int | None
    snippet: str  # matches wrapped in HIT_START / HIT_END
    score: float

    def as_dict(self, start: str = "**", end: str = "**") -> dict[str, Any]:
        d = asdict(self)
        d["snippet"] = self.snippet.replace(HIT_START, start).replace(HIT_END, end)
        return d


def parse_query(query: str) -> list[str]:
    """Split a query into phrases (a bare word is a one-word phrase)."""
    terms = []
    for m in _TERM.finditer(query):
        term = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
        if re.search(r"\w", term):
            terms.append(term)
    if not terms:
        raise SearchQueryError(f"nothing to search for in {query!r}", hint='give words, or a "quoted phrase"')
    return terms


def _fts5_query(terms: list[str]) -> str:
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)


def search(db: Database, query: str, *, limit: int = 20) -> list[SearchHit]:
    """The papers whose text matches `query`, best first, with a highlighted snippet."""
    terms = parse_query(query)
    dialect = db.engine.dialect.name
    with db.engine.connect() as conn:
        if dialect == "sqlite":
            rows = conn.execute(text(
                f"SELECT t.paper_id, p.ident, p.title, p.year, "
                f"snippet({FTS_TABLE}, 0, :s, :e, '…', 24) AS snip, bm25({FTS_TABLE}) AS score "
                f"FROM {FTS_TABLE} JOIN texts t ON t.id = {FTS_TABLE}.rowid JOIN papers p ON p.id = t.paper_id "
                f"WHERE {FTS_TABLE} MATCH :q ORDER BY score LIMIT :n"),
                {"q": _fts5_query(terms), "s": HIT_START, "e": HIT_END, "n": limit}).all()
            return [SearchHit(r[0], r[1], r[2] or "", r[3], r[4] or "", -float(r[5])) for r in rows]
        if dialect == "postgresql":
            params: dict[str, Any] = {f"t{i}": t for i, t in enumerate(terms)}
            tsq = " && ".join(f"phraseto_tsquery('english', :t{i})" for i in range(len(terms)))
            opts = f"StartSel={HIT_START}, StopSel={HIT_END}, MaxWords=35, MinWords=15, MaxFragments=2, FragmentDelimiter=\" … \""
            rows = conn.execute(text(
                f"SELECT t.paper_id, p.ident, p.title, p.year, "
                f"ts_headline('english', t.content, q.query, :opts) AS snip, ts_rank({PG_TSVECTOR}, q.query) AS score "
                f"FROM texts t JOIN papers p ON p.id = t.paper_id, (SELECT {tsq} AS query) q "
                f"WHERE {PG_TSVECTOR} @@ q.query ORDER BY score DESC, t.paper_id LIMIT :n"),
                {**params, "opts": opts, "n": limit}).all()
            return [SearchHit(r[0], r[1], r[2] or "", r[3], " ".join((r[4] or "").split()), float(r[5]))
                    for r in rows]
    raise ReviewError(f"full-text search is not available on {dialect}")
