"""The human pass against a real Label Studio: queue, annotate as reviewers, pull, agree.

Reviewers are real accounts (signed up through the web form) acting with their own API
tokens, so annotations carry their identity exactly as in production.
"""

from __future__ import annotations

import json
import uuid

import pytest
import requests
from sqlalchemy import func, select, text as sql

from review.db import migrate
from review.db.models import HumanDecision, HumanResolution, HumanTask, Run
from review.db.session import Database
from review.errors import ServiceError
from review.labelstudio import run_pull, run_queue
from review.labelstudio.client import LabelStudioClient
from review.labelstudio.offline import import_annotations
from review.settings import Settings
from tests.labelstudio_support import (choices, ls_server, relabel, reviewers, seed_papers,  # noqa: F401
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


def task_ids(db, project_ref_title: str | None = None) -> dict[int, int]:
    """paper id -> Label Studio task id, from the queue's mapping."""
    with db.session() as s:
        return {t.item_id: t.task_id for t in s.scalars(select(HumanTask))}


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
    a, b, c, d = ids
    p0 = {("r1", a): "yes", ("r2", a): "yes", ("r3", a): "yes",
          ("r1", b): "yes", ("r2", b): "yes", ("r3", b): "no",
          ("r1", c): "no", ("r2", c): "no", ("r3", c): "no",
          ("r1", d): "yes", ("r2", d): "no"}
    p2 = {("r1", a): ["recall"], ("r2", a): ["recall"],
          ("r1", b): ["recall", "f-score"], ("r2", b): ["f-score", "recall"],
          ("r1", c): ["NONE"], ("r2", c): ["recall"],
          ("r1", d): ["f-score"], ("r2", d): ["f-score"]}
    made = {}
    for (who, pid), answer in p0.items():
        result = [choices("P0", answer)]
        if (who, pid) in p2:
            result.append(choices("P2", *p2[(who, pid)]))
        if (who, pid) == ("r1", a):
            result += [text("P1", "-n 2 -m\n-c 95", "  -n 2   -m "), text("note", "checked section 4")]
        made[(who, pid)] = client_of[who].create_annotation(tasks[pid], result)
    return made


def test_pull_resolves_by_majority_marks_ties_and_measures_agreement(db, settings, ls_server, reviewers):
    """P0 by three reviewers on four papers: agreed, majority, agreed, tie (two reviewers).
    Hand-computed nominal alpha: n=11 pairable values (6 yes, 5 no), o(yes,no)=1+1=2,
    Do=4/11, De=2*6*5/(11*10)=6/11, alpha=1-4/6=1/3. P2 by two reviewers: pairs (R,R),
    (RF,RF), (N,R), (F,F): po=3/4, pe=(1*2+1*1+1*0+1*1)/16=1/4, kappa=(3/4-1/4)/(3/4)=2/3;
    alpha: n=8 (R3, RF2, N1, F2), Do=2/8, De=(64-18)/56=46/56, alpha=1-14/46=16/23."""
    ids = seed_papers(db, 4, sha=SHA1)
    name = title()
    q = run_queue(db, settings, "papers", project=name, client=ls_server.client(), overlap=3)
    tasks = task_ids(db)
    r1, r2, r3 = reviewers
    who = {"r1": r1.client, "r2": r2.client, "r3": r3.client}
    made = _annotate_matrix(who, tasks, ids)
    before = {t.ref: len(t.annotations) for t in ls_server.client().all_tasks(q.project_id)}
    assert sorted(before.values()) == [2, 3, 3, 3]

    res = run_pull(db, settings, project=name, client=ls_server.client())
    assert res.new == 11 + 8 + 2 and res.updated == 0 and res.deleted == 0 and res.tasks == 4
    a, b, c, d = ids
    with db.session() as s:
        rows = {(r.item_id, r.question): r for r in s.scalars(select(HumanResolution))}
        one = s.scalar(select(HumanDecision).where(HumanDecision.annotation_ref == str(made[("r1", a)]),
                                                   HumanDecision.question == "P1"))
        assert one.answer == ["-n 2 -m", "-c 95"] and one.annotator == r1.email and one.paper_id == a
        assert one.origin == f"label_studio:{ls_server.url}#{q.project_id}" and one.task_ref == str(tasks[a])
        note = s.scalar(select(HumanDecision).where(HumanDecision.question == "note"))
        assert note.answer == "checked section 4"
    assert {k: (rows[(k, "P0")].status, rows[(k, "P0")].answer) for k in ids} == {
        a: ("agreed", "yes"), b: ("majority", "yes"), c: ("agreed", "no"), d: ("tie", None)}
    assert rows[(d, "P0")].needs_adjudication and rows[(c, "P2")].status == "tie"
    assert rows[(b, "P2")].status == "agreed" and rows[(b, "P2")].answer == ["f-score", "recall"]
    agree = {r["question"]: r for r in res.agreement}
    assert agree["P0"]["alpha"] == pytest.approx(1 / 3) and agree["P0"]["kappa"] is None
    assert agree["P2"]["kappa"] == pytest.approx(2 / 3) and agree["P2"]["alpha"] == pytest.approx(16 / 23)
    assert agree["P0"]["units"] == 4 and agree["P0"]["annotators"] == 3
    exported = json.loads((settings.exports_dir / "human_agreement.json").read_text())
    assert {r["question"] for r in exported["agreement"]} >= {"P0", "P2"}

    # a rerun changes nothing
    again = run_pull(db, settings, project=name, client=ls_server.client())
    assert (again.new, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 21)

    # reviewer 3 changes their mind on B; reviewer 2 deletes their annotation of D
    r3.client.update_annotation(made[("r3", b)], [choices("P0", "yes")])
    r2.client.delete_annotation(made[("r2", d)])
    res = run_pull(db, settings, project=name, client=ls_server.client())
    assert res.updated == 1 and res.deleted == 2  # r2's P0 and P2 on D
    with db.session() as s:
        rows = {(r.item_id, r.question): r for r in s.scalars(select(HumanResolution))}
        gone = s.scalars(select(HumanDecision).where(HumanDecision.annotation_ref == str(made[("r2", d)]))).all()
        assert len(gone) == 2 and all(g.deleted for g in gone)  # kept for the audit trail, marked deleted
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 21
    assert (rows[(b, "P0")].status, rows[(d, "P0")].status, rows[(d, "P0")].answer) == ("agreed", "single", "yes")
    assert not rows[(d, "P0")].needs_adjudication

    # the remaining tie (P2 on C) goes to an adjudication project; the adjudicator's answer wins
    adj = run_queue(db, settings, "papers", project=name + " adj", select_="disputed", client=ls_server.client())
    assert adj.imported == 1 and adj.overlap == 1
    remote = list(ls_server.client().all_tasks(adj.project_id))
    assert [t.ref for t in remote] == [f"paper:{c}"]
    r3.client.create_annotation(remote[0].id, [choices("P0", "yes"), choices("P2", "recall")])
    run_pull(db, settings, client=ls_server.client())
    with db.session() as s:
        res_c = s.scalar(select(HumanResolution).where(HumanResolution.item_id == c, HumanResolution.question == "P2"))
        assert (res_c.status, res_c.answer, res_c.needs_adjudication) == ("adjudicated", ["recall"], False)


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
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 4  # page 1 kept: 2 tasks x 2 questions
        assert s.scalar(select(func.count()).select_from(HumanDecision).where(HumanDecision.deleted.is_(True))) == 0
        assert s.scalar(select(Run.status).where(Run.command == "pull")) == "interrupted"
    res = run_pull(sdb, settings, project=name, client=ls_server.client(), page_size=2)
    assert (res.new, res.unchanged, res.deleted, res.tasks) == (8, 4, 0, 6)
    with sdb.session() as s:
        assert s.scalar(select(func.count()).select_from(HumanDecision)) == 12
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
    with pytest.raises(ServiceError, match="not found; was it deleted"):
        run_pull(sdb, settings, project=name)
    rows = decisions(sdb)
    assert len(rows) == 1 and rows[0][-1] is False  # nothing lost, nothing marked deleted
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
    assert (got.new, got.tasks) == (6, 3)
    again = import_annotations(sdb, settings, export, origin="team-b")
    assert (again.new, again.unchanged) == (0, 6)
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
        cbs = []
        for n, pid in enumerate(ids):
            cb = Codebase(paper_id=pid, url=f"https://github.com/o/r{n}", host="github.com", owner="o", name=f"r{n}",
                          lookup_status="deleted" if n else "exists", code_rouge_prelim=True, scan_outcome="ok",
                          scan_commit="abc123", packages=["GL/rougescore"] if n == 0 else [],
                          anti_features=["several packages"] if n == 0 else [],
                          eval_reproducible=False if n == 0 else None)  # the scan's C2: the proposal
            s.add(cb)
            s.flush()
            s.add(CodeFinding(codebase_id=cb.id, kind="package", source="import", label="GL/rougescore",
                              file="eval.py", line=3, text="from rouge_score import rouge_scorer",
                              rules_sha256="c" * 64))
            cbs.append(cb.id)
        s.add(Codebase(paper_id=ids[0], url="https://github.com/o/excluded", code_rouge_prelim=False))
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
    assert [r["value"]["choices"] for r in remote[f"codebase:{cbs[1]}"].predictions[0]["result"]
            if r["from_name"] == "C0"] == [["no"]]
    reviewers[0].client.create_annotation(t0.id, [choices("C0", "yes"), choices("C1", "GL/rougescore"),
                                                  choices("C2", "no"), text("note", "two scorers")])
    res = run_pull(sdb, settings, project=name, client=ls_server.client())
    assert res.new == 4
    with sdb.session() as s:
        rows = s.scalars(select(HumanDecision)).all()
        assert {r.codebase_id for r in rows} == {cbs[0]} and all(r.paper_id is None for r in rows)
        assert {r.question: r.answer for r in rows} == {"C0": "yes", "C1": ["GL/rougescore"], "C2": "no",
                                                        "note": "two scorers"}
