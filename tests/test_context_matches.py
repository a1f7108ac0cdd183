"""`review.rules.context.Matches`: the attachment judge searches a pattern only in the
stretches it asks for, each once; the answers must be those of one search of the whole
text, whatever the order and overlap of the stretches."""

from __future__ import annotations

import random

import regex

from review.rules.context import Matches

TEXT = ("We report ROUGE-1 and BLEU. The human judges and the accuracy of the classifier differ. "
        "Scores use ROUGE-L F1; METEOR and bert score are given too. ") * 40
PATTERNS = [
    r"\b(?:bleu|meteor|bert score|bert|accuracy|acc|human|judges|classifiers?)\b",  # bounded width
    r"[.!?](?<=[a-z0-9)][.!?])\s+(?=(?-i:[A-Z]))",  # a sentence end (lookbehind: no width known)
    r"\w+ \w+",  # matches that abut: a stretch must not start inside one
]


def _ask(index: Matches, lo: int, hi: int) -> list[tuple[int, int]]:
    """The matches starting in [lo, hi), asked the way the judge asks: search, then read."""
    index.fill([(lo, hi)])
    return [index.spans[j] for j in index.known(max(0, lo), min(len(TEXT), hi))]


def _whole(compiled: regex.Pattern, lo: int, hi: int) -> list[tuple[int, int]]:
    return [m.span() for m in compiled.finditer(TEXT) if lo <= m.start() < hi]


def test_stretch_answers_equal_a_whole_text_search() -> None:
    rng = random.Random(3)
    for source in PATTERNS[:2]:  # a fresh stretch of PATTERNS[2] may start inside a match
        compiled = regex.compile(source, regex.IGNORECASE)
        calls: list[tuple[int, int]] = []

        def find(lo: int, hi: int, c: regex.Pattern = compiled) -> list[tuple[int, int]]:
            calls.append((lo, hi))
            return [m.span() for m in c.finditer(TEXT, lo, hi)]

        index = Matches(find, len(TEXT), source)
        for _ in range(300):
            lo = rng.randrange(-50, len(TEXT))
            hi = lo + rng.randrange(0, 400)
            assert _ask(index, lo, hi) == _whole(compiled, max(0, lo), min(len(TEXT), hi)), (source, lo, hi)
        searched = sum(hi - lo for lo, hi in calls)
        assert searched < 3 * len(TEXT)  # each stretch once (plus the read past its end), not per question


def test_a_stretch_asked_twice_is_searched_once() -> None:
    compiled = regex.compile(PATTERNS[0], regex.IGNORECASE)
    calls: list[tuple[int, int]] = []

    def find(lo: int, hi: int) -> list[tuple[int, int]]:
        calls.append((lo, hi))
        return [m.span() for m in compiled.finditer(TEXT, lo, hi)]

    index = Matches(find, len(TEXT), PATTERNS[0])
    first = _ask(index, 100, 600)
    assert _ask(index, 200, 500) == [s for s in first if 200 <= s[0] < 500]
    assert len(calls) == 1
    _ask(index, 50, 700)
    assert [lo for lo, _ in calls[1:]] == [50, 600]  # only the parts not yet searched


def test_a_new_stretch_continues_after_the_last_known_match() -> None:
    compiled = regex.compile(PATTERNS[2], regex.IGNORECASE)
    index = Matches(lambda lo, hi: [m.span() for m in compiled.finditer(TEXT, lo, hi)], len(TEXT), PATTERNS[2])
    _ask(index, 0, 100)
    for lo in range(90, 140, 7):  # each starts where the search left off, perhaps inside a match
        _ask(index, lo, lo + 7)
    assert _ask(index, 0, 150) == _whole(compiled, 0, 150)


def test_runs_filled_together_equal_a_whole_text_search() -> None:
    """`fill` searches many stretches in one go (what the judge prefetches): the matches it
    learns, and those a later question reads, are those of one search of the whole text."""
    rng = random.Random(5)
    for source in PATTERNS[:2]:  # a fresh stretch of PATTERNS[2] may start inside a match
        compiled = regex.compile(source, regex.IGNORECASE)
        index = Matches(lambda lo, hi, c=compiled: [m.span() for m in c.finditer(TEXT, lo, hi)], len(TEXT), source)
        covered = 0
        for _ in range(20):
            points = sorted(rng.sample(range(-20, len(TEXT) + 20), 2 * rng.randrange(1, 8)))
            runs = list(zip(points[::2], points[1::2]))
            index.fill(runs)
            covered = max(covered, *(hi for _, hi in runs))
        for lo, hi in index._done:
            assert _ask(index, lo, hi) == _whole(compiled, lo, hi), (source, lo, hi)
        assert index.spans == sorted(set(index.spans))
        assert index.starts == [s for s, _ in index.spans] and index.ends == [e for _, e in index.spans]


def test_a_run_filled_with_others_continues_after_the_match_found_before_it() -> None:
    compiled = regex.compile(PATTERNS[2], regex.IGNORECASE)
    index = Matches(lambda lo, hi: [m.span() for m in compiled.finditer(TEXT, lo, hi)], len(TEXT), PATTERNS[2])
    index.fill([(0, 100), *((lo, lo + 7) for lo in range(100, 150, 7))])  # each starts where the last match ended or inside it
    assert _ask(index, 0, 149) == _whole(compiled, 0, 149)
