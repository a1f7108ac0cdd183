"""`review evaluate human` on SQLite and PostgreSQL: real labels from `review label`, real
decisions from a Label Studio export read by `review pull --from-file`, scores worked out
by hand below, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.base import Base
from review.db.models import HumanResolution, Paper
from review.evaluate.human import evaluate_human
from review.export.report import human_evaluation_section
from review.labelstudio.offline import import_annotations
from review.rules.stage import latest_rule_set, run_label
from review.runs import record_run
from review.settings import Settings
from tests.labelstudio_support import choices, text
from tests.test_label import TEXTS as LABEL_TEXTS
from tests.test_label import add_papers

TEXTS = {
    **LABEL_TEXTS,  # test_label's papers, plus one the rules wrongly call a ROUGE paper
    "p-neg": "Prior work evaluated with ROUGE (Lin, 2004) was criticised; we run a human study instead.",
}
# What patterns/rouge/rouge.toml labels (checked in test_labels_are_what_the_scores_assume):
LABELS = {"p-r1": (True, ["ROUGE-1.5.5"], ["stemming"], []), "p-r2": (True, ["MS/rouge"], [], ["precision", "recall"]),
          "p-none": (True, [], [], ["f-score"]), "p-pyrouge": (True, ["PT/pyrouge", "unknown pyrouge"], [], []),
          "p-other": (False, [], [], []), "p-neg": (True, [], [], [])}


def paper(p0: str, p1: list[str] | None = None, p2=("NONE",), p3=("NONE",), p4=("NONE",)) -> list[dict]:  # type: ignore[no-untyped-def]
    """One annotation's result, as Label Studio exports it (P1 is a text area: empty = none)."""
    result = [choices("P0", p0)]
    if p0 == "yes":
        result += [text("P1", *(p1 or [])), choices("P2", *p2), choices("P3", *p3), choices("P4", *p4)]
    return result


# Reviewers' answers per paper (user id -> result); the resolution each gives is noted.
ANSWERS = {
    # agreed; the rules miss f-score (P2 wrong), the rest right (P1 typed with the program name
    # and options in another order is the same string, as the human pass compares them)
    "p-r1": {1: paper("yes", ["ROUGE-1.5.5.pl -m -n 2 -r 1000 -c 95"], ("f-score",), ("stemming",), ("ROUGE-1.5.5",)),
             2: paper("yes", ["-c 95  -r 1000 -n 2 -m"], ("f-score",), ("stemming",), ("ROUGE-1.5.5",))},
    # P1 "yes" without strings (listed only; the rules found none); P4 tied -> left out
    "p-r2": {1: paper("yes", ["yes"], ("precision", "recall"), (), ("MS/rouge",)),
             2: paper("yes", ["yes"], ("precision", "recall"), (), ("GL/rougescore",))},
    # P3 "can't tell" by one of two -> unsure, left out; the rest right
    "p-none": {1: paper("yes", [], ("f-score",)), 2: paper("yes", [], ("f-score",), ("can't tell",))},
    # P0 tied -> the whole paper is left out
    "p-pyrouge": {1: paper("yes", [], (), (), ("PT/pyrouge",)), 2: paper("no")},
    # majority "no": a true negative
    "p-other": {1: paper("no"), 2: paper("no"), 3: paper("yes")},
    # "no": the rules' P0 is a false positive (flag.abbrev matched "run")
    "p-neg": {1: paper("no"), 2: paper("no")},
    # reviewed, but its text failed: no automated labels
    "p-failed": {1: paper("no")},
}


def export_file(db, path: Path, answers=ANSWERS, purpose: str | None = None) -> Path:  # type: ignore[no-untyped-def]
    with db.session() as s:
        ids = dict(s.execute(select(Paper.ident, Paper.id)).all())
    tasks = []
    for n, (ident, by_user) in enumerate(answers.items()):
        data = {"ref": f"paper:{ids[ident]}", "ident": ident, **({"purpose": purpose} if purpose else {})}
        tasks.append({"id": n, "data": data, "annotations": [
            {"id": 100 * n + user, "completed_by": user, "updated_at": "2026-11-20T10:00:00Z", "result": result}
            for user, result in by_user.items()]})
    path.write_text(json.dumps(tasks))
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")


@pytest.fixture
def reviewed(db, settings, tmp_path):  # type: ignore[no-untyped-def]
    """Labelled by rouge.toml, reviewed as ANSWERS says, pulled from a file."""
    add_papers(db, TEXTS)
    with record_run(db, "label") as run:
        run_label(db, settings, run=run)
    import_annotations(db, settings, export_file(db, tmp_path / "export.json"))
    return db


def _snapshot(db) -> dict[str, list]:  # type: ignore[no-untyped-def]
    with db.session() as s:
        return {t.name: [tuple(r) for r in s.execute(select(t).order_by(*t.primary_key.columns))]
                for t in Base.metadata.sorted_tables}


def _evaluate(db):  # type: ignore[no-untyped-def]
    with db.session() as s:
        return evaluate_human(s, latest_rule_set(s))


def test_labels_are_what_the_scores_assume(reviewed) -> None:  # type: ignore[no-untyped-def]
    from review.db.models import PaperLabel

    with reviewed.session() as s:
        rows = s.execute(select(Paper.ident, PaperLabel).join(PaperLabel, PaperLabel.paper_id == Paper.id)).all()
    got = {ident: (pl.computes, pl.packages, pl.protocol, sorted(pl.variants)) for ident, pl in rows}
    assert got == LABELS


def test_scores_against_resolved_human_answers(reviewed) -> None:  # type: ignore[no-untyped-def]
    ev = _evaluate(reviewed)
    s = ev.scores
    assert (ev.reviewed, s.items, s.computing) == (7, 5, 3)
    assert ev.left_out == {"P0 tie": 1, "no automated labels under this rule set": 1}
    assert ev.questions_left_out == {"P1": {"yes, strings not given": 1}, "P3": {"unsure": 1}, "P4": {"tie": 1}}
    # P0 over p-r1, p-r2, p-none (yes/yes), p-other (no/no), p-neg (no/yes)
    assert (s.p0.tp, s.p0.fp, s.p0.fn, s.p0_correct) == (3, 1, 0, 4)
    m = ev.metrics()
    assert (m["P0.precision"], m["P0.recall"], m["P0.accuracy"]) == (0.75, 1.0, 0.8)
    # P1 strings on p-r1 (normalized: exact) and p-none ([] = []); p-r2 is "listed" only
    assert (s.sets["P1"].items, s.sets["P1"].exact, s.sets["P1"].overall.tp) == (2, 2, 1)
    assert (s.p1_listed.tp, s.p1_listed.fn, m["P1.listed.recall"]) == (1, 1, 0.5)
    # P2: f-score missed on p-r1; P3 without p-none (unsure); P4 without p-r2 (tie)
    assert (s.sets["P2"].items, s.sets["P2"].exact, s.sets["P2"].overall.fn, s.sets["P2"].overall.tp) == (3, 2, 1, 3)
    assert (s.sets["P3"].items, s.sets["P3"].exact) == (2, 2)
    assert (s.sets["P4"].items, s.sets["P4"].exact, s.sets["P4"].overall.tp) == (2, 2, 1)
    assert s.sets["code_urls"].items == 0  # not a question of the paper form
    found = {(d.item, d.question): d for d in s.disagreements}
    assert set(found) == {("p-neg", "P0"), ("p-r1", "P2"), ("p-r2", "P1")}
    assert {e["rule"] for e in found[("p-neg", "P0")].evidence} == {"flag.verbatim", "flag.abbrev"}
    assert found[("p-neg", "P0")].expected_evidence == "human answer: agreed, 2 reviewers"
    assert found[("p-r1", "P2")].missing == ["f-score"]
    # per-rule precision from the stored findings: "run" led to a wrong P0; nlg-eval's
    # P4 match is not scored (tied)
    rules = {r.rule: r for r in ev.rule_scores}
    assert (rules["flag.abbrev"].matches, rules["flag.abbrev"].right) == (1, 0)
    assert (rules["flag.verbatim"].matches, rules["flag.verbatim"].right) == (5, 4)
    assert "pkg.ms-rouge" not in rules and rules["pkg.rouge-155"].precision == 1.0


def test_adjudication_brings_a_tied_paper_in(reviewed, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    adjudication = {"p-pyrouge": {9: paper("yes", [], (), (), ("PT/pyrouge", "unknown pyrouge"))}}
    import_annotations(reviewed, settings, export_file(reviewed, tmp_path / "adj.json", adjudication, "adjudication"))
    ev = _evaluate(reviewed)
    assert ev.scores.items == 6 and "P0 tie" not in ev.left_out
    assert ev.scores.sets["P4"].items == 3 and ev.scores.sets["P4"].exact == 2  # P4 was agreed by nobody: single


def test_answers_changed_since_the_pull_count_without_anything_stored(reviewed) -> None:  # type: ignore[no-untyped-def]
    """Evaluation resolves the live decisions itself and never refreshes the stored resolutions."""
    from review.db.models import HumanDecision

    with reviewed.session() as s:
        pid = s.scalar(select(Paper.id).where(Paper.ident == "p-neg"))
        for d in s.scalars(select(HumanDecision).where(HumanDecision.paper_id == pid, HumanDecision.question == "P0")):
            d.deleted = True  # both reviewers' answers withdrawn
    before = _snapshot(reviewed)
    ev = _evaluate(reviewed)
    assert ev.scores.items == 4 and ev.scores.p0.fp == 0
    assert _snapshot(reviewed) == before
    with reviewed.session() as s:  # the stored resolution is the pull's, untouched
        assert s.scalar(select(HumanResolution.status).where(HumanResolution.item_id == pid)) == "agreed"
        # status and the report read the stored resolutions: the pull's view until the next pull or compute
        stored = evaluate_human(s, latest_rule_set(s), stored=True, evidence=False)
        assert (stored.scores.items, stored.scores.p0.fp, stored.rule_scores) == (5, 1, [])


def test_cli_prints_scores_writes_nothing_and_checks_thresholds(cli, reviewed, db_url) -> None:  # type: ignore[no-untyped-def]
    before = _snapshot(reviewed)
    code, out, err = cli("--db", db_url, "evaluate", "human", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["reviewed"], data["scored"], data["scores"]["P0"]["precision"]) == (7, 5, 0.75)
    assert data["left_out"] == {"P0 tie": 1, "no automated labels under this rule set": 1}
    assert "5 papers scored" in err and "2 left out" in err and "3 disagreements" in err
    code, out, err = cli("--db", db_url, "evaluate", "human", "--rules", "patterns/rouge/rouge.toml")
    assert code == 0, err
    assert "left out: 1 paper: P0 tie" in out and "P4 not scored on 1 paper: tie" in out
    assert "- p-neg P0: expected no; proposed yes" in out and "human answer: agreed, 2 reviewers" in out
    assert "flag.abbrev" in out
    code, _, err = cli("--db", db_url, "evaluate", "human", "--min", "P0.precision=0.8", "--min", "P0.recall=1")
    assert code == 1 and "below threshold: P0.precision = 0.750 < 0.8" in err and "P0.recall" not in err
    code, _, err = cli("--db", db_url, "evaluate", "human", "--min", "P0.bogus=1")
    assert code == 2
    assert _snapshot(reviewed) == before


def test_cli_refuses_a_rule_file_without_stored_labels(cli, reviewed, db_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli("--db", db_url, "evaluate", "human", "--rules", "patterns/rouge/rouge-precise.toml")
    assert code == 5 and "no stored labels of this version" in err and "review label" in err
    code, _, err = cli("--db", db_url, "evaluate", "human", "--rule-set", "ffffffff")
    assert code == 5 and "--rule-set" in err
    target = tmp_path / "none" / "review.sqlite"
    code, _, err = cli("--db", f"sqlite:///{target}", "evaluate", "human")
    assert code == 4 and not target.exists()


def test_status_and_report_show_the_evaluation(cli, reviewed, db_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = cli("--db", db_url, "status", "--json")
    assert code == 0, err
    h = json.loads(out)["human_evaluation"]
    assert (h["reviewed"], h["scored"], h["left_out"], h["P0.precision"], h["P4.exact"]) == (7, 5, 2, 0.75, 1.0)
    code, out, _ = cli("--db", db_url, "status")
    assert "Automated labels against human answers" in out and "0.750" in out
    html = human_evaluation_section(_evaluate(reviewed).as_dict())
    assert "Automated labels against the human answers" in html and "2 left out (1 P0 tie; 1 no automated" in html
    assert "<td>P0 computes the metric</td><td class=\"n\">5</td><td class=\"n\">0.75</td>" in html
    code, _, err = cli("--db", db_url, "compute")
    assert code == 0, err
    code, _, err = cli("--db", db_url, "export", "--out", "out")
    assert code == 0, err
    assert html in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def test_status_without_human_answers_has_no_block(cli, db, db_url, settings) -> None:  # type: ignore[no-untyped-def]
    add_papers(db, TEXTS)
    run_label(db, settings)
    code, out, _ = cli("--db", db_url, "status", "--json")
    assert code == 0 and json.loads(out)["human_evaluation"] is None
    assert human_evaluation_section(None) == ""

