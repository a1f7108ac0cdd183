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

from review.rules.model import Attachment, RuleSet
from review.rules.prefilter import max_width, merged_windows

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

NEAR_SENTENCE = 160
"""Characters around a hit searched for its sentence's ends first (most sentences are shorter)."""

PREFETCH_GAP = 32
"""Stretches this close are searched as one: a search call costs more than reading 32 characters."""


class Matches:
    """The matches of one pattern in one text, searched stretch by stretch as they are asked
    for, each stretch once.

    The judge asks for overlapping stretches (a sentence and its window, for every hit in
    it and around it); searching each anew cost more than every Table 5 rule, and the
    anchor alternations are too slow to search whole papers. Here a stretch already
    searched is answered by bisection, and only its parts not yet searched are searched,
    continuing after the last match known before them, as a whole-text search would.
    """

    def __init__(self, find: Callable[[int, int], list[Span]], length: int, source: str = ""):
        """`find(lo, hi)`: the pattern's matches in [lo, hi) (the caller guards time);
        `source`: the pattern, whose longest match (when bounded) sets how far past a
        stretch a search must read (`reach`) instead of `MARGIN`."""
        self._find = find
        self._length = length
        self.reach = max_width(source) or MARGIN
        self.spans: list[Span] = []  # sorted by start, non-overlapping
        self.starts: list[int] = []
        self.ends: list[int] = []  # sorted too: the matches do not overlap
        self._done: list[Span] = []  # disjoint sorted stretches whose match starts are all known

    def known(self, lo: int, hi: int) -> range:
        """Indexes (into `spans`, `starts`, `ends`) of the matches that start in [lo, hi),
        a stretch already searched (`fill`)."""
        return range(bisect.bisect_left(self.starts, lo), bisect.bisect_left(self.starts, hi))

    def fill(self, runs: Sequence[Span]) -> None:
        """Search the parts of `runs` (sorted, disjoint stretches) not searched before, all
        in one go: the new matches and stretches are merged into what is known once, not
        once per stretch."""
        gaps = self._gaps(runs)
        if not gaps:
            return
        spans, starts, limit = self.spans, self.starts, self._length
        found: list[Span] = []
        for lo, hi in gaps:
            i = bisect.bisect_left(starts, lo)
            begin = max(lo, spans[i - 1][1]) if i else lo  # not inside a match already known
            if found and found[-1][1] > begin:
                begin = found[-1][1]
            if begin < hi:
                found.extend(s for s in self._find(begin, min(limit, hi + self.reach)) if s[0] < hi)
        if found:
            spans[:] = sorted(spans + found)
            starts[:] = [s for s, _ in spans]
            self.ends[:] = [e for _, e in spans]
        self._done = merged_windows(sorted(self._done + gaps), 0, self._length)

    def _gaps(self, runs: Sequence[Span]) -> list[Span]:
        """The parts of the runs not yet searched, in order."""
        done, n = self._done, len(self._done)
        gaps: list[Span] = []
        j = 0
        for lo, hi in runs:
            lo, hi = max(0, lo), min(self._length, hi)
            while j < n and done[j][1] <= lo:
                j += 1
            k, pos = j, lo
            while pos < hi:
                if k < n and done[k][0] <= pos:
                    pos = max(pos, done[k][1])
                    k += 1
                    continue
                nxt = min(hi, done[k][0]) if k < n else hi
                gaps.append((pos, nxt))
                pos = nxt
        return gaps


class Judge:
    """Judges the hits of one text against the rule set's attachment policies.

    Every pattern is searched only where a hit's judgement needs it, and each stretch once
    (`Matches`): sentence ends within `sentence_chars` of a hit (policies that share the
    pattern share the search), cue words in its sentence, the metric's mention in its
    sentence or `window` beyond, rivals no farther than that mention. The anchor patterns
    are long alternations that would cost more over a whole paper than every Table 5 rule.

    `judge_all` takes a paper's hits together, test by test: the stretches every hit needs
    for one test are merged and searched first, a few searches per pattern and paper, and
    each hit's question is then answered from what is known. Asked hit by hit, the same
    stretches cost a search each (tens of thousands per corpus), and that Python overhead
    cost more than the searching itself. The verdicts are those of judging each hit alone.
    """

    def __init__(self, ruleset: RuleSet, text: str, regions: Mapping[str, Span | None], find: Finder):
        self.ruleset = ruleset
        self.text = text
        self.regions = regions
        self._find = find
        self._matches: dict[str, Matches] = {}
        self._policies: dict[str, _Resolved] = {}
        self._length = len(text)

    def _index(self, source: str, name: str) -> Matches:
        """The matches of a pattern, searched through the finder's `name`."""
        index = self._matches.get(source)
        if index is None:
            index = self._matches[source] = Matches(lambda lo, hi: self._find(name, lo, hi), len(self.text), source)
        return index

    def _anchor(self, anchor: str) -> Matches:
        return self._index(self.ruleset.anchors[anchor].source, f"anchor:{anchor}")

    def _resolved(self, policy: Attachment) -> _Resolved:
        found = self._policies.get(policy.name)
        if found is None:
            found = self._policies[policy.name] = _Resolved(
                policy, self._index(policy.sentence_end.source, f"sentence:{policy.name}"), self._anchor(policy.anchor),
                [(cue, self._anchor(cue)) for cue in policy.reject_sentence],
                [(other, self._anchor(other)) for other in policy.closer])
        return found

    def judge_all(self, items: Sequence[tuple[Attachment, int, int]]) -> list[Verdict]:
        """The verdict on each (policy, start, end), tested in the order of the reasons a
        reviewer reads: region, sentence cue, no mention, a closer rival."""
        hits = [(self._resolved(policy), start, end) for policy, start, end in items]
        verdicts: list[Verdict | None] = [self._region(r.policy, start) for r, start, _ in hits]
        live = [i for i, v in enumerate(verdicts) if v is None]
        sentences = self._sentences(hits, live)
        self._cues(hits, live, sentences, verdicts)
        best = self._mentions(hits, [i for i in live if verdicts[i] is None], sentences, verdicts)
        self._rivals(hits, best, sentences, verdicts)
        return [v if v is not None else
                Verdict(attached=f"{items[i][0].anchor} {self._quote(best[i][1])} at {best[i][1][0]}")
                for i, v in enumerate(verdicts)]

    def _cues(self, hits: list[_Hit], live: list[int], sentences: dict[int, Span],
              verdicts: list[Verdict | None]) -> None:
        """Rejects the hits whose sentence names a cue, each policy's cues in its order."""
        for k in range(max((len(hits[i][0].cues) for i in live), default=0)):
            todo = [i for i in live if verdicts[i] is None and k < len(hits[i][0].cues)]
            _prefetch((hits[i][0].cues[k][1], *sentences[i]) for i in todo)
            for i in todo:
                verdicts[i] = self._cue(*hits[i][0].cues[k], sentences[i])

    def _mentions(self, hits: list[_Hit], todo: list[int], sentences: dict[int, Span],
                  verdicts: list[Verdict | None]) -> dict[int, tuple[tuple[int, int], Span]]:
        """The nearest mention of each hit, ranked; rejects the hits that have none."""
        _prefetch((hits[i][0].anchor, sentences[i][0] - hits[i][0].window, sentences[i][1] + hits[i][0].window)
                  for i in todo)
        best: dict[int, tuple[tuple[int, int], Span]] = {}
        for i in todo:
            found = self._mention(*hits[i], sentences[i])
            if isinstance(found, Verdict):
                verdicts[i] = found
            else:
                best[i] = found
        return best

    def _rivals(self, hits: list[_Hit], best: dict[int, tuple[tuple[int, int], Span]], sentences: dict[int, Span],
                verdicts: list[Verdict | None]) -> None:
        """Rejects the hits with a rival nearer than their mention, each policy's in its order."""
        stretches = {i: _rival_stretch(hits[i][1], hits[i][2], sentences[i], best[i][0]) for i in best}
        for k in range(max((len(hits[i][0].closer) for i in best), default=0)):
            todo = [i for i in best if verdicts[i] is None and k < len(hits[i][0].closer)]
            _prefetch((index, stretches[i][0] - index.reach, stretches[i][1])
                      for i in todo for index in (hits[i][0].closer[k][1],))
            for i in todo:
                verdicts[i] = self._rival(hits[i], k, sentences[i], stretches[i], best[i])

    def _sentences(self, hits: list[_Hit], live: list[int]) -> dict[int, Span]:
        """Each live hit's sentence. Sentence ends are searched `NEAR_SENTENCE` characters
        around the hits first, which settles most sentences (a boundary found on each side
        is the nearest one), and out to `sentence_chars` only for the others."""
        out: dict[int, Span] = {}
        for near in (True, False):
            todo = [i for i in live if i not in out]
            _prefetch((r.bounds, s - _step(r, near) - r.bounds.reach, e + _step(r, near))
                      for r, s, e in (hits[i] for i in todo))
            for i in todo:
                span = self._sentence(*hits[i], _step(hits[i][0], near))
                if span is not None:
                    out[i] = span
        return out

    def _region(self, policy: Attachment, start: int) -> Verdict | None:
        for reg in policy.reject_regions:
            span = self.regions.get(reg)
            if span is not None and span[0] <= start < span[1]:
                return Verdict(reason=f"in the {reg} region")
        return None

    def _cue(self, cue: str, index: Matches, sentence: Span) -> Verdict | None:
        lo, hi = sentence
        ends = index.ends
        for j in index.known(lo, hi):
            if ends[j] > lo:
                return Verdict(reason=f"its sentence names {cue} ({self._quote(index.spans[j])})")
        return None

    def _mention(self, r: _Resolved, start: int, end: int, sentence: Span) -> Verdict | tuple[tuple[int, int], Span]:
        lo, hi = sentence[0] - r.window, sentence[1] + r.window
        best = _closest(r.anchor, r.anchor.known(lo, hi), start, end, sentence, lo, hi)
        if best is None:
            where = "its sentence" + (f" or within {r.window} characters" if r.window else "")
            return Verdict(reason=f"no {r.policy.anchor} mention in {where}")
        return best

    def _rival(self, hit: _Hit, k: int, sentence: Span, stretch: Span,
               best: tuple[tuple[int, int], Span]) -> Verdict | None:
        r, start, end = hit
        other, index = r.closer[k]
        lo, hi = sentence[0] - r.window, sentence[1] + r.window
        rival = _closest(index, index.known(stretch[0] - index.reach, stretch[1]), start, end, sentence, lo, hi)
        if rival is not None and rival[0] < best[0]:
            return Verdict(reason=f"{other} ({self._quote(rival[1])}) is named closer than "
                                  f"{r.policy.anchor} ({self._quote(best[1])})")
        return None

    def _sentence(self, r: _Resolved, start: int, end: int, step: int) -> Span | None:
        """The sentence, when the boundaries searched `step` characters around the hit settle
        it (else None): the last boundary ending at or before the hit, and the first starting
        at or after its end (one inside it, a period in "1.5.5", does not split it), within
        `sentence_chars` either side."""
        index, cap, length = r.bounds, r.cap, self._length
        starts, ends = index.starts, index.ends
        lo_from = start - step - index.reach
        i = bisect.bisect_right(ends, start)
        if i > bisect.bisect_left(starts, lo_from):
            lo = ends[i - 1]
        elif lo_from <= 0 or step >= cap:
            lo = 0
        else:
            return None
        k = bisect.bisect_left(starts, end)
        if k < len(starts) and starts[k] < end + step:
            hi = starts[k]
        elif end + step >= length or step >= cap:
            hi = length
        else:
            return None
        return max(lo, start - cap, 0), min(hi, end + cap, length)

    def _quote(self, span: Span) -> str:
        snippet = " ".join(self.text[span[0]:span[1]].split())
        return repr(snippet[:40])


@dataclass
class _Resolved:
    """A policy with the indexes of its patterns in one text, looked up once per paper."""

    policy: Attachment
    bounds: Matches
    anchor: Matches
    cues: list[tuple[str, Matches]]
    closer: list[tuple[str, Matches]]

    def __post_init__(self) -> None:
        self.cap = self.policy.sentence_chars
        self.window = self.policy.window


_Hit = tuple[_Resolved, int, int]  # a match to judge: its policy's indexes, start, end


def _step(r: _Resolved, near: bool) -> int:
    return min(NEAR_SENTENCE, r.cap) if near else r.cap


def _rival_stretch(start: int, end: int, sentence: Span, rank: tuple[int, int]) -> Span:
    """Where a rival nearer than the mention (ranked `rank`) can lie: a rival beats the
    mention only from nearer, so within its gap of the hit, in the sentence unless the
    mention is outside it."""
    outside, gap = rank
    if outside:
        return min(sentence[0], start - gap), max(sentence[1], end + gap)
    return max(sentence[0], start - gap), min(sentence[1], end + gap)


def _prefetch(stretches: Iterable[tuple[Matches, int, int]]) -> None:
    """Search each pattern once per merged run of the stretches it will be asked for."""
    by_index: dict[Matches, list[Span]] = {}
    for index, lo, hi in stretches:
        by_index.setdefault(index, []).append((lo, hi))
    for index, spans in by_index.items():
        spans.sort()
        runs: list[Span] = []
        run_lo, run_hi = spans[0]
        for lo, hi in spans:
            if lo > run_hi + PREFETCH_GAP:
                runs.append((run_lo, run_hi))
                run_lo, run_hi = lo, hi
            elif hi > run_hi:
                run_hi = hi
        runs.append((run_lo, run_hi))
        index.fill(runs)


def _closest(index: Matches, found: range, start: int, end: int, sentence: Span, lo: int,
             hi: int) -> tuple[tuple[int, int], Span] | None:
    """The match nearest the hit, ranked (not in its sentence, characters between)."""
    best: tuple[tuple[int, int], Span] | None = None
    starts, ends = index.starts, index.ends
    for j in found:
        s, e = starts[j], ends[j]
        if e <= lo:
            continue
        if s >= hi:
            break
        key = (0 if sentence[0] <= s and e <= sentence[1] else 1, max(0, s - end, start - e))
        if best is None or key < best[0]:
            best = (key, index.spans[j])
    return best


def describe(verdict: Verdict) -> dict[str, Any]:
    return {"attached": verdict.attached} if verdict.accepted else {"reason": verdict.reason}
