"""Per-paper labels from a scan: what `review label` stores and `review check` prints.

The labels are the automated (`*_prelim`) answers of the review protocol: does the paper
name the metric, does it compute it (the rule file's flag expression), which packages,
parameter strings, protocol decisions and measures it mentions, and which code links it
gives. Overlapping package labels resolve as the rule file's `[[overlaps]]` declare.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from review.rules.engine import Hit, Rejected, Scan
from review.rules.model import Kind, OverlapScope, Resolve, RuleSet


@dataclass(frozen=True)
class Labels:
    """The automated labels of one text under one rule set."""

    prelim: bool
    computes: bool
    packages: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    protocol: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    code_urls: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # flag labels present (inputs of the computed flag)

    def as_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


@dataclass
class Labeled:
    """Labels plus the hits that support them (suppressed overlaps left out)."""

    labels: Labels
    hits: list[Hit] = field(default_factory=list)
    suppressed: list[Hit] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)  # matches their attachment policy turned down


def label_scan(scan: Scan, ruleset: RuleSet) -> Labeled:
    """Turn a scan into labels, resolving package overlaps as declared."""
    if scan.gated:
        return Labeled(Labels(prelim=False, computes=False))
    hits, suppressed = resolve_overlaps(scan.hits, ruleset)
    by_kind: dict[Kind, list[Hit]] = {k: [] for k in Kind}
    for h in hits:
        by_kind[h.kind].append(h)
    flags = {h.label for h in by_kind[Kind.FLAG]}
    labels = Labels(
        prelim=scan.prelim,
        computes=ruleset.flag_expression.evaluate(flags),
        packages=tuple(sorted({h.label for h in by_kind[Kind.PACKAGE]})),
        params=_unique(h.value for h in by_kind[Kind.PARAMS]),
        protocol=tuple(sorted({h.label for h in by_kind[Kind.PROTOCOL]})),
        variants=tuple(sorted({h.label for h in by_kind[Kind.VARIANT]})),
        code_urls=_unique(h.value for h in by_kind[Kind.CODE_URL]),
        flags=tuple(sorted(flags)),
    )
    return Labeled(labels, hits, suppressed, list(scan.rejected))


def resolve_overlaps(hits: list[Hit], ruleset: RuleSet) -> tuple[list[Hit], list[Hit]]:
    """Apply `[[overlaps]]`: drop generic package hits a specific one wins over."""
    drop: set[int] = set()
    for ov in ruleset.overlaps:
        if ov.resolve is Resolve.KEEP_BOTH:
            continue
        specific = [h for h in hits if h.kind is Kind.PACKAGE and h.label in ov.specific]
        if not specific:
            continue
        for i, h in enumerate(hits):
            if h.kind is not Kind.PACKAGE or h.label != ov.generic:
                continue
            if ov.scope is OverlapScope.PAPER or any(h.start < s.end and s.start < h.end for s in specific):
                drop.add(i)
    kept = [h for i, h in enumerate(hits) if i not in drop]
    return kept, [h for i, h in enumerate(hits) if i in drop]


def reproducibility(labels: Labels, ruleset: RuleSet) -> tuple[bool, bool]:
    """(R1, R2) as far as the paper's text can tell.

    R1: cites a package counted by the rule file's `r1_packages` and lists parameters.
    R2: cites a no-configuration package (`r2_packages`, e.g. MS/rouge or GL/seq2seq).
    """
    pk = set(labels.packages)
    return bool(pk & ruleset.r1_packages) and bool(labels.params), bool(pk & ruleset.r2_packages)


def _unique(values: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))
