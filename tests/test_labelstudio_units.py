"""The human pass without a server: agreement arithmetic, the one resolution rule, answers
and what the form shows, configs, selection, server URLs, the offline file path and the
commands' errors."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from sqlalchemy import select

from review.db import migrate
from review.db.models import HumanDecision, HumanResolution
from review.db.session import Database
from review.errors import InputFileError
from review.answers import UNSURE, normalize_param, vote_value
from review.labelstudio.agreement import agreement_from_votes, cohen_kappa, nominal_alpha, pairwise_kappa
from review.labelstudio.client import normalize_server_url
from review.labelstudio.offline import import_annotations
from review.labelstudio.select import choose, order
from review.labelstudio.tasks import answers_of, build_task, candidates, label_config, parse_ref
from review.resolution import Vote, resolve_votes
from review.settings import Settings
from tests.labelstudio_support import choices, seed_papers, text


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")


# --- agreement against hand-computed values (derivations in test_labelstudio.py)

P0 = {"A": {"r1": "y", "r2": "y", "r3": "y"}, "B": {"r1": "y", "r2": "y", "r3": "n"},
      "C": {"r1": "n", "r2": "n", "r3": "n"}, "D": {"r1": "y", "r2": "n"}}
P2 = {"A": {"r1": "R", "r2": "R"}, "B": {"r1": "RF", "r2": "RF"}, "C": {"r1": "N", "r2": "R"},
      "D": {"r1": "F", "r2": "F"}}


def test_alpha_matches_hand_computed_values():
    assert nominal_alpha(P0) == pytest.approx(1 / 3)
    assert nominal_alpha(P2) == pytest.approx(16 / 23)
    # a unit with a single answer carries no pairs and changes nothing
    assert nominal_alpha({**P0, "E": {"r1": "n"}}) == pytest.approx(1 / 3)
    # two raters, two units, total disagreement: Do=4/4, De=2*2*2/(4*3)=2/3 -> alpha=1-3/2=-0.5
    assert nominal_alpha({"u": {"a": "x", "b": "y"}, "v": {"a": "y", "b": "x"}}) == pytest.approx(-0.5)


def test_alpha_and_kappa_are_none_when_undefined():
    assert nominal_alpha({"u": {"a": "x", "b": "x"}}) is None  # one category: no expected disagreement
    assert nominal_alpha({"u": {"a": "x"}}) is None
    assert cohen_kappa([]) is None and cohen_kappa([("x", "x"), ("x", "x")]) is None


def test_kappa_matches_hand_computed_values():
    assert cohen_kappa([(a["r1"], a["r2"]) for a in P2.values()]) == pytest.approx(2 / 3)
    # 10 items: 4 yes/yes, 1 yes/no, 2 no/yes, 3 no/no: po=.7, pe=.5*.6+.5*.4=.5, kappa=.4
    pairs = [("y", "y")] * 4 + [("y", "n")] + [("n", "y")] * 2 + [("n", "n")] * 3
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_pairwise_kappa_with_three_reviewers_matches_hand_computed_values():
    """P0 by three reviewers: r1/r2 share A-D: y/y, y/y, n/n, y/n: po=3/4, pe=(3*2+1*2)/16=1/2,
    kappa=1/2; r1/r3 and r2/r3 share A-C: y/y, y/n, n/n: po=2/3, pe=(2*1+1*2)/9=4/9,
    kappa=(2/9)/(5/9)=2/5; mean (1/2+2/5+2/5)/3 = 13/30."""
    mean, pairs = pairwise_kappa(P0)
    assert mean == pytest.approx(13 / 30)
    assert {tuple(p["annotators"]): (p["items"], pytest.approx(p["kappa"])) for p in pairs} == {
        ("r1", "r2"): (4, 0.5), ("r1", "r3"): (3, 0.4), ("r2", "r3"): (3, 0.4)}
    rows = agreement_from_votes([Vote("papers", ord(u), "P0", r, "yes" if a == "y" else "no", False, 0)
                                 for u, answers in P0.items() for r, a in answers.items()])
    (p0,) = rows
    assert p0["kappa"] == pytest.approx(13 / 30) and p0["kappa_method"] == "cohen, mean of pairs"
    assert len(p0["kappa_pairs"]) == 3 and p0["alpha"] == pytest.approx(1 / 3)


def test_cant_tell_is_missing_for_agreement_and_p1_is_measured_twice():
    v = lambda item, who, q, a: Vote("papers", item, q, who, a, False, 0)  # noqa: E731
    rows = {r["question"]: r for r in agreement_from_votes([
        v(1, "a", "P0", "yes"), v(1, "b", "P0", "can't tell"), v(2, "a", "P0", "no"), v(2, "b", "P0", "no"),
        # both list parameters, typed differently: agreement on "lists parameters", and the strings agree too
        v(1, "a", "P1", ["-n 2  -m"]), v(1, "b", "P1", ["ROUGE-1.5.5.pl -m -n 2"]),
        # both list parameters, different ones: yes/no agrees, strings do not
        v(2, "a", "P1", ["-c 95"]), v(2, "b", "P1", ["-n 4"]),
        v(3, "a", "P1", []), v(3, "b", "P1", ["-n 2"])])}
    assert rows["P0"]["units"] == 1 and rows["P0"]["cant_tell"] == 1 and rows["P0"]["decisions"] == 4
    assert rows["P1"]["units"] == 3 and rows["P1"]["observed_agreement"] == pytest.approx(2 / 3)
    assert rows["P1 strings"]["units"] == 2 and rows["P1 strings"]["observed_agreement"] == pytest.approx(1 / 2)


# --- the one resolution rule

def votes(*answers, adjudicated=None, question="P0"):
    out = [Vote("papers", 1, question, f"r{i}", a, False, i) for i, a in enumerate(answers)]
    if adjudicated is not None:
        out.append(Vote("papers", 1, question, "boss", adjudicated, True, 99))
    return out


@pytest.mark.parametrize("answers, status, answer, adjudicate", [
    (("yes",), "single", "yes", False),
    (("yes", "Yes"), "agreed", "yes", False),
    (("yes", True, {"choices": ["Yes"]}), "agreed", "yes", False),
    (("yes", "yes", "no"), "majority", "yes", False),
    (("yes", "no"), "tie", None, True),
    (("yes", "no", "can't tell"), "unsure", None, True),
    (("can't tell",), "unsure", None, True),
    (("yes", "can't tell"), "unsure", None, True),  # one of two is no strict majority
    (("yes", "yes", "can't tell"), "majority", "yes", True),  # answered, and still queued
    (("yes", "maybe"), "single", "yes", False),  # an unreadable answer is no answer
])
def test_resolution_by_strict_majority(answers, status, answer, adjudicate):
    res = resolve_votes(votes(*answers))
    assert (res["status"], res["answer"], res["needs_adjudication"]) == (status, answer, adjudicate)


def test_multiple_choices_compare_as_sets_and_none_is_empty():
    res = resolve_votes(votes(["recall", "f-score"], ["f-score", "recall"], question="P2"))
    assert (res["status"], res["answer"]) == ("agreed", ["f-score", "recall"])
    res = resolve_votes(votes(["NONE"], [], question="P3"))
    assert (res["status"], res["answer"]) == ("agreed", [])
    assert resolve_votes(votes(["MS/rouge"], ["ROUGE-1.5.5"], question="P4"))["status"] == "tie"


def test_adjudication_counts_only_for_disputed_questions():
    res = resolve_votes(votes("yes", "no", adjudicated="no"))
    assert (res["status"], res["answer"], res["needs_adjudication"]) == ("adjudicated", "no", False)
    assert [v["count"] for v in res["votes"]] == [1, 1]  # the reviewers' tally is kept
    res = resolve_votes(votes("yes", "yes", "no", adjudicated="no"))  # nothing to adjudicate: ignored
    assert (res["status"], res["answer"]) == ("majority", "yes")
    res = resolve_votes(votes(["stemming"], ["stemming"], adjudicated=["NONE"], question="P3"))
    assert (res["status"], res["answer"]) == ("agreed", ["stemming"])
    res = resolve_votes(votes("yes", "no", adjudicated="can't tell"))  # settles nothing
    assert (res["status"], res["needs_adjudication"]) == ("tie", True)
    res = resolve_votes(votes("yes", "yes", "can't tell", adjudicated="no"))  # queued by "can't tell"
    assert (res["status"], res["answer"]) == ("adjudicated", "no")


def test_p1_ties_only_on_whether_parameters_are_listed():
    res = resolve_votes(votes(["-n 2 -m"], ["-m  -n 2", "-c 95"], question="P1"))
    assert (res["status"], res["answer"]) == ("agreed", ["-c 95", "-n 2 -m"])
    assert res["votes"] == [{"answer": "yes", "count": 2, "annotators": ["r0", "r1"]}]
    res = resolve_votes(votes(["-n 2"], [], question="P1"))
    assert (res["status"], res["answer"]) == ("tie", None)
    assert resolve_votes(votes([], "no", question="P1"))["answer"] == []
    assert resolve_votes(votes("yes", question="P1"))["answer"] == "yes"  # no strings given


@pytest.mark.parametrize("text, normal", [
    ("-n 2 -m", "-m -n 2"), ("  -m   -n 2 ", "-m -n 2"), ("ROUGE-1.5.5.pl -c 95 -r 1000 -n 2", "-c 95 -n 2 -r 1000"),
    ("'-a -c 95'", "-a -c 95"), ("stemming", "stemming"),
])
def test_parameter_strings_are_normalized(text, normal):
    assert normalize_param(text) == normal


def test_vote_values():
    assert vote_value("P0", ["can't tell"]) == UNSURE and vote_value("C1", ["MS/rouge", "can't tell"]) == UNSURE
    assert vote_value("P1", ["-n 2"]) is True and vote_value("P1", []) is False and vote_value("P1", "No") is False
    assert vote_value("P4", ["NONE"]) == () and vote_value("C2", "maybe") is None


# --- configs and answers

def test_label_configs_hold_every_question():
    papers, code = label_config("papers"), label_config("code")
    assert papers.scored == ["P0", "P1", "P2", "P3", "P4", "C0"] and "note" in papers.questions
    assert code.scored == ["C0", "C1", "C2"] and "note" in code.questions
    assert not papers.questions["P0"].multiple and papers.questions["P4"].multiple
    assert {"ROUGE-1.5.5", "MS/rouge", "GL/rougescore", "unknown pyrouge", "NONE"} <= set(papers.questions["P4"].choices)
    for xml in (papers.xml, code.xml):
        assert "$evidence" in xml and "$links" in xml
    for config, question in ((papers, "P0"), (code, "C0"), (code, "C1"), (code, "C2")):
        assert UNSURE in config.questions[question].choices
    assert papers.questions["P2"].shown_when == ("P0", ("yes",)) and papers.questions["P0"].shown_when is None
    assert code.questions["C2"].shown_when == ("C0", ("yes",))


def test_answers_are_normalized():
    config = label_config("papers")
    got = answers_of([choices("P0", "yes"), choices("P2", "recall", "f-score", "recall"),
                      text("P1", "-n 2  -m\n\n-c 95", "-n 2 -m"), text("note", "fine", ""),
                      {"from_name": "other", "value": {}}], config)
    assert got == {"P0": "yes", "P2": ["f-score", "recall"], "P1": ["-n 2 -m", "-c 95"], "note": "fine"}
    assert parse_ref("paper:12") == ("papers", 12) and parse_ref("codebase:3") == ("code", 3)
    assert parse_ref("paper:x") is None and parse_ref(None) is None


def test_only_what_the_form_shows_counts():
    papers, code = label_config("papers"), label_config("code")
    # P0 = no hides P1-P4: answers left behind there (pre-filled, or typed before switching) do not count
    got = answers_of([choices("P0", "no"), choices("P2", "NONE"), text("P1", "-n 2"), text("note", "x")], papers)
    assert got == {"P0": "no", "note": "x"}
    # P0 = yes with P1 left empty: "empty = none"
    assert answers_of([choices("P0", "yes"), choices("P4", "MS/rouge")], papers) == {
        "P0": "yes", "P1": [], "P4": ["MS/rouge"]}
    assert answers_of([choices("P0", "can't tell"), choices("P4", "MS/rouge")], papers) == {"P0": "can't tell"}
    assert answers_of([choices("C0", "no"), choices("C1", "MS/rouge"), choices("C2", "yes")], code) == {"C0": "no"}
    assert answers_of([], papers) == {}


def test_hidden_questions_are_not_pre_filled(db):
    from tests.labelstudio_support import seed_code

    seed_papers(db, 2, computes=lambda i: i == 0)  # paper 0 also lists parameters
    papers = label_config("papers")
    with db.session() as s:
        by_ident = {c.ident: c for c in candidates(s, "papers")}
        yes = build_task(s, by_ident["2020.test-0"], papers)["predictions"][0]["result"]
        no = build_task(s, by_ident["2020.test-1"], papers)["predictions"][0]["result"]
    assert [r["from_name"] for r in no] == ["P0"] and no[0]["value"] == {"choices": ["no"]}
    assert [r["from_name"] for r in yes] == ["P0", "P1", "P2", "P3", "P4", "C0"]
    deleted, alive = seed_code(db)
    code = label_config("code")
    with db.session() as s:
        by_id = {c.item_id: c for c in candidates(s, "code")}
        gone = build_task(s, by_id[deleted], code)["predictions"][0]["result"]
        there = build_task(s, by_id[alive], code)["predictions"][0]["result"]
    assert [(r["from_name"], r["value"]["choices"]) for r in gone] == [("C0", ["no"])]
    assert [r["from_name"] for r in there] == ["C0", "C1", "C2"]


@pytest.mark.parametrize("typed", ["http://127.0.0.1:8089", "http://localhost:8089/", "HTTP://LocalHost:8089",
                                   "http://[::1]:8089", "http://user:pw@127.0.0.1:8089//", "localhost:8089"])
def test_server_urls_are_normalized(typed):
    assert normalize_server_url(typed) == "http://localhost:8089"


def test_server_urls_keep_what_tells_servers_apart():
    assert normalize_server_url("https://ls.example.org:443/") == "https://ls.example.org"
    assert normalize_server_url("http://ls.example.org:80/label-studio/") == "http://ls.example.org/label-studio"
    assert normalize_server_url("https://ls.example.org:8443") == "https://ls.example.org:8443"
    assert normalize_server_url("http://ls.example.org") != normalize_server_url("https://ls.example.org")


# --- selection and order

def test_selection_is_seeded_and_stratified(db):
    seed_papers(db, 12, computes=lambda i: i % 3 != 0)
    with db.session() as s:
        cands = candidates(s, "papers")
        assert len(cands) == 12
        assert len(choose(s, cands, "flagged")) == 8
        one = [c.item_id for c in choose(s, cands, "sample", n=5, seed=1)]
        assert one == [c.item_id for c in choose(s, list(reversed(cands)), "sample", n=5, seed=1)]
        assert one != [c.item_id for c in choose(s, cands, "sample", n=5, seed=2)]
        strat = choose(s, cands, "stratified", n=2, seed=0, by="year")
        assert Counter(c.year for c in strat) == {2018: 2, 2019: 2, 2020: 2}
    ordered = order(cands, "least-certain")
    assert [c.certainty for c in ordered] == sorted(c.certainty for c in cands)


# --- offline import from a Label Studio JSON export

def export_of(ids, annotations):
    return [{"id": 100 + n, "data": {"ref": f"paper:{pid}", "ident": f"2020.test-{n}"},
             "annotations": annotations(n)} for n, pid in enumerate(ids)]


def test_offline_import_is_idempotent_and_follows_updates_and_deletions(db, settings, tmp_path):
    ids = seed_papers(db, 3)
    f = tmp_path / "export.json"
    ann = lambda n: [{"id": 10 * n + k, "completed_by": k, "result": [choices("P0", "yes")],  # noqa: E731
                      "updated_at": "2026-11-20T10:00:00Z", "was_cancelled": False} for k in (1, 2)]
    f.write_text(json.dumps(export_of(ids, ann)))
    first = import_annotations(db, settings, f)
    assert (first.new, first.tasks) == (12, 3)  # P0 = yes, and P1 left empty = "none"
    assert (import_annotations(db, settings, f).new, import_annotations(db, settings, f).unchanged) == (0, 12)
    # later export: one answer changed, one annotation skipped (cancelled), one gone
    changed = json.loads(f.read_text())
    changed[0]["annotations"][0]["result"] = [choices("P0", "no")]
    changed[0]["annotations"][0]["updated_at"] = "2026-11-21T10:00:00Z"
    changed[1]["annotations"][0]["was_cancelled"] = True
    del changed[2]["annotations"][1]
    f.write_text(json.dumps(changed))
    res = import_annotations(db, settings, f)
    # P0 yes -> no updates one row and withdraws its (now hidden) P1; the skipped and the gone lose two each
    assert (res.updated, res.withdrawn, res.deleted) == (1, 3, 2)
    with db.session() as s:
        rows = s.scalars(select(HumanDecision).order_by(HumanDecision.id)).all()
        assert len(rows) == 12 and sum(r.deleted for r in rows) == 5
        assert {r.origin for r in rows} == {"file:export"} and rows[0].annotator == "user:1"
        res0 = s.scalar(select(HumanResolution).where(HumanResolution.item_id == ids[0]))
        assert res0.status == "tie" and res0.needs_adjudication


def test_offline_import_refuses_bad_files_and_skips_foreign_tasks(db, settings, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputFileError, match="not JSON") as exc:
        import_annotations(db, settings, bad)
    assert exc.value.exit_code == 8
    bad.write_text(json.dumps({"tasks": []}))
    with pytest.raises(InputFileError, match="not a Label Studio JSON export"):
        import_annotations(db, settings, bad)
    with pytest.raises(InputFileError, match="not found"):
        import_annotations(db, settings, tmp_path / "missing.json")
    ids = seed_papers(db, 1)
    mixed = tmp_path / "mixed.json"
    one = [{"id": 1, "completed_by": 1, "result": [choices("P0", "yes")], "updated_at": "2026-11-20T10:00:00Z"}]
    mixed.write_text(json.dumps([
        {"id": 1, "data": {"ref": f"paper:{ids[0]}", "ident": "2020.test-0"}, "annotations": one},
        {"id": 2, "data": {"ref": "paper:99999", "ident": "nope"}, "annotations": one},
        {"id": 3, "data": {"ref": f"paper:{ids[0]}", "ident": "another database"}, "annotations": one},
        {"id": 4, "data": {"text": "no ref"}, "annotations": one}]))
    res = import_annotations(db, settings, mixed)
    assert (res.new, res.tasks) == (2, 1)  # P0 and the empty P1 of the one known task


# --- commands

def test_cli_offline_export_and_errors(cli, tmp_path, monkeypatch):
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    seed_papers(database, 2)
    database.dispose()
    code, out, err = cli("queue", "papers", "--offline", "tasks.json", "--json")
    assert code == 0, err
    assert json.loads(out)["selected"] == 2 and "wrote 2 tasks" in err
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert [t["data"]["ident"] for t in tasks] == ["2020.test-0", "2020.test-1"]
    code, _, err = cli("queue", "papers", "--offline", "dry.json", "--dry-run")
    assert code == 0 and not (tmp_path / "dry.json").exists()
    code, _, err = cli("queue", "papers", "--select", "sample")
    assert code == 3 and "needs --n" in err
    code, _, err = cli("queue", "bogus")
    assert code == 3 and "unknown queue 'bogus'" in err
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    code, _, err = cli("queue", "papers")
    assert code == 3 and "LABEL_STUDIO_API_KEY" in err
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "sekrit-key-123")
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    code, out, err = cli("queue", "papers")
    assert code == 7 and "cannot reach Label Studio" in err and "sekrit-key-123" not in out + err
    code, _, err = cli("pull", "--from-file", "missing.json")
    assert code == 8


def test_status_shows_agreement_per_question(cli, tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    ids = seed_papers(database, 4)
    answers = [("yes", "yes"), ("yes", "no"), ("no", "no"), ("yes", "yes")]
    export = [{"id": n, "data": {"ref": f"paper:{pid}", "ident": f"2020.test-{n}"},
               "annotations": [{"id": 10 * n + k, "completed_by": k, "updated_at": "2026-11-20T10:00:00Z",
                                "result": [choices("P0", answers[n][k])]} for k in (0, 1)]}
              for n, pid in enumerate(ids)]
    (tmp_path / "export.json").write_text(json.dumps(export))
    database.dispose()
    code, out, err = cli("pull", "--from-file", "export.json")
    assert code == 0, err
    assert "P0" in out and (tmp_path / "exports" / "human_agreement.json").is_file()
    code, out, _ = cli("status", "--json")
    p0 = next(r for r in json.loads(out)["agreement"] if r["question"] == "P0")
    # pairs y/y, y/n, n/n, y/y: po=3/4, pe=(3*2+1*2)/16=1/2, kappa=1/2;
    # alpha: n=8 (5 y, 3 n), Do=2/8, De=2*5*3/56=30/56, alpha=1-(1/4)/(30/56)=1-56/120=8/15
    assert p0["question"] == "P0" and p0["kappa"] == pytest.approx(0.5) and p0["alpha"] == pytest.approx(8 / 15)
    code, out, _ = cli("status")
    assert "Reviewer agreement" in out and "0.533" in out


def test_queue_reads_the_labels_of_the_configured_rule_file(db, settings, tmp_path):
    """Like compute: label.rules names the rule set, not whichever was labelled last."""
    stage = pytest.importorskip("review.rules.stage")
    configured = stage.resolve_rules(settings).sha256
    from tests.labelstudio_support import relabel

    ids = seed_papers(db, 2, sha=configured)
    relabel(db, ids, "9" * 64)  # a newer rule set (another metric, say)
    out = tmp_path / "t.json"
    from review.labelstudio import run_queue

    run_queue(db, settings, "papers", offline=out)
    assert {t["predictions"][0]["model_version"] for t in json.loads(out.read_text())} == {configured}
    run_queue(db, settings, "papers", offline=out, rule_set="9999")
    assert {t["predictions"][0]["model_version"] for t in json.loads(out.read_text())} == {"9" * 64}
