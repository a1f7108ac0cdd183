"""Literal prefilters: scan only around the words a pattern cannot match without.

Why: the `regex` module searches fast when a pattern starts with a literal, but slowly
when it starts with `\\b` or an alternation (`\\b(?:stems?|stemming|porter)\\b` runs at a
few tens of MB/s). Almost every Table 5 pattern contains a literal that every match must
contain ("stem"/"porter", "github", "pyrouge") and has a bounded width. Then every match
lies within `width` characters of an occurrence of that literal, and scanning merged
windows around the occurrences yields exactly the matches a scan of the whole text yields:

- a match contains an occurrence q of a required literal and is at most `width` long, so
  it lies inside q's window, and windows are merged, so no whole-text match straddles a
  window edge;
- the `regex` module keeps the text before `pos` visible to `\\b` and lookbehinds, and a
  window reaches `width + margin` past every occurrence inside it, so cutting the text
  at the window's end cannot create or change a match (it would have to be longer than
  `width`).

Soundness of the literal test: literals are taken only from ASCII characters and
compared case-folded (`str.casefold`), which maps every character that the
case-insensitive regex can match to an ASCII letter onto that letter (K -> k, ſ -> s).
A text whose case-folded form has another length is scanned whole. A pattern this module
cannot analyse (syntax only the `regex` module knows) simply gets no prefilter.

Word starts: when every match begins at a `\\b` with one of the literals (`\\b(?:stem|
porter)`), an occurrence right after an ASCII letter, digit or underscore cannot begin
one ("stem" in "system"): such a character folds from a word character only, so the
boundary is missing there. Those occurrences open no window, which also lets two-letter
beginnings ("r1", "rl" of `\\br[-_]?(?:1|l)\\b`) prefilter.

The occurrences of all the rule set's literals are found in one pass over the text
(`Literals`, an Aho-Corasick automaton): a `str.find` pass per literal read a ROUGE paper
about a hundred times and cost more than the patterns' own scans.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import ahocorasick

from review.rules.syntax import MAXREPEAT, parse

MIN_LITERAL = 3  # shorter literals occur everywhere; the window scan would not pay off
MIN_LEAD = 2  # a two-letter beginning at a word start ("r1", "rl") is rare enough
MAX_WIDTH = 2000  # wider patterns are scanned whole


@dataclass(frozen=True)
class Plan:
    """One of `literals` occurs in every match; matches are at most `width` long."""

    literals: tuple[str, ...]
    width: int  # longest match plus the reach of lookarounds and boundaries
    at_word: bool = False  # every match begins with a literal at a word boundary: others do not count


@functools.lru_cache(maxsize=None)
def plan_for(source: str) -> Plan | None:
    """A prefilter plan for a pattern, or None when it cannot be proven safe.

    A pattern that begins at a word boundary with one of its literals (`\\b(?:stem|porter)`)
    opens windows only where one begins a word: "stem" inside "system" opens none. Its
    beginnings may be short ("r1", "rl" of `\\br[-_]?(?:1|l)\\b`): those are rare at a word's
    start. A case-sensitive beginning (`(?-i:R)`) the `regex` module finds fast by itself."""
    width = max_width(source)
    if width is None:
        return None
    tree = list(_parse(source))
    best = _best(tree)
    if begins_at_word(source) and not _case_sensitive_start(tree):
        leads = leading_literals(source, MIN_LEAD)
        if leads and (not best or min(map(len, best)) < MIN_LITERAL or leads == _shortest_prefixes(best)):
            return Plan(tuple(sorted(leads)), width, at_word=True)  # none inside, or the same literals at word starts
    if best and min(map(len, best)) >= MIN_LITERAL:
        return Plan(tuple(sorted(best)), width)
    return None


def _shortest_prefixes(literals: frozenset[str]) -> frozenset[str]:
    kept: list[str] = []
    for lit in sorted(literals):  # a literal's extensions follow it in sorted order
        if not kept or not lit.startswith(kept[-1]):
            kept.append(lit)
    return frozenset(kept)


def _case_sensitive_start(seq: list[Any]) -> bool:
    for op, av in seq:
        name = str(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        if name == "SUBPATTERN":
            return bool(av[2] & re.IGNORECASE) or _case_sensitive_start(list(av[-1]))
        return False
    return False


@functools.lru_cache(maxsize=None)
def required_literals(source: str, most: int = 6, shortest: int = 2) -> frozenset[str] | None:
    """A few literals (case-folded) one of which every match contains, or None.

    A stretch whose case-folded text holds none of them has no match: `str.find` says so
    at memory speed, where the `regex` module would try its alternation at every position."""
    try:
        best = _best(list(_parse(source)))
    except Exception:  # regex-module syntax
        return None
    if not best or len(best) > most or min(map(len, best)) < shortest:
        return None
    return best


@functools.lru_cache(maxsize=None)
def max_width(source: str) -> int | None:
    """How far past its start a match can reach or look (its longest match plus the reach of
    its lookarounds and boundaries), or None when unbounded or not analysable.

    Searching [lo, hi + max_width) then finds every match that starts before hi exactly as
    a search of the whole text would: no attempt there can see past the cut.
    """
    try:
        tree = _parse(source)
        _, hi = tree.getwidth()
    except Exception:  # syntax the standard parser does not know (regex-module extensions)
        return None
    if hi >= MAX_WIDTH or hi >= MAXREPEAT:
        return None
    reach = _assert_reach(list(tree))
    return None if reach is None else hi + reach + 2


def _parse(source: str):  # type: ignore[no-untyped-def]
    tree = parse(source)
    if tree is None:
        raise ValueError(f"not readable by the standard parser: {source!r}")
    return tree


class Literals:
    """Finds the occurrences of many literals in one pass; built once per rule set, and
    safe to share between threads (each `find` walks the automaton with its own iterator)."""

    def __init__(self, literals: Iterable[str]):
        self._automaton = ahocorasick.Automaton()
        for lit in set(literals):
            self._automaton.add_word(lit, lit)
        self._empty = not len(self._automaton)
        if not self._empty:
            self._automaton.make_automaton()

    def find(self, folded: str) -> dict[str, list[int]]:
        """The start of every occurrence (overlapping ones too) of each literal, in order."""
        found: dict[str, list[int]] = {}
        if self._empty:
            return found
        for end, lit in self._automaton.iter(folded):
            starts = found.get(lit)
            if starts is None:
                starts = found[lit] = []
            starts.append(end - len(lit) + 1)
        return found

    def starts(self, folded: str, lo: int, hi: int, at_word: bool = False) -> list[int]:
        """The sorted distinct starts of the literals' occurrences that lie within [lo, hi);
        with `at_word`, not those right after an ASCII letter, digit or underscore (a word
        character for any `\\b`)."""
        lo = max(0, lo)  # a negative start would slice from the end
        if self._empty or lo >= hi:
            return []
        # The automaton copies the string it walks to UCS-4: a slice, not the whole text per stretch.
        found = sorted({lo + end - len(lit) + 1 for end, lit in self._automaton.iter(folded[lo:hi])})
        return _word_starts(folded, found) if at_word else found


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _word_starts(folded: str, starts: Iterable[int]) -> list[int]:
    """The starts not right after an ASCII letter, digit or underscore: a character that
    folds to one of these is a word character, so no `\\b` lies before such a start."""
    return [i for i in starts if i == 0 or folded[i - 1] not in _WORD]


def windows(plan: Plan, folded: str, length: int,
            found: Mapping[str, Sequence[int]] | None = None) -> list[tuple[int, int]]:
    """Merged [lo, hi) windows around every occurrence of the plan's literals; `found`:
    their occurrences from `Literals.find` (else they are searched here)."""
    if found is None:
        found = {lit: _occurrences(folded, lit) for lit in plan.literals}
    if plan.at_word:
        found = {lit: _word_starts(folded, found.get(lit, ())) for lit in plan.literals}
    w = plan.width
    if len(plan.literals) == 1:  # one literal: its occurrences are in order, and all as long
        lit = plan.literals[0]
        return _merged(found.get(lit, ()), len(lit) + w, w, length)
    return merged_windows(sorted((i, i + len(lit)) for lit in plan.literals for i in found.get(lit, ())), w, length)


def merged_windows(spans: Iterable[tuple[int, int]], reach: int, length: int) -> list[tuple[int, int]]:
    """Union of [start - reach, end + reach) over spans sorted by start, clipped to [0, length)."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        lo, hi = s - reach if s > reach else 0, e + reach if e + reach < length else length
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _merged(starts: Sequence[int], right: int, left: int, length: int) -> list[tuple[int, int]]:
    """Merged [start - left, start + right) windows of sorted starts, clipped to [0, length)."""
    out: list[tuple[int, int]] = []
    if not starts:
        return out
    lo, hi = max(0, starts[0] - left), starts[0] + right
    for s in starts:
        if s - left > hi:
            out.append((lo, min(hi, length)))
            lo = s - left
        hi = s + right
    out.append((lo, min(hi, length)))
    return out


def _occurrences(folded: str, lit: str) -> list[int]:
    found: list[int] = []
    i = folded.find(lit)
    while i >= 0:
        found.append(i)
        i = folded.find(lit, i + 1)
    return found


@functools.lru_cache(maxsize=None)
def leading_literals(source: str, shortest: int = 1) -> frozenset[str] | None:
    """Literals (case-folded, none a prefix of another) one of which every match of the
    pattern begins with, after its zero-width assertions; None when some match may begin
    otherwise, when a literal would be shorter than `shortest`, or when the pattern can match
    the empty string.

    Optional characters and small classes are spelled out (`R-?[12]` begins with "r-1",
    "r-2", "r1" or "r2", not merely "r"), up to `EXPANSIONS` combinations. A search may then
    try only the positions where one of them occurs (`Literals.starts`)."""
    try:
        tree = _parse(source)
        if tree.getwidth()[0] == 0:
            return None
    except Exception:  # syntax the standard parser does not know (regex-module extensions)
        return None
    expanded = _expand(list(tree))
    if expanded is None or not all(expanded[0]):
        return None
    found = expanded[0]
    if min(map(len, found)) < shortest:
        return None
    return _shortest_prefixes(frozenset(found))  # a match that begins with "stemming" begins with "stem"


@functools.lru_cache(maxsize=None)
def begins_at_word(source: str) -> bool:
    """True when every match begins with `\\b` before a word character (`\\b(?:bleu|...)`): then
    a candidate position right after a letter or digit cannot begin one."""
    try:
        tree = list(_parse(source))
    except Exception:  # regex-module syntax
        return False
    return _begins_at_word(tree)


def _begins_at_word(seq: list[Any]) -> bool:
    if not seq:
        return False
    op, av = seq[0]
    if str(op) == "AT" and str(av) == "AT_BOUNDARY":
        first = _expand(seq[1:])
        return first is not None and all(lit[:1].isalnum() for lit in first[0])
    if str(op) == "SUBPATTERN":
        return _begins_at_word(list(av[-1]))
    if str(op) == "BRANCH":
        return all(_begins_at_word(list(branch)) for branch in av[1])
    return False


EXPANSIONS = 32
"""Most combinations a pattern's beginning is spelled out into (an alternation's own
branches always count, however many)."""


def _expand(seq: list[Any]) -> tuple[set[str], bool] | None:
    """The literal beginnings of a sequence, and whether they are its whole matches (so that
    what follows extends them); None when it may begin with something else."""
    prefixes = {""}
    for op, av in seq:
        name = str(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            if prefixes == {""}:
                continue  # zero-width: the match still begins at the next item
            return prefixes, False
        part = _item(name, av)
        if part is None:
            return (prefixes, False) if prefixes != {""} else None
        items, whole = part
        grown = {p + x for p in prefixes for x in items}
        if len(prefixes) > 1 and len(grown) > EXPANSIONS:  # spelling out combinations: stop here
            return (prefixes, False) if prefixes != {""} else None
        prefixes = grown
        if not whole:
            return prefixes, False
    return prefixes, True


def _item(name: str, av: Any) -> tuple[set[str], bool] | None:
    """What one parsed item may begin with (see `_expand`)."""
    if name == "LITERAL":
        return ({chr(av).casefold()}, True) if av < 128 and chr(av).isprintable() else None
    if name == "IN":
        if all(str(o) == "LITERAL" and c < 128 and chr(c).isprintable() for o, c in av):
            return {chr(c).casefold() for _, c in av}, True  # [.!?]
        return None
    if name == "SUBPATTERN":
        return _expand(list(av[-1]))
    if name == "BRANCH":
        union: set[str] = set()
        whole = True
        for branch in av[1]:
            found = _expand(list(branch))
            if found is None:
                return None
            union |= found[0]
            whole = whole and found[1]
        return union, whole
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] == 0 and av[1] == 1:
        found = _expand(list(av[2]))
        if found is None or not found[1]:
            return None
        return found[0] | {""}, True  # `-?`: with or without it
    return None


# ----------------------------------------------------------------------------- analysis

def _rank(requirement: frozenset[str]) -> tuple[float, int]:
    """How rare a requirement's literals are likely to be: longer is rarer, and each
    doubling of distinct beginnings counts as one character less ('rouge' is rarer than
    'report' or 'compute' or 'calculate')."""
    return min(map(len, requirement)) - math.log2(len(_shortest_prefixes(requirement))), -len(requirement)


def _best(seq: list[Any]) -> frozenset[str] | None:
    """The best requirement of a sequence: a set of literals one of which must occur."""
    candidates: list[frozenset[str]] = []
    run = ""
    for op, av in seq:
        name = str(op)
        if name == "LITERAL" and av < 128 and chr(av).isprintable():
            run += chr(av).casefold()
            continue
        if run:
            candidates.append(frozenset([run]))
            run = ""
        if name == "SUBPATTERN":
            inner = _best(list(av[-1]))
            if inner:
                candidates.append(inner)
        elif name == "BRANCH":
            union: set[str] = set()
            for branch in av[1]:
                req = _best(list(branch))
                if not req:
                    union = set()
                    break
                union |= req
            if union:
                candidates.append(frozenset(union))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
            inner = _best(list(av[2]))
            if inner:
                candidates.append(inner)
    if run:
        candidates.append(frozenset([run]))
    if not candidates:
        return None
    return max(candidates, key=_rank)


def _assert_reach(seq: list[Any]) -> int | None:
    """How far lookarounds may look beyond a match (None = unbounded)."""
    reach = 0
    for op, av in seq:
        name = str(op)
        if name in ("ASSERT", "ASSERT_NOT"):
            _, hi = av[1].getwidth()
            if hi >= MAX_WIDTH:
                return None
            inner = _assert_reach(list(av[1]))
            if inner is None:
                return None
            reach = max(reach, hi + inner)
        elif name == "SUBPATTERN":
            r = _assert_reach(list(av[-1]))
            if r is None:
                return None
            reach = max(reach, r)
        elif name == "BRANCH":
            for branch in av[1]:
                r = _assert_reach(list(branch))
                if r is None:
                    return None
                reach = max(reach, r)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            r = _assert_reach(list(av[2]))
            if r is None:
                return None
            reach = max(reach, r)
        elif name in ("GROUPREF", "GROUPREF_EXISTS", "ATOMIC_GROUP"):
            return None
    return reach
