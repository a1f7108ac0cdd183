"""The human pass against a real Label Studio: queue, annotate as reviewers, pull, agree.

Reviewers are real accounts (signed up through the web form) acting with their own API
tokens, so annotations carry their identity exactly as in production.
"""

from __future__ import annotations

import csv
import json
import uuid

import pytest
import requests
from sqlalchemy import func, select, text as sql

from review.db import migrate
from review.db.models import HumanDecision, HumanProject, HumanResolution, HumanTask, Run
from review.db.session import Database
from review.errors import ServiceError
from review.labelstudio import run_pull, run_queue
from review.labelstudio.client import LabelStudioClient, normalize_server_url
from review.labelstudio.offline import import_annotations
from review.labelstudio.pull import PullIncomplete
from review.settings import Settings
from tests.labelstudio_support import (choices, ls_server, relabel, reviewers, seed_code, seed_papers,  # noqa: F401
                                       text, _free_port)

SHA1, SHA2 = "1" * 64, "2" * 64


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")


@pytest.fixture
def sdb(sqlite_url):
    database = Database(sqlite_url)
    migrate.upgrade(database)
    yield database
    database.dispose()


def title() -> str:
    return f"test {uuid.uuid4().hex[:10]}"


def task_ids(db, kind: str = "papers") -> dict[int, int]:
    """paper id -> Label Studio task id (of the review projects), from the queue's mapping."""
    with db.session() as s:
        return {t.item_id: t.task_id for t in s.scalars(
            select(HumanTask).join(HumanProject, HumanProject.id == HumanTask.project_ref)
            .where(HumanTask.kind == kind, HumanProject.purpose == "review"))}


def decisions(db) -> list[tuple]:
    with db.session() as s:
        return [tuple(r) for r in s.execute(select(
            HumanDecision.id, HumanDecision.paper_id, HumanDecision.question, HumanDecision.answer,
            HumanDecision.annotator, HumanDecision.annotated_at, HumanDecision.origin, HumanDecision.annotation_ref,
            HumanDecision.deleted).order_by(HumanDecision.id))]


def test_queue_is_idempotent_and_updates_predictions_after_a_rule_change(db, settings, ls_server):
    client = ls_server.client()
    ids = seed_papers(db, 5, sha=SHA1, computes=lambda i: i != 2)
    name = title()
    first = run_queue(db, settings, "papers", project=name, client=client, overlap=2)
    assert (first.imported, first.updated, first.unchanged) == (5, 0, 0)
    again = run_queue(db, settings, "papers", project=name, client=client, overlap=2)
    assert (again.imported, again.updated, again.unchanged, again.project_id) == (0, 0, 5, first.project_id)
    remote = list(client.all_tasks(first.project_id))
    assert sorted(t.ref for t in remote) == sorted(f"paper:{i}" for i in ids)
    assert client.get_project(first.project_id)["maximum_annotations"] == 2
    # what the reviewer sees: identity, PDF link, evidence snippets; the proposal as a prediction
    t0 = next(t for t in remote if t.ref == f"paper:{ids[0]}")
    assert t0.data["ident"] == "2020.test-0" and "https://example.org/0.pdf" in t0.data["links"]
    assert "we use ROUGE-1.5.5 with stemming" in t0.data["evidence"]
    (pred,) = t0.predictions
    assert pred["model_version"] == SHA1
    by_q = {r["from_name"]: r["value"] for r in pred["result"]}
    assert by_q["P0"] == {"choices": ["yes"]} and by_q["P4"] == {"choices": ["ROUGE-1.5.5"]}  # unknown label left out
    assert by_q["P1"] == {"text": [" -n 2 -m"]} and sorted(by_q["P2"]["choices"]) == ["f-score", "recall"]

    # a rule change: two papers relabelled under a new rule file
    relabel(db, ids[:2], SHA2)
    after = run_queue(db, settings, "papers", project=name, client=client, overlap=2)
    assert (after.imported, after.updated, after.unchanged) == (0, 2, 3)
    remote = {t.ref: t for t in client.all_tasks(first.project_id)}
    assert len(remote) == 5
    for pid in ids:
        versions = [p["model_version"] for p in remote[f"paper:{pid}"].predictions]
        assert versions == ([SHA2] if pid in ids[:2] else [SHA1])
    # a lost mapping (crash between import and commit) is healed from the server, not re-imported
    with db.session() as s:
        s.execute(sql("DELETE FROM human_tasks"))
    healed = run_queue(db, settings, "papers", project=name, client=client, overlap=2)
    assert (healed.imported, healed.unchanged) == (0, 5)
    assert len(list(client.all_tasks(first.project_id))) == 5
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(HumanTask)) == 5
        runs = s.scalars(select(Run).where(Run.command == "queue papers")).all()
        assert [r.counts.get("imported", 0) for r in runs] == [5, 0, 0, 0] and all(r.status == "ok" for r in runs)


def _annotate_matrix(client_of, tasks: dict[int, int], ids: list[int]) -> dict[tuple[str, int], int]:
    """The hand-computed design (see test docstring); returns (reviewer, paper) -> annotation id."""
    a, b, c, d, e = ids
    p0 = {("r1", a): "yes", ("r2", a): "yes", ("r3", a): "yes",
          ("r1", b): "yes", ("r2", b): "yes", ("r3", b): "no",
          ("r1", c): "yes", ("r2", c): "yes", ("r3", c): "no",
          ("r1", d): "yes", ("r2", d): "no",
          ("r1", e): "no", ("r2", e): "no", ("r3", e): "no"}
    p2 = {("r1", a): ["recall"], ("r2", a): ["recall"],
          ("r1", b): ["recall", "f-score"], ("r2", b): ["f-score", "recall"],
          ("r1", c): ["NONE"], ("r2", c): ["recall"]}
    p3 = {("r1", c): ["stemming"], ("r2", c): ["stemming"]}
    made = {}
    for (who, pid), answer in p0.items():
        result = [choices("P0", answer)]
        if (who, pid) in p2:
            result.append(choices("P2", *p2[(who, pid)]))
        if (who, pid) in p3:
            result.append(choices("P3", *p3[(who, pid)]))
        if (who, pid) == ("r1", a):
            result += [text("P1", "-n 2 -m\n-c 95", "  -n 2   -m "), text("note", "checked section 4")]
        made[(who, pid)] = client_of[who].create_annotation(tasks[pid], result)
    return made


def _resolutions(db) -> dict[tuple[str, str], tuple]:
    """(paper ident or codebase url, question) -> what the reviewers resolve to (annotator names aside)."""
    from review.db.models import Codebase, Paper
    with db.session() as s:
        papers = s.execute(select(Paper.ident, HumanResolution).join(Paper, Paper.id == HumanResolution.item_id)
                           .where(HumanResolution.kind == "papers"))
        codes = s.execute(select(Codebase.url, HumanResolution).join(Codebase, Codebase.id == HumanResolution.item_id)
                          .where(HumanResolution.kind == "code"))
        return {(name, r.question): (r.status, json.dumps(r.answer), r.reviewers, r.needs_adjudication,
                                     sorted((json.dumps(v["answer"]), v["count"]) for v in r.votes))
                for name, r in [*papers, *codes]}


def _same_offline(db, settings, server, project_ids: list[int], tmp_path, seed) -> None:
    """The offline path (Label Studio JSON exports read with `review pull --from-file`) into a
    second database seeded the same way (`seed(db)`) gives the same resolutions as the pulls."""
    other = Database(f"sqlite:///{tmp_path / 'offline.sqlite'}")
    migrate.upgrade(other)
    try:
        seed(other)
        for pid in project_ids:
            import_annotations(other, settings, _export(server, pid, tmp_path / f"project-{pid}.json"))
        online = _resolutions(db)
        assert online and _resolutions(other) == online
    finally:
        other.dispose()


def _export(server, project_id: int, path):
    r = requests.get(f"{server.url}/api/projects/{project_id}/export", params={"exportType": "JSON"},
                     headers={"Authorization": f"Token {server.token}"}, timeout=60)
    r.raise_for_status()
    path.write_bytes(r.content)
    return path


def test_pull_resolves_by_majority_marks_ties_and_measures_agreement(db, settings, ls_server, reviewers, tmp_path):
    """P0 by three reviewers on five papers: agreed, majority, majority, tie (two reviewers), agreed no.
    Hand-computed nominal alpha: 14 pairable values (8 yes, 6 no); ordered yes/no pairs within units,
    each weighted 1/(m-1): b 2, c 2, d 2 = 6; alpha = 1 - 13*6/(2*8*6) = 3/16. Cohen's kappa per pair:
    r1/r2 over 5 papers po=4/5, pe=(4*3+1*2)/25=14/25, kappa=6/11; r1/r3 and r2/r3 over 4 papers
    po=1/2, pe=(3*1+1*3)/16=3/8, kappa=1/5; mean (6/11+1/5+1/5)/3 = 52/165. P2 by two reviewers on the
    three papers both said yes to (P2 shows only then): (R,R), (RF,RF), (N,R): po=2/3,
    pe=(1*2+1*1)/9=1/3, kappa=1/2; alpha: counts R3 RF2 N1, 2 ordered pairs, 1-5*2/22 = 6/11."""
    ids = seed_papers(db, 5, sha=SHA1)
    name = title()
    q = run_queue(db, settings, "papers", project=name, client=ls_server.client(), overlap=3)
    tasks = task_ids(db)
    r1, r2, r3 = reviewers
    who = {"r1": r1.client, "r2": r2.client, "r3": r3.client}
    made = _annotate_matrix(who, tasks, ids)
    before = {t.ref: len(t.annotations) for t in ls_server.client().all_tasks(q.project_id)}
    assert sorted(before.values()) == [2, 3, 3, 3, 3]

    res = run_pull(db, settings, project=name, client=ls_server.client())
    # 14 P0, 6 P2, 2 P3, a note, and P1 for every P0 = yes (one typed, seven left empty = none)
    assert res.new == 14 + 6 + 2 + 1 + 8 and res.updated == 0 and res.deleted == 0 and res.tasks == 5
    a, b, c, d, e = ids
    with db.session() as s:
        rows = {(r.item_id, r.question): r for r in s.scalars(select(HumanResolution))}
        one = s.scalar(select(HumanDecision).where(HumanDecision.annotation_ref == str(made[("r1", a)]),
                                                   HumanDecision.question == "P1"))
        assert one.answer == ["-n 2 -m", "-c 95"] and one.annotator == r1.email and one.paper_id == a
        assert one.origin == f"label_studio:{normalize_server_url(ls_server.url)}#{q.project_id}"
        assert one.task_ref == str(tasks[a])
        note = s.scalar(select(HumanDecision).where(HumanDecision.question == "note"))
        assert note.answer == "checked section 4"
    assert {k: (rows[(k, "P0")].status, rows[(k, "P0")].answer) for k in ids} == {
        a: ("agreed", "yes"), b: ("majority", "yes"), c: ("majority", "yes"), d: ("tie", None), e: ("agreed", "no")}
    assert rows[(d, "P0")].needs_adjudication and rows[(c, "P2")].status == "tie" and res.to_adjudicate == 2
    assert rows[(b, "P2")].status == "agreed" and rows[(b, "P2")].answer == ["f-score", "recall"]
    assert (rows[(a, "P1")].status, rows[(a, "P1")].answer) == ("majority", [])  # r1 alone lists parameters
    agree = {r["question"]: r for r in res.agreement}
    assert agree["P0"]["alpha"] == pytest.approx(3 / 16) and agree["P0"]["kappa"] == pytest.approx(52 / 165)
    assert agree["P0"]["kappa_method"] == "cohen, mean of pairs"
    assert {tuple(sorted(p["annotators"])): pytest.approx(p["kappa"]) for p in agree["P0"]["kappa_pairs"]} == {
        tuple(sorted((r1.email, r2.email))): 6 / 11, tuple(sorted((r1.email, r3.email))): 0.2,
        tuple(sorted((r2.email, r3.email))): 0.2}
    assert agree["P2"]["kappa"] == pytest.approx(1 / 2) and agree["P2"]["alpha"] == pytest.approx(6 / 11)
    assert agree["P2"]["kappa_method"] == "cohen"
    assert agree["P0"]["units"] == 5 and agree["P0"]["annotators"] == 3
    exported = json.loads((settings.exports_dir / "human_agreement.json").read_text())
    assert {r["question"] for r in exported["agreement"]} >= {"P0", "P2"}

    # the offline path gives the same resolutions (annotators are user ids in the file, e-mails online)
    offline_db = Database(f"sqlite:///{tmp_path / 'offline.sqlite'}")
    migrate.upgrade(offline_db)
    seed_papers(offline_db, 5, sha=SHA1)
    import_annotations(offline_db, settings, _export(ls_server, q.project_id, tmp_path / "review.json"))
    assert _resolutions(offline_db) == _resolutions(db)

    # a rerun changes nothing
    again = run_pull(db, settings, project=name, client=ls_server.client())
    assert (again.new, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 31)

    # reviewer 3 changes their mind on B; reviewer 2 deletes their annotation of D
    r3.client.update_annotation(made[("r3", b)], [choices("P0", "yes")])
    r2.client.delete_annotation(made[("r2", d)])
    res = run_pull(db, settings, project=name, client=ls_server.client())
    assert (res.updated, res.new, res.deleted) == (1, 1, 1)  # B's P0, B's (empty) P1; r2's P0 on D
    with db.session() as s:
        rows = {(r.item_id, r.question): r for r in s.scalars(select(HumanResolution))}
        gone = s.scalars(select(HumanDecision).where(HumanDecision.annotation_ref == str(made[("r2", d)]))).all()
        assert len(gone) == 1 and all(g.deleted for g in gone)  # kept for the audit trail, marked deleted
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 32
    assert (rows[(b, "P0")].status, rows[(d, "P0")].status, rows[(d, "P0")].answer) == ("agreed", "single", "yes")
    assert not rows[(d, "P0")].needs_adjudication
    offline_db.dispose()


def test_adjudication_shows_the_dispute_and_settles_only_it(sdb, settings, ls_server, reviewers, tmp_path):
    """Issue 17, item 3: a P2 tie and an agreed P3 go to the adjudicator, who sees each
    reviewer's P2 answer and a form pre-filled with nothing for P2; their P3 = NONE is
    ignored (nobody disputed P3) and their P2 settles the tie."""
    from review.compute import run_compute
    from review.db.models import Reproducibility

    ids = seed_papers(sdb, 2, sha=SHA1)
    name = title()
    run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=2)
    tasks = task_ids(sdb)
    r1, r2, r3 = reviewers
    for rev, p2 in ((r1, "recall"), (r2, "f-score")):
        rev.client.create_annotation(tasks[ids[0]], [choices("P0", "yes"), choices("P2", p2),
                                                     choices("P3", "stemming")])
        rev.client.create_annotation(tasks[ids[1]], [choices("P0", "yes"), choices("P2", "recall")])
    run_pull(sdb, settings, project=name, client=ls_server.client())
    adj = run_queue(sdb, settings, "papers", project=name + " adj", select_="disputed", client=ls_server.client())
    assert (adj.imported, adj.overlap) == (1, 1)
    (task,) = list(ls_server.client().all_tasks(adj.project_id))
    assert task.ref == f"paper:{ids[0]}" and task.data["purpose"] == "adjudication"
    assert task.data["dispute"] == f"P2 is disputed: {r1.email}: recall; {r2.email}: f-score"
    (pred,) = task.predictions
    prefilled = {r["from_name"]: r["value"] for r in pred["result"]}
    assert "P2" not in prefilled and prefilled["P3"] == {"choices": ["stemming"]} and prefilled["P0"] == {
        "choices": ["yes"]}
    assert "$dispute" in ls_server.client().get_project(adj.project_id)["label_config"]
    # a rerun with nothing changed leaves the task alone
    again = run_queue(sdb, settings, "papers", project=name + " adj", select_="disputed", client=ls_server.client())
    assert (again.imported, again.updated, again.unchanged) == (0, 0, 1)

    r3.client.create_annotation(task.id, [choices("P0", "yes"), choices("P2", "recall"), choices("P3", "NONE")])
    run_pull(sdb, settings, client=ls_server.client())
    with sdb.session() as s:
        res = {r.question: r for r in s.scalars(select(HumanResolution).where(HumanResolution.item_id == ids[0]))}
    assert (res["P2"].status, res["P2"].answer, res["P2"].needs_adjudication) == ("adjudicated", ["recall"], False)
    assert (res["P3"].status, res["P3"].answer) == ("agreed", ["stemming"])
    run_compute(sdb, settings)
    with sdb.session() as s:
        row = s.scalar(select(Reproducibility).where(Reproducibility.paper_id == ids[0]))
    assert (row.variants, row.protocol, row.sources["P2"], row.sources["P3"]) == (
        ["recall"], ["stemming"], "human", "human")

    # offline: both exports imported elsewhere give the same resolutions (the adjudication file
    # is recognised by its tasks' purpose)
    other = Database(f"sqlite:///{tmp_path / 'offline.sqlite'}")
    migrate.upgrade(other)
    seed_papers(other, 2, sha=SHA1)
    (review_pid,) = [p.project_id for p in _projects(sdb) if p.title == name]
    import_annotations(other, settings, _export(ls_server, review_pid, tmp_path / "review.json"))
    import_annotations(other, settings, _export(ls_server, adj.project_id, tmp_path / "adjudication.json"))
    assert _resolutions(other) == _resolutions(sdb)
    other.dispose()


def _projects(db) -> list[HumanProject]:
    with db.session() as s:
        return list(s.scalars(select(HumanProject).order_by(HumanProject.id)))


def test_a_tie_is_exported_as_disputed_and_c0_no_takes_the_code_out(sdb, settings, ls_server, reviewers, tmp_path):
    """Issue 17, items 1 and 2, end to end: queue, annotate, pull, compute, export."""
    from review.compute import run_compute
    from review.export import run_export

    ids = seed_papers(sdb, 2, sha=SHA1)  # automated P4: ROUGE-1.5.5 (and an unknown package)
    gone, alive = seed_code(sdb, [ids[1]])
    name = title()
    papers = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=2)
    code = run_queue(sdb, settings, "code", project=name + " code", client=ls_server.client())
    tasks = task_ids(sdb)
    r1, r2, _ = reviewers
    r1.client.create_annotation(tasks[ids[0]], [choices("P0", "yes"), choices("P4", "PT/rouge")])
    r2.client.create_annotation(tasks[ids[0]], [choices("P0", "yes"), choices("P4", "MS/rouge")])
    remote = {t.ref: t for t in ls_server.client().all_tasks(code.project_id)}
    r1.client.create_annotation(remote[f"codebase:{alive}"].id, [choices("C0", "no")])
    run_pull(sdb, settings, client=ls_server.client())
    with sdb.session() as s:
        res = s.scalar(select(HumanResolution).where(HumanResolution.item_id == ids[0],
                                                     HumanResolution.question == "P4"))
        assert (res.status, res.needs_adjudication) == ("tie", True)
    assert {q for _, q in _resolutions(sdb)} >= {"P4", "C0"}  # the offline check below covers both kinds
    _same_offline(sdb, settings, ls_server, [papers.project_id, code.project_id], tmp_path,
                  lambda other: seed_code(other, [seed_papers(other, 2, sha=SHA1)[1]]))
    run_compute(sdb, settings)
    out = run_export(sdb, settings, out_dir=tmp_path / "out")
    with (out.out_dir / "dataset.csv").open() as fh:
        rows = {r["paper_ident"]: r for r in csv.DictReader(fh)}
    tied, coded = rows["2020.test-0"], rows["2020.test-1"]
    assert json.loads(tied["paper_packages"]) == ["ROUGE-1.5.5", "weird/unknown"] and tied["r2"] == "false"
    assert json.loads(tied["label_sources"])["P4"] == "disputed" and tied["label_source"] == "disputed"
    assert "<td>2020.test-0</td><td>P4</td>" in (out.out_dir / "report.html").read_text()
    # the codebase a reviewer rejected is out; the other one (repository deleted, C0 predicted no) stays
    # automated, as nobody reviewed it
    assert json.loads(coded["code_urls"]) == [f"https://github.com/o/r{ids[1]}-0"]
    assert json.loads(coded["label_sources"])["C0"] == "mixed"


def test_p1_agreement_has_two_meanings_and_no_tie_on_spelling(sdb, settings, ls_server, reviewers, tmp_path):
    ids = seed_papers(sdb, 1, sha=SHA1)
    name = title()
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=2)
    tasks = task_ids(sdb)
    r1, r2, _ = reviewers
    r1.client.create_annotation(tasks[ids[0]], [choices("P0", "yes"), text("P1", "-n 2 -m")])
    r2.client.create_annotation(tasks[ids[0]], [choices("P0", "yes"), text("P1", "ROUGE-1.5.5.pl -m  -n 2\n-c 95")])
    res = run_pull(sdb, settings, project=name, client=ls_server.client())
    with sdb.session() as s:
        p1 = s.scalar(select(HumanResolution).where(HumanResolution.question == "P1"))
    assert (p1.status, p1.answer, p1.needs_adjudication) == ("agreed", ["-c 95", "-n 2 -m"], False)
    agree = {r["question"]: r for r in res.agreement}
    assert agree["P1"]["observed_agreement"] == 1.0 and agree["P1 strings"]["observed_agreement"] == 0.0
    assert res.resolutions.get("tie", 0) == 0
    _same_offline(sdb, settings, ls_server, [q.project_id], tmp_path, lambda other: seed_papers(other, 1, sha=SHA1))


def test_cant_tell_and_hidden_questions(sdb, settings, ls_server, reviewers, tmp_path):
    """Issue 17, item 9: a paper predicted P0 = no gets nothing else pre-filled; "can't tell" is
    missing for agreement and queues the question for adjudication."""
    ids = seed_papers(sdb, 2, sha=SHA1, computes=lambda i: i == 0)
    name = title()
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=2)
    remote = {t.ref: t for t in ls_server.client().all_tasks(q.project_id)}
    assert [r["from_name"] for r in remote[f"paper:{ids[1]}"].predictions[0]["result"]] == ["P0"]
    assert "can't tell" in ls_server.client().get_project(q.project_id)["label_config"]
    tasks = task_ids(sdb)
    r1, r2, _ = reviewers
    r1.client.create_annotation(tasks[ids[1]], [choices("P0", "can't tell")])
    r2.client.create_annotation(tasks[ids[1]], [choices("P0", "no"), choices("P4", "MS/rouge")])  # P4 hidden
    res = run_pull(sdb, settings, project=name, client=ls_server.client())
    with sdb.session() as s:
        rows = {r.question: r for r in s.scalars(select(HumanResolution).where(HumanResolution.item_id == ids[1]))}
        assert s.scalar(select(func.count()).select_from(HumanDecision)
                        .where(HumanDecision.question == "P4")) == 0
    assert set(rows) == {"P0"} and (rows["P0"].status, rows["P0"].needs_adjudication) == ("unsure", True)
    assert res.to_adjudicate == 1
    (p0,) = [r for r in res.agreement if r["question"] == "P0"]
    assert (p0["units"], p0["items"], p0["cant_tell"]) == (0, 1, 1)
    _same_offline(sdb, settings, ls_server, [q.project_id], tmp_path,
                  lambda other: seed_papers(other, 2, sha=SHA1, computes=lambda i: i == 0))
    adj = run_queue(sdb, settings, "papers", project=name + " adj", select_="disputed", client=ls_server.client())
    (task,) = list(ls_server.client().all_tasks(adj.project_id))
    assert task.ref == f"paper:{ids[1]}" and "can't tell" in task.data["dispute"]
    assert task.predictions[0]["result"] == []


def test_a_plain_rerun_keeps_the_reviewers_per_task(sdb, settings, ls_server):
    """Issue 17, item 5: overlap changes only when asked (queue and, through it, survey)."""
    seed_papers(sdb, 2, sha=SHA1)
    name = title()
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=2)
    assert settings.label_studio.overlap != 2
    again = run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    assert again.overlap == 2 and ls_server.client().get_project(q.project_id)["maximum_annotations"] == 2
    asked = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=3)
    assert asked.overlap == 3 and ls_server.client().get_project(q.project_id)["maximum_annotations"] == 3
    dry = run_queue(sdb, settings, "papers", project=name, client=ls_server.client(), overlap=1, dry_run=True)
    assert dry.unchanged == 2 and ls_server.client().get_project(q.project_id)["maximum_annotations"] == 3


def test_the_same_server_under_another_spelling_is_the_same_origin(sdb, settings, ls_server, reviewers):
    """Issue 17, item 6: localhost vs 127.0.0.1, a trailing slash, upper case: one server."""
    ids = seed_papers(sdb, 2, sha=SHA1)
    name = title()
    port = ls_server.url.rsplit(":", 1)[1]
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    tasks = task_ids(sdb)
    made = reviewers[0].client.create_annotation(tasks[ids[0]], [choices("P0", "yes")])
    other = LabelStudioClient(f"http://LOCALHOST:{port}/", ls_server.token)
    res = run_pull(sdb, settings, client=other)
    assert res.projects >= 1 and res.new == 2  # P0 and the empty P1
    again = run_queue(sdb, settings, "papers", project=name, client=other)
    assert (again.imported, again.unchanged, again.origin) == (0, 2, q.origin)
    with sdb.session() as s:
        assert s.scalar(select(func.count()).select_from(HumanProject)) == 1
    reviewers[0].client.delete_annotation(made)
    run_pull(sdb, settings, client=ls_server.client())
    with sdb.session() as s:
        assert all(d.deleted for d in s.scalars(select(HumanDecision)))
        hp = s.scalar(select(HumanProject))
        assert hp.server_id and hp.server_id.startswith("organization ") and hp.remote_created


def test_an_old_duplicate_origin_is_retired(sdb, settings, ls_server, reviewers):
    """A database written by the release that told spellings apart: the second origin's copies
    are withdrawn, so an annotation deleted in Label Studio no longer stays live through them."""
    ids = seed_papers(sdb, 1, sha=SHA1)
    name = title()
    port = ls_server.url.rsplit(":", 1)[1]
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    made = reviewers[0].client.create_annotation(task_ids(sdb)[ids[0]], [choices("P0", "yes")])
    run_pull(sdb, settings, client=ls_server.client())
    dup = f"label_studio:http://127.0.0.1:{port}/#{q.project_id}"  # as typed, not normalized
    assert dup != q.origin
    with sdb.session() as s:
        s.add(HumanProject(origin=dup, url=f"http://127.0.0.1:{port}/", project_id=q.project_id, title=name,
                           kind="papers"))
        for d in s.scalars(select(HumanDecision)).all():
            s.add(HumanDecision(paper_id=d.paper_id, question=d.question, answer=d.answer, annotator=d.annotator,
                                annotated_at=d.annotated_at, origin=dup, annotation_ref=d.annotation_ref))
    reviewers[0].client.delete_annotation(made)
    res = run_pull(sdb, settings, client=ls_server.client())
    assert res.projects == 1
    with sdb.session() as s:
        assert all(d.deleted for d in s.scalars(select(HumanDecision)))
        retired = s.scalar(select(HumanProject).where(HumanProject.origin == dup))
        assert retired.gone_at is not None and "same Label Studio project" in retired.gone_reason
        assert s.scalar(select(func.count()).select_from(HumanResolution)) == 0


def test_a_deleted_project_is_marked_gone_and_the_others_go_on(sdb, settings, ls_server, reviewers):
    """Issue 17, item 7: the pull that finds it fails (exit 7) after pulling the rest; later
    pulls skip it and succeed; its decisions stay."""
    ids = seed_papers(sdb, 2, sha=SHA1)
    keep, drop = title(), title()
    kept = run_queue(sdb, settings, "papers", project=keep, client=ls_server.client())
    with sdb.session() as s:
        first = {t.item_id: t.task_id for t in s.scalars(select(HumanTask))}
    dropped = run_queue(sdb, settings, "code", project=drop, client=ls_server.client())  # no codebases: empty
    reviewers[0].client.create_annotation(first[ids[0]], [choices("P0", "no")])
    run_pull(sdb, settings, client=ls_server.client())
    reviewers[0].client.create_annotation(first[ids[1]], [choices("P0", "no")])
    ls_server.client().delete_project(dropped.project_id)
    with pytest.raises(PullIncomplete, match="deleted in Label Studio") as exc:
        run_pull(sdb, settings, client=ls_server.client())
    assert exc.value.exit_code == 7 and exc.value.result.new == 1 and exc.value.result.projects >= 1
    with sdb.session() as s:
        runs = s.scalars(select(Run).where(Run.command == "pull").order_by(Run.id)).all()
        assert [r.status for r in runs][-2:] == ["ok", "failed"]
        gone = s.scalar(select(HumanProject).where(HumanProject.project_id == dropped.project_id))
        assert gone.gone_at is not None and gone.gone_reason == "deleted in Label Studio"
        assert s.scalar(select(func.count()).select_from(HumanDecision).where(HumanDecision.deleted.is_(True))) == 0
    later = run_pull(sdb, settings, client=ls_server.client())
    assert later.failed_projects == [] and len(later.gone_projects) == 1 and later.unchanged == 2
    with sdb.session() as s:
        assert s.scalar(select(Run.status).where(Run.command == "pull").order_by(Run.id.desc()).limit(1)) == "ok"
    assert kept.project_id != dropped.project_id


def test_pull_interrupted_and_resumed_loses_and_duplicates_nothing(sdb, settings, ls_server, reviewers):
    ids = seed_papers(sdb, 6, sha=SHA1)
    name = title()
    q = run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    tasks = task_ids(sdb)
    for pid in ids:
        reviewers[0].client.create_annotation(tasks[pid], [choices("P0", "yes"), choices("P4", "ROUGE-1.5.5")])

    def stop(page: int) -> None:
        if page == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_pull(sdb, settings, project=name, client=ls_server.client(), page_size=2, on_page=stop)
    with sdb.session() as s:
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 6  # page 1 kept: 2 tasks x P0, P1, P4
        assert s.scalar(select(func.count()).select_from(HumanDecision).where(HumanDecision.deleted.is_(True))) == 0
        assert s.scalar(select(Run.status).where(Run.command == "pull")) == "interrupted"
    res = run_pull(sdb, settings, project=name, client=ls_server.client(), page_size=2)
    assert (res.new, res.unchanged, res.deleted, res.tasks) == (12, 6, 0, 6)
    with sdb.session() as s:
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 18
        assert s.scalar(select(func.count(func.distinct(HumanDecision.paper_id)))) == 6
    assert q.imported == 6


def test_automated_stages_never_change_human_decisions(sdb, settings, ls_server, reviewers):
    ids = seed_papers(sdb, 3, sha=SHA1)
    name = title()
    run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    tasks = task_ids(sdb)
    for pid in ids:
        reviewers[1].client.create_annotation(tasks[pid], [choices("P0", "no")])
    run_pull(sdb, settings, project=name, client=ls_server.client())
    snapshot = decisions(sdb)
    assert len(snapshot) == 3
    relabel(sdb, ids, SHA2)  # what `review label` writes after a rule change
    res = run_queue(sdb, settings, "papers", project=name, client=ls_server.client())
    assert res.updated == 3
    assert decisions(sdb) == snapshot
    remote = list(ls_server.client().all_tasks(res.project_id))
    assert all(len(t.annotations) == 1 for t in remote)  # annotations survive a prediction update


def test_unreachable_server_wrong_key_and_deleted_project_are_clear_errors(sdb, settings, ls_server, reviewers,
                                                                           caplog, monkeypatch):
    ids = seed_papers(sdb, 2, sha=SHA1)
    down = LabelStudioClient(f"http://127.0.0.1:{_free_port()}", "whatever")
    with pytest.raises(ServiceError, match="cannot reach Label Studio") as exc:
        run_queue(sdb, settings, "papers", project=title(), client=down)
    assert exc.value.exit_code == 7
    secret = "f" * 40
    with pytest.raises(ServiceError, match="refused the API key") as exc:
        run_queue(sdb, settings, "papers", project=title(), client=LabelStudioClient(ls_server.url, secret))
    assert secret not in str(exc.value) and "LABEL_STUDIO_API_KEY" in (exc.value.hint or "")
    # the key from the environment, never stored
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server.token)
    name = title()
    q = run_queue(sdb, settings, "papers", project=name)
    tasks = task_ids(sdb)
    reviewers[0].client.create_annotation(tasks[ids[0]], [choices("P0", "yes")])
    run_pull(sdb, settings, project=name)
    ls_server.client().delete_project(q.project_id)
    with pytest.raises(ServiceError, match="deleted in Label Studio"):
        run_pull(sdb, settings, project=name)
    rows = decisions(sdb)
    assert len(rows) == 2 and not any(r[-1] for r in rows)  # P0 and the empty P1: nothing lost or deleted
    with sdb.engine.connect() as conn:
        for table in ("runs", "human_decisions", "human_projects", "human_tasks", "human_resolutions"):
            dump = json.dumps([list(map(str, r)) for r in conn.execute(sql(f"SELECT * FROM {table}"))])
            assert ls_server.token not in dump and secret not in dump
    assert ls_server.token not in caplog.text
    for f in settings.exports_dir.glob("*"):
        assert ls_server.token not in f.read_text()


def test_offline_round_trip_through_a_label_studio_export(sdb, settings, ls_server, reviewers, tmp_path, cli):
    ids = seed_papers(sdb, 3, sha=SHA1)
    out = tmp_path / "tasks.json"
    res = run_queue(sdb, settings, "papers", offline=out)
    assert res.selected == 3 and res.offline_file == str(out)
    exported = json.loads(out.read_text())
    assert all(t["predictions"][0]["model_version"] == SHA1 for t in exported)
    # the team imports the file in their own Label Studio, reviews, and exports JSON
    admin = ls_server.client()
    pid = admin.create_project(title(), open_config(), 1)
    task_ids_ = admin.import_tasks(pid, exported)
    for tid in task_ids_:
        reviewers[2].client.create_annotation(tid, [choices("P0", "yes"), choices("P3", "stemming", "bootstrapping")])
    r = requests.get(f"{ls_server.url}/api/projects/{pid}/export", params={"exportType": "JSON"},
                     headers={"Authorization": f"Token {ls_server.token}"}, timeout=60)
    export = tmp_path / "export.json"
    export.write_bytes(r.content)
    got = import_annotations(sdb, settings, export, origin="team-b")
    assert (got.new, got.tasks) == (9, 3)  # P0, P3 and the empty P1 ("none") per task
    again = import_annotations(sdb, settings, export, origin="team-b")
    assert (again.new, again.unchanged) == (0, 9)
    with sdb.session() as s:
        rows = s.scalars(select(HumanDecision).where(HumanDecision.question == "P3")).all()
        assert {r.paper_id for r in rows} == set(ids) and all(r.answer == ["bootstrapping", "stemming"] for r in rows)
        assert all(r.origin == "file:team-b" for r in rows)


def open_config() -> str:
    from review.labelstudio.tasks import label_config

    return label_config("papers").xml


def test_code_review_queue_and_pull(sdb, settings, ls_server, reviewers):
    from review.db.models import Codebase, CodeFinding

    ids = seed_papers(sdb, 2, sha=SHA1)
    with sdb.session() as s:
        cbs = []  # codebase 0 exists with a package and an anti-feature; codebase 1's repository is gone
        for n, pid in enumerate(ids):
            cb = Codebase(paper_id=pid, url=f"https://github.com/o/r{n}", host="github.com", owner="o", name=f"r{n}",
                          lookup_status="deleted" if n else "exists", code_metric_prelim=True, scan_outcome="ok",
                          scan_commit="abc123", packages=["GL/rougescore"] if n == 0 else [],
                          anti_features=["several packages"] if n == 0 else [],
                          eval_reproducible=False if n == 0 else None)  # the scan's C2: the proposal
            s.add(cb)
            s.flush()
            s.add(CodeFinding(codebase_id=cb.id, kind="package", source="import", label="GL/rougescore",
                              file="eval.py", line=3, text="from rouge_score import rouge_scorer",
                              rules_sha256="c" * 64))
            cbs.append(cb.id)
        s.add(Codebase(paper_id=ids[0], url="https://github.com/o/excluded", code_metric_prelim=False))
    name = title()
    q = run_queue(sdb, settings, "code", project=name, client=ls_server.client())
    assert q.imported == 2
    remote = {t.ref: t for t in ls_server.client().all_tasks(q.project_id)}
    t0 = remote[f"codebase:{cbs[0]}"]
    assert "eval.py:3" in t0.data["evidence"] and "https://github.com/o/r0" in t0.data["links"]
    (pred,) = t0.predictions
    assert pred["model_version"] == "c" * 64
    assert {r["from_name"]: r["value"]["choices"] for r in pred["result"]} == {
        "C0": ["yes"], "C1": ["GL/rougescore"], "C2": ["no"]}
    assert [(r["from_name"], r["value"]["choices"]) for r in remote[f"codebase:{cbs[1]}"].predictions[0]["result"]
            ] == [("C0", ["no"])]  # C1 and C2 show only after C0 = yes: not pre-filled
    reviewers[0].client.create_annotation(t0.id, [choices("C0", "yes"), choices("C1", "GL/rougescore"),
                                                  choices("C2", "no"), text("note", "two scorers")])
    res = run_pull(sdb, settings, project=name, client=ls_server.client())
    assert res.new == 4
    with sdb.session() as s:
        rows = s.scalars(select(HumanDecision)).all()
        assert {r.codebase_id for r in rows} == {cbs[0]} and all(r.paper_id is None for r in rows)
        assert {r.question: r.answer for r in rows} == {"C0": "yes", "C1": ["GL/rougescore"], "C2": "no",
                                                        "note": "two scorers"}


@pytest.mark.slow
def test_the_issue_on_the_sample_survey(settings, ls_server, reviewers, tmp_path):
    """Issue 17 as found: the sample survey, queued with two reviewers per paper task. A 1-1 tie on
    P4 of 2020.sample-1.4 (automated: MS/rouge; the newest answer: ROUGE-1.5.5) and a reviewer's
    C0 = no on the codebase of 2020.sample-1.5. Without review, its exports are the survey's own."""
    from review.compute import run_compute
    from review.db.models import Codebase, Paper
    from review.export import run_export
    from review.survey import run_sample_survey

    survey = run_sample_survey(settings)
    db = Database(survey.database)
    try:
        name = title()
        run_queue(db, settings, "papers", project=name, client=ls_server.client(), overlap=2)
        code = run_queue(db, settings, "code", project=name + " code", client=ls_server.client())
        unreviewed = run_export(db, settings, out_dir=tmp_path / "unreviewed")
        exported = sorted(f.relative_to(unreviewed.out_dir) for f in unreviewed.out_dir.rglob("*") if f.is_file())
        assert len(exported) >= 15
        for name in exported:  # every file, byte for byte: the dataset, statistics, figures, report, manifest
            assert (unreviewed.out_dir / name).read_bytes() == (survey.out_dir / name).read_bytes(), name
        with db.session() as s:
            tied = s.scalar(select(Paper.id).where(Paper.ident == "2020.sample-1.4"))
            coded = s.scalar(select(Paper.id).where(Paper.ident == "2020.sample-1.5"))
            (codebase,) = s.scalars(select(Codebase.id).where(Codebase.paper_id == coded)).all()
        tasks = task_ids(db)
        r1, r2, _ = reviewers
        r1.client.create_annotation(tasks[tied], [choices("P0", "yes"), choices("P4", "MS/rouge")])
        r2.client.create_annotation(tasks[tied], [choices("P0", "yes"), choices("P4", "ROUGE-1.5.5")])
        remote = {t.ref: t.id for t in ls_server.client().all_tasks(code.project_id)}
        r1.client.create_annotation(remote[f"codebase:{codebase}"], [choices("C0", "no")])
        pulled = run_pull(db, settings, client=ls_server.client())
        assert pulled.resolutions.get("tie") == 1
        run_compute(db, settings)
        out = run_export(db, settings, out_dir=tmp_path / "reviewed")
        with (out.out_dir / "dataset.csv").open() as fh:
            rows = {r["paper_ident"]: r for r in csv.DictReader(fh)}
        p4 = rows["2020.sample-1.4"]
        assert json.loads(p4["paper_packages"]) == ["MS/rouge"] and p4["r2"] == "true"
        assert json.loads(p4["label_sources"])["P4"] == "disputed" and p4["label_source"] == "disputed"
        c0 = rows["2020.sample-1.5"]
        assert (c0["has_code"], c0["code_rouge"], c0["r3"], c0["code_urls"]) == ("false", "", "false", "[]")
        assert json.loads(c0["label_sources"])["C0"] == "human" and "C2" not in json.loads(c0["label_sources"])
        assert "<td>2020.sample-1.4</td><td>P4</td>" in (out.out_dir / "report.html").read_text()
    finally:
        db.dispose()
