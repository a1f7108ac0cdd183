"""`review compute` on a corpus whose every label was worked out by hand.

The 13 papers of tests/compute_support.py cover: R1 from automated labels, R2 from a
no-configuration package, an alias (rouge-score -> GL/rougescore), "unknown pyrouge"
counting (or not) as a package, R3 overridden by a 2-of-3 human majority on a codebase,
a reviewer who changed their answer, withdrawn (deleted) decisions, a human P1 and P4
filling what the rules missed, untested packages (unknown, never correct), and papers
without a PDF or text.
"""

from __future__ import annotations

import csv
import json

import pytest
from sqlalchemy import select

from review.answers import parse_bool, parse_list
from review.compute import load_catalog, run_compute
from review.db.models import Paper, Reproducibility, Run
from review.errors import RuleFileError
from review.settings import Settings
from tests.compute_support import EXPECTED, T0, known_corpus


def _rows(db) -> dict[str, Reproducibility]:
    with db.session() as s:
        return {ident: row for ident, row in s.execute(
            select(Paper.ident, Reproducibility).join(Reproducibility, Reproducibility.paper_id == Paper.id))}


def test_every_label_equals_the_hand_worked_value(db):
    known_corpus(db)
    result = run_compute(db, Settings())
    rows = _rows(db)
    assert set(rows) == set(EXPECTED)
    for ident, expected in EXPECTED.items():
        for key, value in expected.items():
            assert getattr(rows[ident], key) == value, f"{ident}.{key}"
    assert (result.papers, result.metric_papers, result.reproducible, result.software_error) == (13, 8, 4, 4)
    assert rows["p05"].sources["C2"] == "human" and rows["p05"].sources["C1"] == "automated"
    assert rows["p11"].sources["P1"] == "human"


def test_rerun_replaces_rows_identically_and_records_runs(db):
    known_corpus(db)
    run_compute(db, Settings())
    first = {k: {c: getattr(v, c) for c in ("r1", "r2", "r3", "reproducible", "packages", "sources")}
             for k, v in _rows(db).items()}
    run_compute(db, Settings())
    second = {k: {c: getattr(v, c) for c in ("r1", "r2", "r3", "reproducible", "packages", "sources")}
              for k, v in _rows(db).items()}
    assert first == second
    with db.session() as s:
        runs = s.scalars(select(Run).where(Run.command == "compute")).all()
        assert len(runs) == 2 and all(r.status == "ok" for r in runs)
        assert runs[0].counts["reproducible"] == 4 and runs[0].rules_sha256 == "a" * 64
        assert "packages_sha256" in runs[0].signature


def test_settings_decide_whether_unidentified_packages_count(db):
    known_corpus(db)
    settings = Settings()
    settings.compute.counts_as_package = {"unknown pyrouge": False, "github rouge": False}
    run_compute(db, settings)
    rows = _rows(db)
    assert rows["p04"].r1 is False and rows["p04"].reproducible is False
    assert rows["p04"].category == "unknown package"
    assert rows["p12"].software_error == "unknown" and rows["p12"].category == "unknown package"


def test_automated_code_metric_can_be_turned_off(db):
    known_corpus(db)
    settings = Settings()
    settings.compute.automated_code_metric = False
    run_compute(db, settings)
    rows = _rows(db)
    assert rows["p11"].code_metric is None  # no human C2 and no automated proposal
    assert rows["p05"].code_metric is False  # the human majority still counts


def test_dry_run_writes_nothing(db):
    known_corpus(db)
    result = run_compute(db, Settings(), dry_run=True)
    assert result.reproducible == 4 and _rows(db) == {}


@pytest.mark.parametrize("answer,value", [(True, True), ("No", False), (["Yes"], True), ({"choices": ["No"]}, False),
                                          ("maybe", None), (["Yes", "No"], None)])
def test_bool_answers(answer, value):
    assert parse_bool(answer) is value


def test_list_answers_drop_none():
    assert parse_list(["NONE"]) == [] and parse_list({"choices": ["b", "a", "a"]}) == ["a", "b"]
    assert parse_list(3) is None


def test_catalog_aliases_and_unknown_is_not_correct():
    cat = load_catalog("patterns/rouge/packages.toml")
    assert cat.canonical("Rouge-Score") == "GL/rougescore" and cat.canonical("pyrouge") == "unknown pyrouge"
    assert cat.error("ROUGE-1.5.5") is False and cat.error("DD/sacrerouge") is False
    assert cat.error("MS/rouge") is True and cat.error("PC/pyrouge") is None and cat.error("github rouge") is None
    assert cat.error("never heard of it") is None
    assert cat.no_config("MS/rouge") and cat.no_config("GL/seq2seq") and not cat.no_config("ROUGE-1.5.5")
    tested_wrong = [p.label for p in cat.packages.values() if p.software_error is True]
    assert len(tested_wrong) == 15  # every tested package but the reference and the DD/sacrerouge wrapper (LP/rougemetric once)


def test_bad_catalog_names_entry_and_key(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('schema = 1\n[[package]]\nlabel = "X"\nsoftware_error = "maybe"\n')
    with pytest.raises(RuleFileError, match="package #1 \\(X\\).*software_error"):
        load_catalog(bad)
    bad.write_text('schema = 1\n[[package]]\nlabel = "X"\nsoftware_error = true\ncolour = 1\n')
    with pytest.raises(RuleFileError, match="colour"):
        load_catalog(bad)


def test_cli_compute_json(cli, tmp_path):
    from review.db.session import Database
    from review.db import migrate
    db = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(db)
    known_corpus(db)
    db.dispose()
    code, out, err = cli("compute", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["reproducible"] == 4 and data["metric_papers"] == 8
    assert "computed 13 papers" in err


def test_human_parameter_strings_fill_params(db):
    from sqlalchemy import insert
    from review.db.models import HumanDecision
    from tests.compute_support import decision
    ids = known_corpus(db)
    with db.session() as s:
        s.execute(insert(HumanDecision), [decision(paper_id=ids["p03"], question="P1", answer=["-c 95 -r 1000 -n 2"],
                                                   annotator="z", ref="z-p1")])
    run_compute(db, Settings())
    row = _rows(db)["p03"]
    assert row.paper_params is True and row.params == ["-c 95 -r 1000 -n 2"] and row.r1 is True


def test_default_rule_set_is_the_configured_rule_file_not_the_newest(db):
    from review.db.models import PaperLabel, RuleSet
    ids = known_corpus(db)
    with db.session() as s:  # a BLEU rule file labelled afterwards must not replace the ROUGE labels
        bleu = RuleSet(name="bleu", metric="BLEU", sha256="f" * 64, content="#")
        s.add(bleu)
        s.flush()
        s.add(PaperLabel(paper_id=ids["p01"], rule_set_id=bleu.id, prelim=True, computes=False))
    result = run_compute(db, Settings())
    assert result.rule_set.startswith("rouge@") and result.reproducible == 4
    settings = Settings()
    settings.compute.rule_set = "bleu"
    assert run_compute(db, settings).rule_set.startswith("bleu@")


# --- human answers: one resolution rule, every codebase answer, ties stay ties (issue 17)

def _decide(db, *rows) -> None:
    from sqlalchemy import insert
    from review.db.models import HumanDecision
    with db.session() as s:
        s.execute(insert(HumanDecision), list(rows))


def _row(db, paper_id):
    with db.session() as s:
        return s.scalar(select(Reproducibility).where(Reproducibility.paper_id == paper_id))


def test_a_reviewers_c0_no_takes_the_codebase_out(db):
    """The issue's codebase 3: the scan alone makes the paper reproducible through R3; one
    reviewer says the repository is not the paper's code (C0 = no)."""
    from tests.compute_support import add_paper, decision
    known_corpus(db)
    pid, (cid,) = add_paper(db, "q01", codes=[{"packages": ["rouge-score"], "anti_features": [],
                                              "eval_reproducible": True}])
    run_compute(db, Settings())
    before = _row(db, pid)
    assert (before.has_code, before.code_metric, before.r3, before.reproducible) == (True, True, True, True)
    assert before.sources["C0"] == "automated"
    _decide(db, decision(codebase_id=cid, question="C0", answer="no", annotator="r1"))
    run_compute(db, Settings())
    after = _row(db, pid)
    assert (after.has_code, after.code_metric, after.r3, after.reproducible) == (False, None, False, False)
    assert after.code_urls == [] and after.code_packages == [] and after.sources["C0"] == "human"
    assert "C2" not in after.sources and after.label_source == "mixed"


def test_codebase_c1_and_c2_answers_count_per_codebase(db):
    from tests.compute_support import add_paper, decision
    known_corpus(db)
    pid, (a, b) = add_paper(db, "q02", codes=[{"packages": ["rouge-score"], "anti_features": [],
                                               "eval_reproducible": True},
                                              {"packages": [], "anti_features": [], "eval_reproducible": False}])
    _decide(db, decision(codebase_id=a, question="C0", answer="yes", annotator="r1"),
            decision(codebase_id=a, question="C1", answer=["MS/rouge"], annotator="r1"),
            decision(codebase_id=a, question="C2", answer="no", annotator="r1"))
    run_compute(db, Settings())
    row = _row(db, pid)
    assert row.code_packages == ["MS/rouge"] and row.code_metric is False and row.r3 is False
    assert row.sources["C0"] == "mixed" and row.sources["C1"] == "mixed" and row.sources["C2"] == "mixed"


def test_a_tie_keeps_the_automated_answer_flagged_disputed_until_adjudicated(db, tmp_path):
    """p01 (automated P4 = ROUGE-1.5.5, reproducible by R1): one reviewer says PT/rouge, a
    later one MS/rouge. The old rule took the newest (MS/rouge, R2 true, "human")."""
    from review.export import run_export
    from tests.compute_support import adjudication_source, decision
    ids = known_corpus(db)
    _decide(db, decision(paper_id=ids["p01"], question="P4", answer=["PT/rouge"], annotator="r1", minutes=1),
            decision(paper_id=ids["p01"], question="P4", answer=["MS/rouge"], annotator="r2", minutes=2))
    run_compute(db, Settings())
    row = _row(db, ids["p01"])
    assert row.paper_packages == ["ROUGE-1.5.5"] and row.r2 is False and row.reproducible is True
    assert row.sources["P4"] == "disputed" and row.label_source == "disputed"
    out = run_export(db, Settings(), out_dir=tmp_path / "out")
    with (out.out_dir / "dataset.csv").open() as fh:
        p01 = next(r for r in csv.DictReader(fh) if r["paper_ident"] == "p01")
    assert json.loads(p01["label_sources"])["P4"] == "disputed" and p01["label_source"] == "disputed"
    report = (out.out_dir / "report.html").read_text()
    assert "Disputed answers" in report and "<td>p01</td><td>P4</td>" in report
    # the adjudicator settles it: their answer is used, as a human answer
    origin = adjudication_source(db)
    _decide(db, {**decision(paper_id=ids["p01"], question="P4", answer=["MS/rouge"], annotator="judge", minutes=3),
                 "origin": origin})
    run_compute(db, Settings())
    row = _row(db, ids["p01"])
    assert row.paper_packages == ["MS/rouge"] and row.r2 is True and row.sources["P4"] == "human"
    out = run_export(db, Settings(), out_dir=tmp_path / "again")
    assert "Disputed answers" not in (out.out_dir / "report.html").read_text()


def test_adjudication_answers_count_only_for_disputed_questions(db):
    """The adjudicator of a P2 tie also answered P3 (pre-filled NONE): P3 keeps the reviewers'
    agreed ["stemming"]."""
    from tests.compute_support import adjudication_source, decision
    ids = known_corpus(db)
    origin = adjudication_source(db)
    p = ids["p02"]
    _decide(db, decision(paper_id=p, question="P2", answer=["recall"], annotator="r1"),
            decision(paper_id=p, question="P2", answer=["f-score"], annotator="r2"),
            decision(paper_id=p, question="P3", answer=["stemming"], annotator="r1"),
            decision(paper_id=p, question="P3", answer=["stemming"], annotator="r2"),
            {**decision(paper_id=p, question="P2", answer=["recall"], annotator="judge", minutes=5), "origin": origin},
            {**decision(paper_id=p, question="P3", answer=["NONE"], annotator="judge", minutes=5), "origin": origin})
    run_compute(db, Settings())
    row = _row(db, p)
    assert row.variants == ["recall"] and row.protocol == ["stemming"]
    assert row.sources["P2"] == "human" and row.sources["P3"] == "human"


def test_compute_uses_the_stored_resolutions_and_a_dry_run_stores_nothing(db):
    from review.db.models import HumanResolution
    from tests.compute_support import decision
    ids = known_corpus(db)
    run_compute(db, Settings(), dry_run=True)
    with db.session() as s:
        assert s.scalar(select(HumanResolution.id).limit(1)) is None
    run_compute(db, Settings())
    with db.session() as s:
        stored = {(r.kind, r.question): r.status for r in s.scalars(select(HumanResolution))}
    assert stored[("code", "C2")] == "majority" and stored[("papers", "P0")] == "agreed"
    _decide(db, decision(paper_id=ids["p07"], question="P0", answer="can't tell", annotator="r1"))
    run_compute(db, Settings())
    row = _row(db, ids["p07"])
    assert row.paper_metric is False and row.sources["P0"] == "disputed"
