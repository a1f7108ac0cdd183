"""Every queued stage's summary says what other workers still hold, and until when (issue 16.1).

A worker on another machine cannot be checked from here, so its claims wait for their
lease: the run leaves them alone, finishes the rest, and its summary (and the run record)
names how many items are held, by how many workers, until when. Extract has its own test
(tests/test_extract_stage.py); these are download, code github and code scan.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select, update

from code_support import make_repo
from github_fake import FakeGitHub
from review.claims import enqueue
from review.codebases.github import run_github
from review.codebases.runner import run_scan
from review.db.models import Codebase, Run, WorkItem
from review.download import run_download
from review.localserver import Reply
from review.runs import record_run
from review.settings import HttpSettings, Settings
from tests.download_support import add_paper, make_pdf

ELSEWHERE = "gpu-node-7:4242@99:abc123"  # a worker on another machine: only its lease frees its items


def _held_elsewhere(db, stage: str, item_ids: list[int]) -> datetime:
    lease = datetime.now(timezone.utc) + timedelta(minutes=30)
    with db.session() as s:
        enqueue(s, stage, item_ids)
        s.execute(update(WorkItem).where(WorkItem.stage == stage, WorkItem.item_id.in_(item_ids))
                  .values(state="claimed", worker=ELSEWHERE, lease_until=lease))
    return lease


def _note(lease: datetime) -> str:
    return f"2 still held by 1 other worker, until {lease:%Y-%m-%d %H:%M} UTC at the latest"


def _states(db, stage: str) -> dict[int, str]:
    with db.session() as s:
        return dict(s.execute(select(WorkItem.item_id, WorkItem.state).where(WorkItem.stage == stage)).all())


def test_download_summary_names_items_held_elsewhere(db, tmp_path, local_server):
    data = make_pdf(3)
    local_server.route("/p.pdf", Reply(200, data, {"Content-Type": "application/pdf"}))
    ids = [add_paper(db, f"H{i}", f"{local_server.url}/p.pdf") for i in range(3)]
    lease = _held_elsewhere(db, "download", ids[:2])
    settings = Settings(data_dir=tmp_path / "data", http=HttpSettings(per_host_rate=0, retries=0))
    with record_run(db, "download") as run:
        report = run_download(db, settings, run=run)
    assert report.counts == {"ok": 1} and (report.held.items, report.held.workers) == (2, 1)
    assert _note(lease) in report.summary
    assert _states(db, "download") == {ids[0]: "claimed", ids[1]: "claimed", ids[2]: "done"}
    with db.session() as s:
        assert _note(lease) in s.get(Run, run.id).summary


def _codebases(db, n: int) -> list[int]:
    from code_support import add_paper as add_code_paper

    pid = add_code_paper(db, "P20-2000", "A paper with code")
    with db.session() as s:
        rows = [Codebase(paper_id=pid, url=f"https://github.com/o/r{i}", host="github.com", owner="o", name=f"r{i}")
                for i in range(n)]
        s.add_all(rows)
        s.flush()
        return [r.id for r in rows]


def test_code_github_summary_names_items_held_elsewhere(db, tmp_path, local_server):
    gh = FakeGitHub(local_server)
    ids = _codebases(db, 3)
    for i in range(3):
        gh.add_repo(f"o/r{i}")
    lease = _held_elsewhere(db, "github", ids[:2])
    result = run_github(db, Settings(data_dir=tmp_path / "data", code={"github_api_url": local_server.url}))
    assert result.counts["exists"] == 1 and (result.held.items, result.held.workers) == (2, 1)
    assert _note(lease) in result.summary()
    assert _states(db, "github")[ids[2]] == "done"


def test_code_scan_summary_names_items_held_elsewhere(db, tmp_path):
    remote = tmp_path / "remote"
    for i in range(3):
        make_repo(remote / "o" / f"r{i}.git", {"eval.py": "from rouge_score import rouge_scorer\n"})
    ids = _codebases(db, 3)
    lease = _held_elsewhere(db, "scan", ids[:2])
    result = run_scan(db, Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"}))
    assert result.counts == {"ok": 1} and (result.held.items, result.held.workers) == (2, 1)
    assert _note(lease) in result.summary()
    assert _states(db, "scan")[ids[2]] == "done"
