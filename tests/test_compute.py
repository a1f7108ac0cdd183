"""`review compute` on a corpus whose every label was worked out by hand.

The 13 papers of tests/compute_support.py cover: R1 from automated labels, R2 from a
no-configuration package, an alias (rouge-score -> GL/rougescore), "unknown pyrouge"
counting (or not) as a package, R3 overridden by a 2-of-3 human majority on a codebase,
a reviewer who changed their answer, withdrawn (deleted) decisions, a human P1 and P4
filling what the rules missed, untested packages (unknown, never correct), and papers
without a PDF or text.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from review.compute import load_catalog, parse_bool, parse_list, resolve_decisions, Decision, run_compute
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
    assert (result.papers, result.rouge_papers, result.reproducible, result.software_error) == (13, 8, 4, 4)
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
    settings.compute.unknown_pyrouge_counts = False
    settings.compute.github_rouge_counts = False
    run_compute(db, settings)
    rows = _rows(db)
    assert rows["p04"].r1 is False and rows["p04"].reproducible is False
    assert rows["p04"].category == "unknown package"
    assert rows["p12"].software_error == "unknown" and rows["p12"].category == "unknown package"


def test_automated_code_rouge_can_be_turned_off(db):
    known_corpus(db)
    settings = Settings()
    settings.compute.automated_code_rouge = False
    run_compute(db, settings)
    rows = _rows(db)
    assert rows["p11"].code_rouge is None  # no human C2 and no automated proposal
    assert rows["p05"].code_rouge is False  # the human majority still counts


def test_dry_run_writes_nothing(db):
    known_corpus(db)
    result = run_compute(db, Settings(), dry_run=True)
    assert result.reproducible == 4 and _rows(db) == {}


def test_majority_latest_per_reviewer_and_ties_go_to_the_newest():
    from datetime import timedelta
    d = lambda q, a, v, m, i: Decision(q, a, T0 + timedelta(minutes=m), i, v)  # noqa: E731
    assert resolve_decisions([d("P0", "a", True, 0, 1), d("P0", "a", False, 5, 2), d("P0", "b", True, 1, 3)]) == {"P0": False}
    assert resolve_decisions([d("P0", "a", True, 0, 1), d("P0", "b", False, 1, 2), d("P0", "c", False, 2, 3)]) == {"P0": False}
    assert resolve_decisions([d("P4", "a", ("X",), 0, 1), d("P4", "b", ("Y",), 1, 2)]) == {"P4": ["Y"]}


@pytest.mark.parametrize("answer,value", [(True, True), ("No", False), (["Yes"], True), ({"choices": ["No"]}, False),
                                          ("maybe", None), (["Yes", "No"], None)])
def test_bool_answers(answer, value):
    assert parse_bool(answer) is value


def test_list_answers_drop_none():
    assert parse_list(["NONE"]) == [] and parse_list({"choices": ["b", "a", "a"]}) == ["a", "b"]
    assert parse_list(3) is None


def test_catalog_aliases_and_unknown_is_not_correct():
    cat = load_catalog("patterns/packages.toml")
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
    assert data["reproducible"] == 4 and data["rouge_papers"] == 8
    assert "computed 13 papers" in err


def test_p1_parameter_strings_vote_as_yes_and_adjudication_wins():
    from datetime import timedelta
    from review.compute import parse_answer
    assert parse_answer("P1", ["-c 95 -n 2"]) == ["-c 95 -n 2"] and parse_answer("P1", []) == []
    assert parse_answer("P1", "no") is False and parse_answer("P1", ["NONE"]) == []
    d = lambda q, a, v, m, i, adj=False: Decision(q, a, T0 + timedelta(minutes=m), i, v, adjudication=adj)  # noqa: E731
    # two reviewers copied different strings: both are "yes", the newest strings are kept
    assert resolve_decisions([d("P1", "a", ("-n 2",), 0, 1), d("P1", "b", ("-n 2 -m",), 1, 2),
                              d("P1", "c", (), 2, 3)]) == {"P1": ["-n 2 -m"]}
    # an adjudicator overrules a 2-1 majority
    assert resolve_decisions([d("P0", "a", True, 0, 1), d("P0", "b", True, 1, 2), d("P0", "c", False, 2, 3),
                              d("P0", "judge", False, 3, 4, True)]) == {"P0": False}


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
