"""One minimum and one rule for plan, queue and the estimator (issue 31, items 2 and 3).

The issue's scenario: `plan` asked for 29 of 75 papers, all 29 were answered, and every
statistic said "29 reviewed paper(s), at least 30 needed"; a sample queued least-certain
first, reviewed in part, said so only on stderr; and `release_code`, whose C0 no reviewer
was ever asked, got a prediction-powered interval with `n_human 40`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from review.db import migrate
from review.db.models import SamplingDesign
from review.db.session import Database
from review.estimate import design
from review.labelstudio.queue import run_queue
from review.settings import Settings
from tests.test_estimate_export import SHA, corpus, review_file


def _stats(out: Path) -> dict[str, dict[str, str]]:
    with (out / "statistics.csv").open() as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def test_answering_every_paper_plan_asked_for_gives_the_estimate(cli, tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    truth = corpus(database, 75, seed=6)
    database.dispose()
    # a wide target: the interval alone would need fewer papers than the estimator accepts
    code, out, err = cli("plan", "--target", "list_parameters=0.2", "--json")
    assert code == 0, err
    need = json.loads(out)["needs"][0]
    assert need["papers"] == design.MIN_HUMAN and "the estimator at least 30" in need["note"]
    code, out, err = cli("plan", "--target", "list_parameters=0.2", "--queue", "--seed", "4", "--offline",
                         "plan.json", "--json")
    assert code == 0, err
    planned = json.loads(out)
    asked = [int(t["data"]["ref"].split(":")[1]) for t in json.loads((tmp_path / "plan.json").read_text())]
    assert len(asked) == planned["papers"] == 30
    review_file(tmp_path / "answers.json", truth, asked)
    for args in (("pull", "--from-file", "answers.json"), ("compute",), ("export", "--out", "out")):
        code, _, err = cli(*args)
        assert code == 0, err
    row = _stats(tmp_path / "out")["list_parameters"]
    assert row["method"] == "ppi" and row["n_human"] == "30" and row["estimate"] != ""
    assert "needed" not in row["estimate_note"]

    # item 3: nobody answered C0 (the answers file leaves the form's C0 open, the papers have no codebase)
    release = _stats(tmp_path / "out")["release_code"]
    assert release["method"] == "" and release["estimate"] == "" and release["estimate_low"] == ""
    outside = sum(not truth[p]["metric"] for p in asked)  # reviewers say these do not compute ROUGE: settled
    assert 0 < outside < 30 and release["n_human"] == str(outside)
    assert f"no person answered C0 for {30 - outside} of 30 sampled papers" in release["estimate_note"]
    assert _stats(tmp_path / "out")["reproducible"]["method"] == ""
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    metric_answered = 30 - outside
    assert manifest["human_answers"]["P0"] == 30 and manifest["human_answers"]["C0"] == 0
    assert manifest["human_answers"]["P1"] == metric_answered  # P1-P4 only shown after P0 = yes
    report = (tmp_path / "out" / "report.html").read_text()
    assert f"P0 30, P1 {metric_answered}" in report and ", C0 0," in report
    human = _stats(tmp_path / "out")["human_reviewed"]
    assert human["count"] == "0"  # no paper's labels rest entirely on people: C0 is automated everywhere

    # the paper form asks C0 too: once reviewers answer it, release_code is estimated from their answers
    tasks = json.loads((tmp_path / "answers.json").read_text())
    for task in tasks:
        ann = task["annotations"][0]
        p0 = next(r for r in ann["result"] if r["from_name"] == "P0")
        if p0["value"]["choices"] == ["yes"]:
            ann["result"].append({**p0, "id": f"{p0.get('id', 'r')}-c0", "from_name": "C0",
                                  "value": {"choices": ["no"]}})
        ann["updated_at"] = "2026-11-21T10:00:00Z"
    (tmp_path / "answers.json").write_text(json.dumps(tasks))
    for args in (("pull", "--from-file", "answers.json"), ("compute",), ("export", "--out", "out")):
        code, _, err = cli(*args)
        assert code == 0, err
    release = _stats(tmp_path / "out")["release_code"]
    assert release["method"] == "ppi" and release["n_human"] == "30" and release["estimate"] != ""
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["human_answers"]["C0"] == 30 - outside  # P0 = no hides C0


def test_a_drawn_sample_is_queued_in_random_order_unless_asked(db, tmp_path: Path) -> None:
    settings = Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")
    corpus(db, 60, seed=2)
    drawn = run_queue(db, settings, "papers", select_="sample", n=40, seed=3, offline=tmp_path / "s.json", rule_set=SHA)
    asked = run_queue(db, settings, "papers", select_="sample", n=40, seed=3, offline=tmp_path / "l.json",
                      rule_set=SHA, order_="least-certain")
    every = run_queue(db, settings, "papers", offline=tmp_path / "a.json", rule_set=SHA)
    with db.session() as s:
        assert s.get(SamplingDesign, drawn.design).queue_order == "random"
        assert s.get(SamplingDesign, asked.design).queue_order == "least-certain"
    assert every.design is None
    refs = lambda name: [t["data"]["ref"] for t in json.loads((tmp_path / name).read_text())]  # noqa: E731
    assert sorted(refs("s.json")) == sorted(refs("l.json")) and refs("s.json") != refs("l.json")


@pytest.mark.parametrize("row, questions, missing", [
    ({"paper_metric": True, "has_code": False, "sources": {"P0": "human", "P1": "human", "C0": "automated"}},
     ("P0", "C0"), ["C0"]),  # the automated "no code" of a paper without a codebase is nobody's answer
    ({"paper_metric": True, "has_code": False, "sources": {"P0": "human", "C0": "human"}},
     ("P0", "C0", "C1", "C2"), []),  # reviewers say no code: C1 and C2 have nothing to answer
    ({"paper_metric": True, "has_code": True, "sources": {"P0": "human", "C0": "human"}},
     ("P0", "C0", "C1"), ["C1"]),  # code released, its packages unanswered
    ({"paper_metric": False, "sources": {"P0": "human", "P1": "automated"}}, ("P0", "P1"), []),
    ({"paper_metric": True, "sources": {"P0": "automated", "P1": "human"}}, ("P0", "P1"), ["P0"]),
    ({"paper_metric": True, "label_sources": {"P0": "human", "P1": "disputed"}}, ("P0", "P1"), ["P1"]),
])
def test_only_a_persons_answer_counts(row, questions, missing) -> None:
    assert design.unanswered(row, questions) == missing
    assert design.human_answered(row, questions) is (not missing)


def test_one_minimum_for_plan_and_estimator() -> None:
    assert design.minimum(75) == 30 and design.minimum(12) == 12  # a census of a small frame
    assert design.planned_size(29, 75) == 30 and design.planned_size(50, 75) == 50 and design.planned_size(5, 12) == 12
    assert design.shortfall(29, 75) == "29 reviewed paper(s), at least 30 needed"
    assert design.shortfall(30, 75) == "" and design.shortfall(12, 12) == "" and design.shortfall(0, 0) != ""
    assert design.default_order("sample") == design.default_order("stratified") == "random"
    assert design.default_order("all") == "least-certain"


def test_plan_has_no_unasked_question_to_warn_of_now_that_the_paper_form_asks_c0(cli, tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    corpus(database, 75, seed=6)  # no paper has a linked codebase
    database.dispose()
    code, out, err = cli("plan", "--target", "reproducible=0.1", "--target", "list_parameters=0.1", "--json")
    assert code == 0, err
    notes = {n["statistic"]: n["note"] for n in json.loads(out)["needs"]}
    # the paper form asks C0 of every paper that computes the metric, codebase or not: nothing to warn of
    assert "C0" not in notes["reproducible"] and "C0" not in notes["list_parameters"]
