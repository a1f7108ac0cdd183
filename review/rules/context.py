"""Attachment: a match counts only when it speaks of the metric the review is about.

Table 5 counts "precision" or "stemming" within 500 characters of "ROUGE", which also
takes BERTScore's precision, METEOR's stemming, the tokenization of the training data and
"ROUGE is recall-oriented" from related work. A rule with `attach = "NAME"` instead keeps
a match only when the rule file's `[attachments.NAME]` policy attaches it to a mention of
the metric; otherwise the match is kept aside with the reason, so a reviewer sees why.

Everything the judgement knows about words (the metric's mention, the other metrics, the
cue words of related work or preprocessing, what ends a sentence, which text regions do not
count) is a named pattern in the rule file: this module only measures where those patterns
match relative to the hit. The order of the tests is the order of the reasons a reviewer
reads: region, sentence cue, no mention, a closer competitor.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from review.rules.engine import merged_windows
from review.rules.model import Attachment, RuleSet

Span = tuple[int, int]


@dataclass(frozen=True)
class Verdict:
    """Where a match stands: attached to a mention (accepted) or rejected with a reason."""

    attached: str = ""  # e.g. "rouge 'ROUGE-L' at 1234" when accepted
    reason: str = ""  # why not, when rejected

    @property
    def accepted(self) -> bool:
        return not self.reason


Finder = Callable[[str, int, int], list[Span]]
"""`find(name, lo, hi)`: spans of "anchor:NAME" or "sentence:POLICY" matches starting in [lo, hi)."""

MARGIN = 64
"""Characters searched past a window's end, so a mention that starts inside it is found whole."""


class Judge:
    """Judges the hits of one text against the rule set's attachment policies.

    Sentence ends are searched once per text and policy, only around the hits to judge (a
    sentence is cut at `sentence_chars` on each side of its match); anchors only in the
    stretch that can decide a hit: cue words in its sentence, the metric's mention in its
    sentence or `window` beyond, rivals no farther than that mention. The anchor patterns
    are long alternations that would cost more over a whole paper than every Table 5 rule.
    """

    def __init__(self, ruleset: RuleSet, text: str, regions: Mapping[str, Span | None], find: Finder,
                 hits: Mapping[str, Sequence[Span]]):
        """`hits`: the spans to be judged, by policy name."""
        self.ruleset = ruleset
        self.text = text
        self.regions = regions
        self._find = find
        self._hits = hits
        self._spans: dict[str, list[Span]] = {}
        self._ends: dict[str, list[int]] = {}

    def boundaries(self, policy: Attachment) -> list[Span]:
        """The policy's sentence ends in the windows around its hits."""
        key = policy.name
        if key not in self._spans:
            out: list[Span] = []
            for lo, hi in merged_windows(sorted(self._hits.get(policy.name, ())), policy.sentence_chars, len(self.text)):
                out.extend(s for s in self._find(f"sentence:{key}", lo, min(len(self.text), hi + MARGIN))
                           if s[0] < hi)
            self._spans[key] = out
        return self._spans[key]

    def spans(self, anchor: str, lo: int, hi: int) -> list[Span]:
        """Matches of an anchor that start in [lo, hi) (cached: hits of one sentence ask the same)."""
        lo, hi = max(0, lo), min(len(self.text), hi)
        key = f"{anchor}@{lo}:{hi}"
        if key not in self._spans:
            self._spans[key] = [s for s in self._find(f"anchor:{anchor}", lo, min(len(self.text), hi + MARGIN))
                                if s[0] < hi] if lo < hi else []
        return self._spans[key]

    def judge(self, policy: Attachment, start: int, end: int) -> Verdict:
        for reg in policy.reject_regions:
            span = self.regions.get(reg)
            if span is not None and span[0] <= start < span[1]:
                return Verdict(reason=f"in the {reg} region")
        sentence = self.sentence(policy, start, end)
        for cue in policy.reject_sentence:
            hit = _first_within(self.spans(cue, *sentence), *sentence)
            if hit is not None:
                return Verdict(reason=f"its sentence names {cue} ({self._quote(hit)})")
        lo, hi = sentence[0] - policy.window, sentence[1] + policy.window
        best = _closest(self.spans(policy.anchor, lo, hi), start, end, sentence, lo, hi)
        if best is None:
            where = "its sentence" + (f" or within {policy.window} characters" if policy.window else "")
            return Verdict(reason=f"no {policy.anchor} mention in {where}")
        # a rival beats the mention only from nearer: from the sentence when the mention is in it;
        # searched once per sentence (the hits of one sentence share the search)
        r_lo, r_hi = (lo, hi) if best[0][0] else sentence
        for other in policy.closer:
            rival = _closest(self.spans(other, r_lo - MARGIN, r_hi), start, end, sentence, lo, hi)
            if rival is not None and rival[0] < best[0]:
                return Verdict(reason=f"{other} ({self._quote(rival[1])}) is named closer than "
                                      f"{policy.anchor} ({self._quote(best[1])})")
        return Verdict(attached=f"{policy.anchor} {self._quote(best[1])} at {best[1][0]}")

    def sentence(self, policy: Attachment, start: int, end: int) -> Span:
        """The sentence around [start, end): from the last boundary before it to the next after it."""
        bounds = self.boundaries(policy)
        ends = self._ends.get(policy.name)
        if ends is None:
            ends = self._ends[policy.name] = [e for _, e in bounds]
        i = bisect.bisect_right(ends, start)  # boundaries ending at or before the hit: [0, i)
        lo = ends[i - 1] if i else 0
        while i < len(bounds) and bounds[i][0] < end:
            i += 1  # a boundary inside the hit (a period in "1.5.5") does not split it
        hi = bounds[i][0] if i < len(bounds) else len(self.text)
        cap = policy.sentence_chars
        return max(lo, start - cap, 0), min(hi, end + cap, len(self.text))

    def _quote(self, span: Span) -> str:
        snippet = " ".join(self.text[span[0]:span[1]].split())
        return repr(snippet[:40])


def _first_within(spans: Sequence[Span], lo: int, hi: int) -> Span | None:
    for s in spans:
        if s[0] >= hi:
            return None
        if s[1] > lo:
            return s
    return None


def _closest(spans: Iterable[Span], start: int, end: int, sentence: Span, lo: int,
             hi: int) -> tuple[tuple[int, int], Span] | None:
    """The span nearest the hit, ranked (not in its sentence, characters between)."""
    best: tuple[tuple[int, int], Span] | None = None
    for s in spans:
        if s[1] <= lo:
            continue
        if s[0] >= hi:
            break
        outside = 0 if sentence[0] <= s[0] and s[1] <= sentence[1] else 1
        gap = max(0, s[0] - end, start - s[1])
        key = (outside, gap)
        if best is None or key < best[0]:
            best = (key, s)
    return best


def describe(verdict: Verdict) -> dict[str, Any]:
    return {"attached": verdict.attached} if verdict.accepted else {"reason": verdict.reason}
