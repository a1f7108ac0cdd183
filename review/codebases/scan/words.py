"""Small text helpers shared by the scan's modules: comments, clipping, the words a name is
made of, and cheap pre-filters that skip a regex when its required literal is absent."""

from __future__ import annotations

import re

from review.codebases.catalog import literal_hint

MAX_TEXT = 200
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[a-z]+")


def is_comment(line: str) -> bool:
    s = line.lstrip()
    return s.startswith("#") or s.startswith("//") or s.lower().startswith("rem ")


def uncomment(line: str) -> str:
    return line.lstrip().lstrip("#/").strip()


def clip(text: str) -> str:
    s = text.strip()
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


def words(name: str) -> list[str]:
    """`MatchRougeMetric` -> match, rouge, metric; `train_full_rl.py` -> train, full, rl, py."""
    return [w.lower() for w in _WORD.findall(name)]


_HINTS: dict[str, str | None] = {}


def hint(rx: re.Pattern[str]) -> str | None:
    if rx.pattern not in _HINTS:
        _HINTS[rx.pattern] = literal_hint(rx.pattern)
    return _HINTS[rx.pattern]


def hit(rx: re.Pattern[str], text: str, lower: str) -> re.Match[str] | None:
    """rx.search(text), skipped when the pattern's required literal is absent."""
    h = hint(rx)
    if h is not None and h not in lower:
        return None
    return rx.search(text)


class Prefilter:
    """Could any of these patterns match? Plain substring tests first, regexes only for the rest."""

    def __init__(self, patterns: list[re.Pattern[str]]):
        self.hints = tuple(sorted({h for rx in patterns if (h := hint(rx)) is not None}))
        self.unhinted = [rx for rx in patterns if hint(rx) is None]

    def may(self, text: str, lower: str) -> bool:
        return any(h in lower for h in self.hints) or any(rx.search(text) for rx in self.unhinted)
