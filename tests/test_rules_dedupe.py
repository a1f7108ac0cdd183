"""One finding per piece of evidence (issue 34 item 8): two patterns of one rule matching the
same words are one hit in both engines, one `findings` row, one count in the label's hits."""

from __future__ import annotations

from sqlalchemy import select

from review.db.models import Finding, PaperLabel
from review.rules import Engine, NaiveEngine
from review.rules.engine import Hit, unique_hits
from review.rules.model import Kind
from review.rules.stage import run_label
from review.settings import load_settings
from tests.rules_support import pattern, rules
from tests.test_label import add_papers

TEXT = "We report ROUGE-1 scores from ROUGE-1.5.5 with the usual options."


def test_two_patterns_of_one_rule_on_the_same_words_are_one_hit() -> None:
    rs = rules()
    for engine in (Engine(rs), NaiveEngine(rs)):
        hits = [h for h in engine.scan(TEXT).hits if h.rule_id == "pkg.rouge-155"]
        assert [(h.start, h.match) for h in hits] == [(30, "ROUGE-1.5.5")], type(engine).__name__


def test_other_rules_and_other_values_on_one_span_stay() -> None:
    def hit(rule: str, kind: Kind, start: int, end: int, value: str) -> Hit:
        return Hit(rule, kind, rule, start, end, value, value)

    kept = unique_hits([hit("a", Kind.PACKAGE, 5, 12, "x y"), hit("a", Kind.PACKAGE, 5, 14, "x y z"),
                        hit("b", Kind.PACKAGE, 5, 12, "x y"), hit("a", Kind.PACKAGE, 14, 20, "later"),
                        hit("p", Kind.PARAMS, 0, 9, "-n 2"), hit("p", Kind.PARAMS, 0, 12, "-n 2 -m"),
                        hit("p", Kind.PARAMS, 2, 9, "-n 2")])
    assert [(h.rule_id, h.start, h.end) for h in kept] == [("p", 0, 9), ("p", 0, 12), ("a", 5, 12), ("b", 5, 12),
                                                           ("a", 14, 20)]


def test_label_stores_that_finding_once(db) -> None:  # type: ignore[no-untyped-def]
    add_papers(db, {"p-dup": TEXT}, failed=())
    result = run_label(db, load_settings(None), rules_path=pattern("rouge.toml"))
    assert result.labeled == 1
    with db.session() as s:
        rows = s.execute(select(Finding.start, Finding.end).where(Finding.rule_id == "pkg.rouge-155")).all()
        label = s.scalars(select(PaperLabel)).one()
    assert rows == [(30, 41)] and label.extra["hits"]["pkg.rouge-155"] == 1
