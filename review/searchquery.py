"""The `review search` query language: parsing, and the exact matching no index can do.

Why a language of our own: SQLite FTS5 and PostgreSQL each have a query syntax, and
neither keeps an identifier whole (both split `rouge_score` into "rouge" "score", so
it finds every paper that says "ROUGE score"). One grammar, parsed here, is evaluated
the same way on both databases (review/search.py):

    query  := or
    or     := and ("OR" and)*
    and    := unary (["AND"] unary)*          words side by side are ANDed
    unary  := "NOT" unary | primary
    primary:= "(" or ")" | "NEAR(" term term+ ["," N] ")" | term
    term   := word | "double-quoted phrase"

Operators are upper case (lower-case "and" is a word). A term of letters, digits and
spaces only is a *word term*: the database's full-text index decides it (case and, on
SQLite, diacritics ignored; PostgreSQL also stems English words). A term with any other
character (`rouge_score`, `ROUGE-1.5.5`, `"-c 95 -r 1000"`) is an *exact term*: it must
occur as written (case ignored, any run of spaces equal) and whole, not inside a longer
identifier (`ROUGE-1.5` does not match "ROUGE-1.5.5", `rouge_score` not "rouge_scorer",
but "rouge_score.py" and "www.github.com/x" hold `rouge_score` and `github.com/x`).
NEAR(a b, N) holds when the terms occur with at most N words between them (default 10),
counted on the text's words as written.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Union

from review.errors import ReviewError

NEAR_DEFAULT = 10
_LEX = re.compile(r'\s*(?:"(?P<phrase>[^"]*)"?|(?P<punct>[(),])|(?P<word>(?:[^\s"(),]|(?<=\d),(?=\d))+))')
_TOKEN = re.compile(r"[^\W_]+")
# "Whole": no letter, digit or "_" beside the term, no "-" joining it to a word (py-rouge
# is not rouge), no "." joining it to a number (ROUGE-1.5 is not in ROUGE-1.5.5); a "."
# before a word or after the term is a module path or file name (rouge.rouge_scorer,
# rouge_score.py) or a full stop, and does not count.
_BEFORE = r"(?<!\w)(?<!\w-)(?<!\d\.)"
_AFTER = r"(?!\w)(?!-\w)(?!\.\d)"


class SearchQueryError(ReviewError, ValueError):
    """The search query cannot be read (no searchable word, unbalanced parentheses, ...)."""

    exit_code = 2


@dataclass(frozen=True)
class Term:
    text: str  # whitespace collapsed

    @property
    def exact(self) -> bool:
        """Whether the term has characters other than letters, digits and spaces."""
        return any(not (c.isalnum() or c == " ") for c in self.text)

    @property
    def tokens(self) -> list[str]:
        """The term's words as the full-text index splits them (letters and digits)."""
        return _TOKEN.findall(self.text)

    def pattern(self) -> re.Pattern[str]:
        """Where the term occurs in a text, case ignored: an exact term whole and as written,
        a word term as its words (used for NEAR and snippets; the index decides matches)."""
        if self.exact:
            body = r"\s+".join(re.escape(part) for part in self.text.split(" "))
            return re.compile(rf"{_BEFORE}{body}{_AFTER}", re.IGNORECASE)
        # a word term's words, as the index splits the text (any non-letter between them)
        body = r"[\W_]+".join(re.escape(t) for t in self.tokens)
        return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


@dataclass(frozen=True)
class Not:
    child: "Node"


@dataclass(frozen=True)
class And:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Near:
    terms: tuple[Term, ...]
    distance: int


Node = Union[Term, Not, And, Or, Near]


def _lex(query: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: phrase, word, op (AND OR NOT NEAR) or punct."""
    out, pos = [], 0
    query = query.strip()
    while pos < len(query):
        m = _LEX.match(query, pos)
        if m is None or m.end() == pos:  # only a lone quote can get here
            raise SearchQueryError(f"cannot read the query at {query[pos:pos + 20]!r}")
        pos = m.end()
        if m.group("phrase") is not None:
            out.append(("phrase", " ".join(m.group("phrase").split())))
        elif m.group("punct"):
            out.append(("punct", m.group("punct")))
        else:
            word = m.group("word")
            out.append(("op" if word in ("AND", "OR", "NOT", "NEAR") else "word", word))
    return out


class _Parser:
    def __init__(self, query: str):
        self.query = query
        self.toks = _lex(query)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise SearchQueryError(f"the query {self.query!r} ends too early",
                                   hint="an operator or '(' needs something after it")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.or_()
        if self.peek() is not None:
            raise SearchQueryError(f"unexpected {self.peek()[1]!r} in {self.query!r}",  # type: ignore[index]
                                   hint="check the parentheses")
        return node

    def or_(self) -> Node:
        parts = [self.and_()]
        while self.peek() == ("op", "OR"):
            self.take()
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def and_(self) -> Node:
        parts = [self.unary()]
        while (tok := self.peek()) is not None and tok not in (("op", "OR"), ("punct", ")")):
            if tok == ("op", "AND"):
                self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def unary(self) -> Node:
        if self.peek() == ("op", "NOT"):
            self.take()
            return Not(self.unary())
        return self.primary()

    def primary(self) -> Node:
        kind, text = self.take()
        if (kind, text) == ("punct", "("):
            node = self.or_()
            if self.peek() != ("punct", ")"):
                raise SearchQueryError(f"a '(' is not closed in {self.query!r}")
            self.take()
            return node
        if (kind, text) == ("op", "NEAR"):
            return self.near()
        if kind in ("word", "phrase"):
            return _term(text)
        raise SearchQueryError(f"unexpected {text!r} in {self.query!r}",
                               hint='quote an operator to search for the word itself: "AND"')

    def near(self) -> Near:
        if self.take() != ("punct", "("):
            raise SearchQueryError("NEAR needs its terms in parentheses: NEAR(word1 word2, 5)")
        terms: list[Term] = []
        distance = NEAR_DEFAULT
        while (tok := self.take()) != ("punct", ")"):
            if tok == ("punct", ","):
                number = self.take()
                if not number[1].isdigit() or self.take() != ("punct", ")"):
                    raise SearchQueryError(f"NEAR(...) ends with ', N)' where N is a number of words, not {number[1]!r}")
                distance = int(number[1])
                break
            if tok[0] not in ("word", "phrase"):
                raise SearchQueryError(f"NEAR(...) takes words or quoted phrases, not {tok[1]!r}")
            terms.append(_term(tok[1]))
        if len(terms) < 2:
            raise SearchQueryError("NEAR needs two or more terms: NEAR(word1 word2, 5)")
        return Near(tuple(terms), distance)


def _term(text: str) -> Term:
    term = Term(" ".join(text.split()))
    if not term.tokens:
        raise SearchQueryError(f"{text!r} has no letter or digit to search for",
                               hint='give words, identifiers or a "quoted phrase"')
    return term


def parse(query: str) -> Node:
    """The query's syntax tree; SearchQueryError says what is wrong with a bad one."""
    if not _TOKEN.search(query):
        raise SearchQueryError(f"nothing to search for in {query!r}", hint='give words, or a "quoted phrase"')
    return _Parser(query).parse()


def terms(node: Node, positive: bool = True) -> list[Term]:
    """The terms of the query, in order; with `positive`, only those not under a NOT."""
    if isinstance(node, Term):
        return [node]
    if isinstance(node, Near):
        return list(node.terms)
    if isinstance(node, Not):
        return [] if positive else terms(node.child, positive)
    return [t for child in node.children for t in terms(child, positive)]


# --- matching in Python: exact terms and NEAR ------------------------------------------------

def occurs(term: Term, content: str) -> bool:
    return term.pattern().search(content) is not None


def near(node: Near, content: str) -> bool:
    """Whether the terms occur with at most `node.distance` words between them."""
    starts = [m.start() for m in _TOKEN.finditer(content)]
    spans: list[list[int]] = []  # per term: the word index of each occurrence's first word
    widths = []
    for term in node.terms:
        found = [bisect.bisect_left(starts, m.start()) for m in term.pattern().finditer(content)]
        if not found:
            return False
        spans.append(found)
        widths.append(len(term.tokens))
    window = node.distance + sum(widths)  # words from the first term's start to the last's end
    for s in sorted({i for found in spans for i in found}):
        if all(_within(found, s, s + window - w) for found, w in zip(spans, widths)):
            return True
    return False


def _within(found: list[int], lo: int, hi: int) -> bool:
    i = bisect.bisect_left(found, lo)
    return i < len(found) and found[i] <= hi
