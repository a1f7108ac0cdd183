"""Helpers for the rule-engine tests: the shipped rule files and one-call labeling."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from review.rules import Engine, NaiveEngine, RuleSet, label_scan, load_ruleset

PATTERNS = Path(__file__).resolve().parent.parent / "patterns"


def pattern(name: str) -> Path:
    """A shipped data file by its name, in whichever metric folder holds it (patterns/<metric>/<name>),
    or by `<metric>/<name>` when several do."""
    found = sorted(PATTERNS.glob(name if "/" in name else f"*/{name}"))
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


@lru_cache(maxsize=None)
def rules(name: str = "rouge.toml", *options: str) -> RuleSet:
    return load_ruleset(pattern(name), options)


def labels(text: str, ruleset: RuleSet | None = None):  # type: ignore[no-untyped-def]
    """Labels of `text` under `ruleset`, asserting the fast and naive engines agree."""
    ruleset = ruleset or rules()
    fast = label_scan(Engine(ruleset).scan(text), ruleset).labels
    slow = label_scan(NaiveEngine(ruleset).scan(text), ruleset).labels
    assert fast == slow, (fast, slow)
    return fast


def packages(text: str, ruleset: RuleSet | None = None) -> set[str]:
    return set(labels(text, ruleset).packages)
