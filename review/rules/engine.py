"""Run a compiled `RuleSet` over one text, fast, and return its findings.

Why it is fast without changing results:

1. The preliminary pattern (`rouge`) is searched first. With `gate = true` a text without
   it leaves the review at once; in a real corpus that is about 95% of the papers, which
   then cost one literal search instead of one scan per pattern.
2. Patterns are compiled once per rule set with the `regex` module, whose literal-prefix
   search is roughly 10x faster than `re` on case-insensitive patterns.
3. A pattern with a literal every match must contain and a bounded width is scanned only
   in windows around that literal's occurrences (`review.rules.prefilter`, exact).
4. Rules that only count near an anchor (protocol and measure terms within 500 characters
   of "ROUGE") and have no such literal scan only the merged windows around the anchor
   mentions (plus a margin), not the whole text.

5. User patterns cannot stall a run: a rule whose patterns may backtrack without bound
   (`review.rules.guard.needs_timer`) runs under the `regex` module's `timeout=` with
   `label.regex_timeout` CPU seconds per paper; past it the rule is left out for that
   paper and named in `Scan.timed_out`. The other patterns skip the timer's clock reads.

`naive_scan` is the obvious implementation (one `re.finditer` per pattern over the whole
text, filters applied afterwards); tests and the benchmark use it to show that the fast
path yields identical labels.
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from review.rules.guard import Budget, needs_timer
from review.rules.model import Kind, Pattern, Region, Rule, RuleSet
from review.rules.prefilter import (Literals, begins_at_word, leading_literals, merged_windows, plan_for,
                                   required_literals, windows)

DEFAULT_TIMEOUT = 1.0
"""CPU seconds per rule and paper when none is given (the default of `label.regex_timeout`)."""

LEADING_LITERAL = 2
"""Shortest leading literal for which the judge's searches try only the literals' positions."""

VALUED = frozenset({Kind.PARAMS, Kind.CODE_URL})
"""Kinds whose matched value (not only the rule's label) is what the paper is labelled with."""

MARGIN = 256
"""Extra characters scanned on both sides of an anchor window, so a match that starts
inside the window but reaches past it is still found whole (longer matches of near-anchor
rules are not supported)."""


@dataclass(frozen=True)
class Hit:
    """One rule match: the evidence behind a label."""

    rule_id: str
    kind: Kind
    label: str
    start: int
    end: int
    match: str
    value: str  # the capture group for params, the URL for code links, else the match
    attached: str = ""  # the mention an attached rule's match refers to (`attach`), e.g. "rouge 'ROUGE-L' at 912"

    def snippet(self, text: str, chars: int) -> str:
        left = max(0, self.start - chars)
        right = min(len(text), self.end + chars)
        core = " ".join(text[left:right].split())
        return ("…" if left > 0 else "") + core + ("…" if right < len(text) else "")


@dataclass(frozen=True)
class Rejected:
    """A match its rule's attachment policy did not accept, with the reason (kept as evidence)."""

    hit: Hit
    reason: str


@dataclass
class Scan:
    """Everything the rules found in one text (after windows and regions are applied)."""

    prelim: bool
    hits: list[Hit] = field(default_factory=list)
    gated: bool = False  # true when the text left at the preliminary search
    timed_out: list[str] = field(default_factory=list)  # rule ids (or [prelim], [anchors.x], [regions.x]) cut off
    rejected: list[Rejected] = field(default_factory=list)  # matches of attached rules that did not attach


@dataclass
class _Text:
    """One text as a scan sees it: its case-folded form when the positions there are the
    text's (else None, and no literal prefilter), the occurrences of the rule set's
    literals in it, and the names of what ran out of time on it."""

    text: str
    folded: str | None
    occurrences: Mapping[str, Sequence[int]]
    timed_out: list[str]


class Engine:
    """A rule set compiled once; `scan(text)` is safe to call from many threads.

    `timeout`: CPU seconds each rule (and the preliminary, anchor and region patterns) may
    spend on one text; None runs without a limit.
    """

    def __init__(self, ruleset: RuleSet, *, timeout: float | None = DEFAULT_TIMEOUT):
        self.ruleset = ruleset
        self.timeout = timeout
        self._anywhere = [r for r in ruleset.rules if r.near is None]
        self._near = [r for r in ruleset.rules if r.near is not None]
        self._anchors_used = sorted({r.near for r in self._near if r.near})
        self._regions_used = sorted({reg for r in ruleset.rules for reg in r.exclude_regions}
                                    | {reg for a in ruleset.attachments.values() for reg in a.reject_regions})
        self._plans = {(r.id, i): plan_for(p.source) for r in ruleset.rules for i, p in enumerate(r.patterns)}
        self._region_plans = {n: plan_for(reg.start.source) for n, reg in ruleset.regions.items()}
        self._literals = Literals(lit for plan in (*self._plans.values(), *self._region_plans.values())
                                  if plan is not None for lit in plan.literals)
        patterns = [ruleset.prelim, *ruleset.anchors.values(), *(p for r in ruleset.rules for p in r.patterns),
                    *(p for reg in ruleset.regions.values() for p in (reg.start, reg.end) if p is not None),
                    *(a.sentence_end for a in ruleset.attachments.values())]
        context = [*ruleset.anchors.values(), *(a.sentence_end for a in ruleset.attachments.values())]
        self._leads = {p.source: (Literals(lits), begins_at_word(p.source)) for p in context
                       if (lits := leading_literals(p.source, LEADING_LITERAL)) is not None}
        self._required = {p.source: lits for p in (*context, *(p for r in ruleset.rules for p in r.patterns))
                          if (lits := required_literals(p.source)) is not None}
        self._timed = {p.source for p in patterns if needs_timer(p.source)} if timeout else set()
        self._timed_rules = {r.id for r in ruleset.rules if any(p.source in self._timed for p in r.patterns)}

    def scan(self, text: str) -> Scan:
        timed_out: list[str] = []
        prelim = self._prelim(text, timed_out)
        if self.ruleset.gate and not prelim:
            return Scan(prelim=False, gated=True, timed_out=timed_out)
        folded = text.casefold()
        aligned = len(folded) == len(text)  # literal positions are text positions
        t = _Text(text, folded if aligned else None, self._literals.find(folded) if aligned else {}, timed_out)
        regions = self._regions(t)
        hits = self._anywhere_hits(t, regions)
        hits.extend(self._near_hits(t, regions, self._anchor_spans(t)))
        hits = unique_hits(hits)
        hits, rejected = attach(self.ruleset, text, hits, regions, self._context_finder(text, t.folded, timed_out))
        return Scan(prelim=prelim, hits=hits, timed_out=timed_out, rejected=rejected)

    def _prelim(self, text: str, timed_out: list[str]) -> bool:
        try:
            return self._search(self.ruleset.prelim, text) is not None
        except TimeoutError:
            timed_out.append("[prelim]")
            return False

    def _regions(self, t: _Text) -> dict[str, tuple[int, int] | None]:
        """Where each region some rule or policy excludes lies (None: absent or out of time).
        A region's start is searched only around its literals, and only past its floor."""
        regions: dict[str, tuple[int, int] | None] = {}
        for name in self._regions_used:
            region = self.ruleset.regions[name]
            start_finder = self._finder(region.start, self._budget(region.start))
            plan = self._region_plans.get(name)
            if plan is not None and t.folded is not None:
                start_finder = _in_windows(start_finder, windows(plan, t.folded, len(t.text), t.occurrences),
                                           int(len(t.text) * region.min_fraction))
            try:
                regions[name] = region_span(region, t.text, start_finder,
                                            self._finder(region.end, self._budget(region.end)) if region.end else None)
            except TimeoutError:
                regions[name] = None
                t.timed_out.append(f"[regions.{name}]")
        return regions

    def _anywhere_hits(self, t: _Text, regions: dict[str, tuple[int, int] | None]) -> list[Hit]:
        """The hits of the rules that count anywhere: each pattern scanned in the windows
        around its literals when it has a plan, else over the whole text."""
        hits: list[Hit] = []
        text = t.text
        for rule in self._anywhere:
            budget = self._rule_budget(rule)
            found: list[Hit] = []
            try:
                for i, pat in enumerate(rule.patterns):
                    plan = self._plans[(rule.id, i)]
                    finditer = self._finder(pat, budget)
                    if plan is not None and t.folded is not None:
                        for lo, hi in windows(plan, t.folded, len(text), t.occurrences):
                            for m in finditer(text, lo, hi):  # usually none: no generator per window
                                if (h := _hit(rule, m, regions)) is not None:
                                    found.append(h)
                    else:
                        found.extend(_hits(rule, finditer(text), regions))
            except TimeoutError:
                t.timed_out.append(rule.id)
                continue
            hits.extend(found)
        return hits

    def _anchor_spans(self, t: _Text) -> dict[str, list[tuple[int, int]]]:
        """The spans of every anchor a near rule counts from, over the whole text."""
        anchors: dict[str, list[tuple[int, int]]] = {}
        for name in self._anchors_used:
            anchor = self.ruleset.anchors[name]
            try:
                anchors[name] = [m.span() for m in self._finder(anchor, self._budget(anchor))(t.text)]
            except TimeoutError:
                anchors[name] = []
                t.timed_out.append(f"[anchors.{name}]")
        return anchors

    def _near_hits(self, t: _Text, regions: dict[str, tuple[int, int] | None],
                   anchors: dict[str, list[tuple[int, int]]]) -> list[Hit]:
        """The hits of the rules that count only near an anchor: each pattern scanned in its
        literal windows that touch an anchor's window, or in the anchor windows themselves."""
        text, folded = t.text, t.folded
        around: dict[tuple[str, int], list[tuple[int, int]]] = {}  # near rules share their anchor windows

        def near_windows(rule: Rule) -> list[tuple[int, int]]:
            key = (rule.near or "", rule.window)
            if key not in around:
                around[key] = merged_windows(anchors[key[0]], rule.window + MARGIN, len(text))
            return around[key]

        ends_of = {name: [e for _, e in spans] for name, spans in anchors.items()}
        hits: list[Hit] = []
        for rule in self._near:
            spans = anchors[rule.near or ""]
            if not spans:
                continue
            ends = ends_of[rule.near or ""]
            budget = self._rule_budget(rule)
            found: list[Hit] = []
            try:
                for i, pat in enumerate(rule.patterns):
                    plan = self._plans[(rule.id, i)]
                    if plan is not None and folded is not None:
                        wins = windows(plan, folded, len(text), t.occurrences)
                        if plan.width <= MARGIN:  # a match near an anchor lies in its window: skip the others
                            wins = _touching(wins, near_windows(rule))
                    else:
                        wins = near_windows(rule)
                        required = self._required.get(pat.source) if folded is not None else None
                        if required is not None:  # a window without one of its literals has no match
                            wins = [(lo, hi) for lo, hi in wins if any(folded.find(lit, lo, hi) >= 0 for lit in required)]
                    finditer = self._finder(pat, budget)
                    for lo, hi in wins:
                        for m in finditer(text, lo, hi):
                            if near(*m.span(), spans, ends, rule.window):  # most are not: no Hit for them
                                if (h := _hit(rule, m, regions)) is not None:
                                    found.append(h)
            except TimeoutError:
                t.timed_out.append(rule.id)
                continue
            hits.extend(found)
        return hits

    def _context_finder(self, text: str, folded: str | None,
                        timed_out: list[str]) -> Callable[[str, int, int], list[tuple[int, int]]]:
        """Spans of an anchor ("anchor:NAME") or a policy's sentence ends ("sentence:NAME") in [lo, hi), guarded.

        The stretches asked for are short (a sentence and its window), so no literal
        prefilter: computing an alternation's literal windows over the whole text cost more
        than searching the stretches (measured on the gold papers and bench_label's corpus).
        But a pattern whose every match begins with one of a few literals (an alternation
        of metric names, "R-1"/"R2"/"ROUGE") is tried only where one of them begins
        (`folded`, the case-folded text, when its positions are the text's), and not right
        after a letter or digit when it begins at a word boundary: the `regex` module tries
        such an alternation at every position, at a few MB/s. A match tried at each
        candidate in order, from the end of the last match on, is what `finditer` over the
        stretch finds. A pattern with a few required literals ("f1" of a named F1) skips a
        stretch that holds none of them.
        """
        searches: dict[str, tuple[str, Callable[[int, int], list[tuple[int, int]]]]] = {}

        def search_for(name: str) -> tuple[str, Callable[[int, int], list[tuple[int, int]]]]:
            kind, _, key = name.partition(":")
            pattern = self.ruleset.anchors[key] if kind == "anchor" else self.ruleset.attachments[key].sentence_end
            label = f"[anchors.{key}]" if kind == "anchor" else f"[attachments.{key}]"
            budget = self._budget(pattern)
            leads = self._leads.get(pattern.source) if folded is not None else None
            if leads is not None:
                literals, at_word = leads
                return label, lambda lo, hi: self._tried_at(pattern, budget, text,
                                                            literals.starts(folded, lo, hi, at_word), hi)
            finditer = self._finder(pattern, budget)
            required = self._required.get(pattern.source) if folded is not None else None
            if required is not None:  # a stretch without one of its literals has no match
                return label, lambda lo, hi: ([m.span() for m in finditer(text, lo, hi)]
                                              if any(folded.find(lit, lo, hi) >= 0 for lit in required) else [])
            return label, lambda lo, hi: [m.span() for m in finditer(text, lo, hi)]

        def find(name: str, lo: int, hi: int) -> list[tuple[int, int]]:
            entry = searches.get(name)
            if entry is None:
                entry = searches[name] = search_for(name)
            label, search = entry
            if label in timed_out:
                return []
            try:
                return search(lo, hi)
            except TimeoutError:
                timed_out.append(label)
                return []

        return find

    def _tried_at(self, pattern: Pattern, budget: Budget | None, text: str, starts: Sequence[int],
                  hi: int) -> list[tuple[int, int]]:
        """The matches `finditer(text, lo, hi)` finds, when every match starts at one of `starts`."""
        compiled, timed = pattern.compiled, budget is not None and pattern.source in self._timed
        spans: list[tuple[int, int]] = []
        pos = 0
        for s in starts:
            if s < pos:
                continue  # inside the last match
            m = compiled.match(text, s, hi, timeout=budget.left()) if timed else compiled.match(text, s, hi)  # type: ignore[union-attr]
            if m is not None:
                spans.append(m.span())
                pos = m.end()
        return spans

    def _search(self, pattern: Pattern, text: str) -> Any:
        if pattern.source in self._timed:
            return pattern.compiled.search(text, timeout=self.timeout)
        return pattern.compiled.search(text)

    def _budget(self, pattern: Pattern) -> Budget | None:
        """A budget of its own for a prelim, anchor or region pattern that needs the timer."""
        return Budget(self.timeout) if pattern.source in self._timed else None  # type: ignore[arg-type]

    def _rule_budget(self, rule: Rule) -> Budget | None:
        """One budget shared by all of a rule's patterns on this text."""
        return Budget(self.timeout) if rule.id in self._timed_rules else None  # type: ignore[arg-type]

    def _finder(self, pattern: Pattern, budget: Budget | None) -> Callable[..., Any]:
        """`finditer(text, lo, hi)` of a pattern, under the budget when the pattern needs the timer."""
        compiled = pattern.compiled
        if budget is None or pattern.source not in self._timed:
            return compiled.finditer

        def finditer(text: str, lo: int = 0, hi: int = sys.maxsize) -> Any:
            return compiled.finditer(text, lo, hi, timeout=budget.left())

        return finditer


def _touching(wins: Sequence[tuple[int, int]], others: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The windows (kept whole, so their matches stay exact) that overlap one of `others`;
    both lists sorted and disjoint."""
    out: list[tuple[int, int]] = []
    j = 0
    for lo, hi in wins:
        while j < len(others) and others[j][1] <= lo:
            j += 1
        if j == len(others):
            break
        if others[j][0] < hi:
            out.append((lo, hi))
    return out


def _in_windows(finditer: Callable[..., Any], wins: Sequence[tuple[int, int]], floor: int) -> Callable[..., Any]:
    """A finditer that searches only the (prefilter) windows that reach past `floor`: a
    region start's matches before the floor do not count."""

    def search(text: str) -> Iterable[Any]:
        for lo, hi in wins:
            if hi > floor:
                yield from finditer(text, lo, hi)

    return search


def unique_hits(hits: Iterable[Hit]) -> list[Hit]:
    """The hits in text order, where one rule's matches over the same words count once.

    Why: two patterns of one rule often match the same words (`rouge-?1\\.?5\\.?5` matches
    "ROUGE-1.5.5", `rouge.{0,15}1.?5.?5.?` the same and the space after it); that is one piece
    of evidence, not two findings, and per-rule hit counts must not double. A hit is dropped
    when it overlaps an earlier kept hit of the same rule (for parameter strings and code
    URLs: of the same rule and value, since the value is the label). Hits of different rules
    all stay: each is its own label.
    """
    reach: dict[tuple[str, str], int] = {}  # (rule, value or "") -> end of the last kept hit
    out: list[Hit] = []
    for h in sorted(hits, key=lambda h: (h.start, h.end, h.rule_id)):  # stable: the first pattern's hit stays
        key = (h.rule_id, h.value if h.kind in VALUED else "")
        if h.start < reach.get(key, -1):
            continue
        reach[key] = h.end
        out.append(h)
    return out


def _hits(rule: Rule, matches: Iterable, regions: dict[str, tuple[int, int] | None]) -> Iterable[Hit]:
    for m in matches:
        if (h := _hit(rule, m, regions)) is not None:
            yield h


def _hit(rule: Rule, m: Any, regions: dict[str, tuple[int, int] | None]) -> Hit | None:
    """The evidence of one match, or None when it lies in an excluded region or captures nothing."""
    start, end = m.span()
    if rule.exclude_regions and _inside(start, rule.exclude_regions, regions):
        return None
    value = m.group(rule.group) if rule.group else m.group(0)
    if value is not None and rule.trim is not None:
        value = rule.trim.compiled.sub("", value).strip()
    if not value:
        return None
    if rule.kind is Kind.CODE_URL:  # a URL split by the extraction ("https: //x", "owner/ name") is one URL
        value = "".join(value.split()).rstrip(".,;:)]}'\"")
    return Hit(rule.id, rule.kind, rule.label, start, end, m.group(0), value)


def attach(ruleset: RuleSet, text: str, hits: list[Hit], regions: Mapping[str, tuple[int, int] | None],
           find: Callable[[str, int, int], list[tuple[int, int]]]) -> tuple[list[Hit], list[Rejected]]:
    """Split the hits of rules with `attach` into attached (the mention noted) and rejected."""
    ids = {r.id for r in ruleset.rules if r.attach}
    if not ids or not any(h.rule_id in ids for h in hits):
        return hits, []
    from review.rules.context import Judge

    policies = {r.id: ruleset.attachments[r.attach] for r in ruleset.rules if r.attach}
    judged = [h for h in hits if h.rule_id in policies]
    verdicts = iter(Judge(ruleset, text, regions, find).judge_all([(policies[h.rule_id], h.start, h.end)
                                                                   for h in judged]))
    kept: list[Hit] = []
    rejected: list[Rejected] = []
    for h in hits:
        if h.rule_id not in policies:
            kept.append(h)
            continue
        verdict = next(verdicts)
        if verdict.accepted:
            kept.append(Hit(h.rule_id, h.kind, h.label, h.start, h.end, h.match, h.value, verdict.attached))
        else:
            rejected.append(Rejected(h, verdict.reason))
    return kept, rejected


def _inside(pos: int, names: Sequence[str], regions: dict[str, tuple[int, int] | None]) -> bool:
    for name in names:
        span = regions.get(name)
        if span is not None and span[0] <= pos < span[1]:
            return True
    return False


def region_span(region: Region, text: str, start_finditer: Callable[..., Any] | None = None,
                end_finditer: Callable[..., Any] | None = None) -> tuple[int, int] | None:
    """Where a region (e.g. the bibliography) lies in the text, or None.

    The finditer functions default to the region's compiled patterns (the engine passes
    timed ones).
    """
    floor = int(len(text) * region.min_fraction)
    starts = [m for m in (start_finditer or region.start.compiled.finditer)(text) if m.start() >= floor]
    if not starts:
        return None
    begin = (starts[-1] if region.which == "last" else starts[0]).end()
    stop = len(text)
    if region.end is not None:
        m = next(iter((end_finditer or region.end.compiled.finditer)(text, begin)), None)
        if m is not None:
            stop = m.start()
    return begin, stop


def near(start: int, end: int, spans: Sequence[tuple[int, int]], ends: Sequence[int], window: int) -> bool:
    """True when [start, end) lies within `window` characters of some anchor span.

    The distance between two spans is the number of characters between them (0 when they
    touch or overlap): a term ending exactly `window` characters before "ROUGE" starts, or
    starting exactly `window` characters after it ends, still counts; one more does not.
    """
    # anchors are sorted by start and do not overlap, so their ends are sorted too
    i = bisect.bisect_left(ends, start - window)  # first anchor ending at or after start - window
    return i < len(spans) and spans[i][0] - end <= window


# ------------------------------------------------------------------ reference implementation

class NaiveEngine:
    """One `re.finditer` per pattern over the whole text, no prefilter, no windows.

    Slow on purpose: it is the baseline the benchmark compares with, and the oracle tests
    use to show the fast engine's labels are identical.
    """

    def __init__(self, ruleset: RuleSet):
        self.ruleset = ruleset
        c = _naive_compile
        self._prelim = c(ruleset.prelim)
        self._anchors = {n: c(p) for n, p in ruleset.anchors.items()}
        self._rules = [(r, [c(p) for p in r.patterns]) for r in ruleset.rules]

    def scan(self, text: str) -> Scan:
        rs = self.ruleset
        prelim = any(True for _ in self._prelim.finditer(text))
        anchors = {n: [m.span() for m in p.finditer(text)] for n, p in self._anchors.items()}
        regions = {n: _naive_region(r, text) for n, r in rs.regions.items()}
        hits: list[Hit] = []
        for rule, pats in self._rules:
            for pat in pats:
                for h in _hits(rule, pat.finditer(text), regions):
                    if rule.near is not None:
                        spans = anchors[rule.near]
                        if not any(max(0, h.start - e, s - h.end) <= rule.window for s, e in spans):
                            continue
                    hits.append(h)
        if rs.gate and not prelim:
            return Scan(prelim=False, gated=True)
        hits = unique_hits(hits)
        hits, rejected = attach(rs, text, hits, regions, self._find(text))
        return Scan(prelim=prelim, hits=hits, rejected=rejected)

    def _find(self, text: str) -> Callable[[str, int, int], list[tuple[int, int]]]:
        def find(name: str, lo: int, hi: int) -> list[tuple[int, int]]:
            kind, _, key = name.partition(":")
            pattern = self.ruleset.anchors[key] if kind == "anchor" else self.ruleset.attachments[key].sentence_end
            return [m.span() for m in pattern.compiled.finditer(text, lo, hi)]  # `regex` syntax (lookbehinds)

        return find


def _naive_compile(pattern: Pattern) -> Any:
    """`re` when it reads the pattern; the `regex` module's compiled form for what `re` lacks
    (variable-width lookbehinds in the precise file)."""
    try:
        return re.compile(pattern.source, re.IGNORECASE)
    except re.error:
        return pattern.compiled


def _naive_region(region: Region, text: str) -> tuple[int, int] | None:
    start = _naive_compile(region.start)
    floor = int(len(text) * region.min_fraction)
    starts = [m for m in start.finditer(text) if m.start() >= floor]
    if not starts:
        return None
    begin = (starts[-1] if region.which == "last" else starts[0]).end()
    stop = len(text)
    if region.end is not None:
        m = _naive_compile(region.end).search(text, begin)
        if m is not None:
            stop = m.start()
    return begin, stop
