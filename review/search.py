"""Full-text search over extracted texts, the same on SQLite FTS5 and PostgreSQL.

The query language is review/searchquery.py's (words, "phrases", exact identifiers such
as rouge_score or ROUGE-1.5.5, AND/OR/NOT, parentheses, NEAR(a b, N)). Evaluation:

- a word term is one indexed lookup: an FTS5 phrase on SQLite, `phraseto_tsquery`
  against the GIN index on PostgreSQL;
- an exact term is looked up in the index as the phrase of its words on SQLite (FTS5
  splits at every non-letter, so this finds a superset) and as a substring scan on
  PostgreSQL (its parser keeps URLs and paths whole, so the index would miss
  "rouge_score" inside "github.com/x/rouge_score"); then each candidate text is
  checked with the exact pattern here, in Python, on both;
- NEAR takes the texts holding all its terms and checks the distance here;
- AND, OR and NOT combine the sets of text ids (NOT against every text with content).

Results are papers, best first (bm25 on SQLite, ts_rank on PostgreSQL, over the
query's positive terms), each with a snippet around the first match of a positive
term, matches wrapped in HIT_START / HIT_END.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from review.db.session import Database
from review.errors import ReviewError
from review.extract.fts import FTS_TABLE, PG_TSVECTOR
from review.searchquery import And, Near, Node, Not, Or, SearchQueryError, Term, near, occurs, parse, terms

__all__ = ["HIT_START", "HIT_END", "SearchHit", "SearchQueryError", "parse_query", "search"]

HIT_START, HIT_END = "\x02", "\x03"
SNIPPET_WORDS = 30


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


def parse_query(query: str) -> Node:
    """The query's syntax tree (see review.searchquery); raises SearchQueryError."""
    return parse(query)


def _fts5_phrase(term: Term) -> str:
    return '"' + " ".join(term.tokens) + '"'


class _Evaluator:
    """Sets of `texts.id` for each node of a query, on one connection."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.dialect = conn.dialect.name
        self._content: dict[int, str] = {}
        if self.dialect not in ("sqlite", "postgresql"):
            raise ReviewError(f"full-text search is not available on {self.dialect}")
        if self.dialect == "postgresql":
            # The planner prices to_tsvector() low and, on a table of a few thousand texts,
            # parses every text instead of using the GIN index (579 texts: 22 s against 1 ms).
            # For this transaction only; scans that need the table (exact terms) still run.
            conn.execute(text("SET LOCAL enable_seqscan = off"))

    def ids(self, node: Node) -> set[int]:
        if isinstance(node, Term):
            return self.exact(node) if node.exact else self.indexed(node)
        if isinstance(node, Near):
            both = set.intersection(*(self.ids(t) for t in node.terms))
            self._load(both)
            return {i for i in both if near(node, self.content(i))}
        if isinstance(node, Not):
            return self.universe() - self.ids(node.child)
        sets = [self.ids(c) for c in node.children]
        return set.intersection(*sets) if isinstance(node, And) else set.union(*sets)

    def indexed(self, term: Term) -> set[int]:
        if self.dialect == "sqlite":
            rows = self.conn.execute(text(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :q"),
                                     {"q": _fts5_phrase(term)})
        else:
            if not self.conn.scalar(text("SELECT numnode(phraseto_tsquery('english', :q))"), {"q": term.text}):
                return self.scan(term)  # only stop words ("and", "the"), which PostgreSQL does not index
            rows = self.conn.execute(text(f"SELECT id FROM texts WHERE {PG_TSVECTOR} @@ "
                                          "phraseto_tsquery('english', :q)"), {"q": term.text})
        return {r[0] for r in rows}

    def exact(self, term: Term) -> set[int]:
        if self.dialect != "sqlite":
            return self.scan(term)
        candidates = self.indexed(Term(" ".join(term.tokens)))
        self._load(candidates)
        return {i for i in candidates if occurs(term, self.content(i))}

    def scan(self, term: Term) -> set[int]:
        """Texts holding `term`, by reading them: a substring scan, then the term's pattern."""
        needle = max(term.text.split(" "), key=len).lower()
        rows = self.conn.execute(text("SELECT id, content FROM texts WHERE strpos(lower(content), :n) > 0"),
                                 {"n": needle}).all()
        self._content.update((r[0], r[1]) for r in rows)
        return {r[0] for r in rows if occurs(term, r[1])}

    def universe(self) -> set[int]:
        return {r[0] for r in self.conn.execute(text("SELECT id FROM texts WHERE content IS NOT NULL"))}

    def _load(self, ids: Iterable[int]) -> None:
        todo = [i for i in ids if i not in self._content]
        for start in range(0, len(todo), 500):
            rows = self.conn.execute(text("SELECT id, content FROM texts WHERE id IN :ids")
                                     .bindparams(bindparam("ids", expanding=True)), {"ids": todo[start:start + 500]})
            self._content.update((r[0], r[1] or "") for r in rows)

    def content(self, text_id: int) -> str:
        self._load([text_id])
        return self._content.get(text_id, "")

    def scores(self, ids: set[int], positive: list[Term]) -> dict[int, float]:
        """Rank of each text (higher is better) over the positive terms; 0 without any."""
        if not positive or not ids:
            return {i: 0.0 for i in ids}
        found: dict[int, float] = {}
        todo = sorted(ids)
        for start in range(0, len(todo), 500):
            chunk = {"ids": todo[start:start + 500]}
            if self.dialect == "sqlite":
                q = " OR ".join(_fts5_phrase(t) for t in positive)
                sql = text(f"SELECT rowid, -bm25({FTS_TABLE}) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :q "
                           "AND rowid IN :ids").bindparams(bindparam("ids", expanding=True))
                rows = self.conn.execute(sql, {"q": q, **chunk})
            else:
                tsq = " || ".join(f"phraseto_tsquery('english', :t{i})" for i in range(len(positive)))
                sql = text(f"SELECT id, ts_rank({PG_TSVECTOR}, {tsq}) FROM texts WHERE id IN :ids"
                           ).bindparams(bindparam("ids", expanding=True))
                rows = self.conn.execute(sql, {**{f"t{i}": " ".join(t.tokens) for i, t in enumerate(positive)},
                                               **chunk})
            found.update((r[0], float(r[1])) for r in rows)
        return {i: found.get(i, 0.0) for i in ids}


def snippet(content: str, positive: list[Term], words: int = SNIPPET_WORDS) -> str:
    """About `words` words around the first match of a positive term, matches highlighted."""
    spans = sorted({m.span() for t in positive for m in t.pattern().finditer(content)})
    first = spans[0][0] if spans else 0
    lo = max(0, content.rfind(" ", 0, max(0, first - 6 * words // 3)) + 1) if first else 0
    hi = content.find(" ", min(len(content), first + 4 * words))
    hi = len(content) if hi < 0 else hi
    out, pos = [], lo
    for s, e in spans:
        if s < pos or e > hi:
            continue
        out += [content[pos:s], HIT_START, content[s:e], HIT_END]
        pos = e
    out.append(content[pos:hi])
    body = " ".join("".join(out).split())
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(content) else "")


def search(db: Database, query: str, *, limit: int = 20) -> list[SearchHit]:
    """The papers whose text matches `query`, best first, with a highlighted snippet."""
    tree = parse(query)
    positive = terms(tree)
    with db.engine.connect() as conn:
        ev = _Evaluator(conn)
        ids = ev.ids(tree)
        scores = ev.scores(ids, positive)
        papers = text("SELECT t.id, t.paper_id, p.ident, p.title, p.year FROM texts t "
                      "JOIN papers p ON p.id = t.paper_id WHERE t.id IN :ids").bindparams(bindparam("ids", expanding=True))
        todo = sorted(ids)
        rows = [r for start in range(0, len(todo), 500)
                for r in conn.execute(papers, {"ids": todo[start:start + 500]}).all()]
        best: dict[int, Any] = {}
        for r in sorted(rows, key=lambda r: (-scores[r[0]], r[1], r[0])):
            best.setdefault(r[1], r)  # a paper with several texts (pdf, imported) appears once
        top = list(best.values())[:limit]
        return [SearchHit(r[1], r[2], r[3] or "", r[4], snippet(ev.content(r[0]), positive), scores[r[0]])
                for r in top]
