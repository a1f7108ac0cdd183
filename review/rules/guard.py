"""Which rule patterns can run away, and the per-paper time budget that contains them.

Rule files come from users, and a backtracking pattern such as `(a+)+b` takes exponential
time on a long run of "a" (`review label` stalled for minutes on one paper). Two defences:

- at load time, `nested_quantifier` finds an unbounded repeat inside an unbounded repeat
  (`(a+)+`, `(\\w*)*`, `(?:x+y?)*`), the classic cause, so the rule file's author is
  warned with the rule's name;
- at match time, the engine gives each rule `label.regex_timeout` CPU seconds per paper
  (the `regex` module's `timeout=`, which counts the process's CPU time); a rule that
  runs past it is recorded as timed out on that paper and the others go on.

The timer is not free: the `regex` module reads the CPU clock on every call, about 12 µs,
more than a whole match of a typical rule in one window. So `needs_timer` exempts the
patterns that cannot run away: those whose work per text position is bounded by the
pattern alone (no unbounded repeat, at most `MAX_CHOICES` backtracking choices per
position counting every way to split a repeated group, no back-references), which is
every Table 5 pattern but two. Every
other pattern, and every pattern the standard parser cannot read (syntax only the `regex`
module knows, such as fuzzy matching), runs under the timer.
"""

from __future__ import annotations

import re
import time
from typing import Any

from review.rules.syntax import MAXREPEAT
from review.rules.syntax import parse as _parse

MAX_CHOICES = 10_000
"""Most backtracking choices per text position a pattern may have and still run untimed."""

_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_SINGLE = ("LITERAL", "NOT_LITERAL", "IN", "ANY", "CATEGORY", "AT")
_NOT_A_QUANTIFIER = re.compile(r"(?<!\\)\{(?!\d*,?\d*\})")  # `{e<=1}` and friends: regex-only syntax


def nested_quantifier(source: str) -> bool:
    """True when an unbounded repeat holds another one that makes its iterations ambiguous.

    `(a+)+$`, `(\\w*)*x` and `(?:x+y?)*z` are flagged: where one iteration ends and the
    next begins is not fixed, so when what follows fails, every split is tried
    (exponentially many). Not flagged: a body that starts with a character its inner repeat
    cannot match (`(?:\\+[\\w.-]+)+`), and a repeat that ends the pattern with a minimum of
    at most 2, which never backtracks more than a square of the text (`x(a+)+`).
    """
    tree = _parse(source)
    return tree is not None and _nested(list(tree), tail_free=True)


def _nested(seq: list[Any], tail_free: bool) -> bool:
    """`tail_free`: nothing in the pattern follows this sequence, so nothing after it can fail."""
    for i, (op, av) in enumerate(seq):
        name = str(op)
        last = tail_free and i == len(seq) - 1
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            body = list(av[2])
            if (av[1] >= MAXREPEAT and _has_unbounded(body) and _ambiguous(body)
                    and not (last and av[0] <= 2)):
                return True
            if _nested(body, tail_free=False):
                return True
        elif name != "POSSESSIVE_REPEAT":  # a possessive repeat never backtracks into its body
            # lookarounds and atomic groups are never re-entered once they matched
            free = True if name in ("ASSERT", "ASSERT_NOT", "ATOMIC_GROUP") else last
            if any(_nested(child, free) for child in _children(name, av)):
                return True
    return False


def _has_unbounded(seq: list[Any]) -> bool:
    for op, av in seq:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT") and (av[1] >= MAXREPEAT or _has_unbounded(list(av[2]))):
            return True
        if name not in _REPEATS and any(_has_unbounded(c) for c in _children(name, av)):
            return True
    return False


def _ambiguous(body: list[Any]) -> bool:
    """Can the end of one iteration also be read as the start of the next?"""
    first, nullable = _first(body)
    return nullable or bool(first & _tail(body))


def _first(seq: list[Any]) -> tuple[frozenset[str], bool]:
    """Characters a match of `seq` can start with (over a sample alphabet), and whether it can be empty."""
    chars: set[str] = set()
    for op, av in seq:
        name = str(op)
        if name in _SINGLE and name != "AT":
            return frozenset(chars | _chars(name, av)), False
        if name in _REPEATS:
            inner, empty = _first(list(av[2]))
            chars |= inner
            if av[0] > 0 and not empty:
                return frozenset(chars), False
        elif name in ("SUBPATTERN", "ATOMIC_GROUP", "BRANCH"):
            parts = [_first(c) for c in _children(name, av)]
            chars |= set().union(*(p[0] for p in parts))
            if not any(p[1] for p in parts):
                return frozenset(chars), False
        elif name in ("GROUPREF", "GROUPREF_EXISTS"):
            return frozenset(ALPHABET), True
    return frozenset(chars), True


def _tail(seq: list[Any]) -> frozenset[str]:
    """Characters an unbounded repeat at the end of a match of `seq` can take."""
    chars: set[str] = set()
    for op, av in reversed(seq):
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            body = list(av[2])
            if av[1] >= MAXREPEAT:
                chars |= _first(body)[0] | _tail(body)
            else:
                chars |= _tail(body)
            if av[0] > 0 and not _first(body)[1]:
                break
        elif name in ("SUBPATTERN", "ATOMIC_GROUP", "BRANCH"):
            children = _children(name, av)
            chars |= set().union(*(_tail(c) for c in children))
            if not any(_first(c)[1] for c in children):
                break
        elif name in _SINGLE and name != "AT":
            break
    return frozenset(chars)


ALPHABET = frozenset(chr(c) for c in range(32, 127)) | frozenset("\t\néüßαЖ中")
_CATEGORIES = {
    "CATEGORY_DIGIT": str.isdigit, "CATEGORY_SPACE": str.isspace,
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
}


def _chars(name: str, av: Any) -> set[str]:
    """The sample characters one single-character item matches (case-insensitively)."""
    if name == "ANY":
        return set(ALPHABET)
    if name in ("LITERAL", "NOT_LITERAL"):
        hit = {c for c in ALPHABET if c.casefold() == chr(av).casefold()}
        return hit if name == "LITERAL" else set(ALPHABET) - hit
    if name == "CATEGORY":
        return {c for c in ALPHABET if _in_category(str(av), c)}
    items = list(av)  # IN
    negate = bool(items) and str(items[0][0]) == "NEGATE"
    found = {c for c in ALPHABET if any(_in_item(str(o), a, c) for o, a in items if str(o) != "NEGATE")}
    return set(ALPHABET) - found if negate else found


def _in_category(category: str, c: str) -> bool:
    negated = category.startswith("CATEGORY_NOT_")
    test = _CATEGORIES.get(category.replace("CATEGORY_NOT_", "CATEGORY_"))
    return True if test is None else test(c) != negated


def _in_item(op: str, av: Any, c: str) -> bool:
    if op == "LITERAL":
        return c.casefold() == chr(av).casefold()
    if op == "RANGE":
        return any(av[0] <= ord(x) <= av[1] for x in {c, c.lower(), c.upper()} if len(x) == 1)
    if op == "CATEGORY":
        return _in_category(str(av), c)
    return True  # anything else: assume it may match


def needs_timer(source: str) -> bool:
    """False only when the pattern's work per text position is bounded by the pattern itself."""
    if _NOT_A_QUANTIFIER.search(source):
        return True
    tree = _parse(source)
    if tree is None:
        return True
    choices = _choices(list(tree))
    return choices is None or choices > MAX_CHOICES


def _choices(seq: list[Any]) -> int | None:
    """Backtracking choices of a sequence (product over its parts), None when unbounded."""
    total = 1
    for op, av in seq:
        name = str(op)
        if name in _REPEATS:
            lo, hi, body = av[0], av[1], list(av[2])
            if hi >= MAXREPEAT:
                return None
            if all(str(o) in _SINGLE for o, _ in body):
                total *= hi - lo + 1
                continue
            inner = _choices(body)  # a repeated group: every way to split the repetitions
            if inner is None:
                return None
            ways = sum(inner ** k for k in range(lo, min(hi, 64) + 1))
            total *= ways if hi <= 64 else MAX_CHOICES + 1
        elif name == "BRANCH":
            alternatives = [_choices(list(b)) for b in av[1]]
            if any(a is None for a in alternatives):
                return None
            total *= sum(alternatives)  # type: ignore[arg-type]
        elif name in ("GROUPREF", "GROUPREF_EXISTS"):
            return None
        else:
            for child in _children(name, av):
                inner = _choices(child)
                if inner is None:
                    return None
                total *= inner
        if total > MAX_CHOICES:
            return total
    return total


def _children(name: str, av: Any) -> list[list[Any]]:
    if name == "SUBPATTERN":
        return [list(av[-1])]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [list(av[1])]
    if name == "ATOMIC_GROUP":
        return [list(av)]
    if name == "BRANCH":
        return [list(b) for b in av[1]]
    return []


class Budget:
    """The CPU time one rule may still spend on one text."""

    __slots__ = ("end",)

    def __init__(self, seconds: float):
        self.end = time.process_time() + seconds

    def left(self) -> float:
        """Seconds left for the next call; `TimeoutError` when none are."""
        left = self.end - time.process_time()
        if left <= 0:
            raise TimeoutError("regex timed out")
        return left
