"""SIGKILL a real `review code scan` / `review code github` mid-run, then rerun at once.

The rerun must take the killed worker's claimed codebases straight away (not after the
30-minute lease), finish every codebase exactly once, and the killed run must end up
`interrupted` in the run records.
"""

from __future__ import annotations

import signal
import sys
import time
from collections import Counter

import pytest
from sqlalchemy import select

from code_support import add_paper, make_repo
from github_fake import FakeGitHub
from review.codebases.github import run_github
from review.codebases.runner import run_scan
from review.db.models import Codebase, CodeFinding, Run, WorkItem
from review.settings import Settings
from tests.procs import children, children_die_with, clean_env, start_review, wait_gone

N = 10
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds helper processes in /proc")


def _states(db, stage: str) -> dict[int, str]:
    with db.session() as s:
        return dict(s.execute(select(WorkItem.item_id, WorkItem.state).where(WorkItem.stage == stage)).all())


def _kill_mid_run(db, proc, stage: str) -> tuple[set[int], set[int]]:
    """SIGKILL once some items are done and others claimed; (done, claimed) at that moment."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        states = _states(db, stage)
        if "done" in states.values() and "claimed" in states.values():
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"`review code {stage}` never got under way")
    helpers = children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert wait_gone(helpers, 30) == [], "a helper process of the killed run is still running"
    states = _states(db, stage)
    done = {i for i, st in states.items() if st == "done"}
    claimed = {i for i, st in states.items() if st == "claimed"}
    assert done and claimed and len(done) < N
    return done, claimed


def _killed_run(db, command: str) -> Run:
    with db.session() as s:
        return s.scalars(select(Run).where(Run.command == command)).one()


@pytest.mark.slow
def test_sigkill_mid_code_scan_then_rerun(db, tmp_path):
    remote = tmp_path / "remote"
    pid = add_paper(db, "P20-1000", "A paper")
    with db.session() as s:
        for i in range(N):
            make_repo(remote / "o" / f"r{i}.git", {"eval.py": "from rouge_score import rouge_scorer\n"})
            s.add(Codebase(paper_id=pid, url=f"https://github.com/o/r{i}", host="github.com", owner="o", name=f"r{i}"))
    env = clean_env(REVIEW_DATABASE_URL=db.url.render_as_string(hide_password=False),
                    REVIEW_DATA_DIR=str(tmp_path / "data"), REVIEW_CODE__GIT_BASE_URL=f"file://{remote}")
    proc = start_review("--silent", "code", "scan", cwd=tmp_path, env=env)
    try:
        done, claimed = _kill_mid_run(db, proc, "scan")
    finally:
        if proc.poll() is None:
            proc.kill()
    killed = _killed_run(db, "code scan")
    assert killed.status == "running"

    settings = Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"})
    result = run_scan(db, settings)

    assert result.counts == {"ok": N - len(done)}, "every unfinished codebase, once"
    assert "held" not in result.summary() and not result.held.items
    assert set(_states(db, "scan").values()) == {"done"}
    with db.session() as s:
        runs_per_codebase = Counter(cid for cid, run_id in s.execute(
            select(CodeFinding.codebase_id, CodeFinding.run_id).distinct()))
        scanned_by = dict(s.execute(select(CodeFinding.codebase_id, CodeFinding.run_id).distinct()).all())
        assert all(cb.scan_outcome == "ok" for cb in s.scalars(select(Codebase)))
        assert s.get(Run, killed.id).status == "interrupted"
    assert set(runs_per_codebase.values()) == {1}, "each codebase's findings come from one scan"
    assert {cid for cid, run_id in scanned_by.items() if run_id == killed.id} == done


class _SlowGitHub(FakeGitHub):
    """GitHub answering a repository look-up in a quarter of a second, counting them."""

    def __init__(self, server):  # type: ignore[no-untyped-def]
        self.hits: Counter[str] = Counter()
        super().__init__(server)

    def _repo(self, req):  # type: ignore[no-untyped-def]
        self.hits[req.path.lower()] += 1
        time.sleep(0.25)
        return super()._repo(req)


@pytest.mark.slow
def test_sigkill_mid_code_github_then_rerun(db, tmp_path, local_server):
    gh = _SlowGitHub(local_server)
    pid = add_paper(db, "P20-1001", "A paper")
    with db.session() as s:
        for i in range(N):
            gh.add_repo(f"o/r{i}")
            s.add(Codebase(paper_id=pid, url=f"https://github.com/o/r{i}", host="github.com", owner="o", name=f"r{i}"))
    env = clean_env(REVIEW_DATABASE_URL=db.url.render_as_string(hide_password=False),
                    REVIEW_DATA_DIR=str(tmp_path / "data"), REVIEW_CODE__GITHUB_API_URL=local_server.url)
    env.pop("GITHUB_TOKEN", None)
    proc = start_review("--silent", "code", "github", cwd=tmp_path, env=env)
    try:
        done, claimed = _kill_mid_run(db, proc, "github")
    finally:
        if proc.poll() is None:
            proc.kill()
    killed = _killed_run(db, "code github")
    assert killed.status == "running"
    looked_up_before = dict(gh.hits)

    result = run_github(db, Settings(data_dir=tmp_path / "data", code={"github_api_url": local_server.url}))

    assert result.counts["exists"] == N - len(done), "every unfinished codebase, once"
    assert "held" not in result.summary() and not result.held.items
    assert set(_states(db, "github").values()) == {"done"}
    with db.session() as s:
        names = {cb.id: cb.name for cb in s.scalars(select(Codebase))}
        assert all(cb.lookup_status == "exists" for cb in s.scalars(select(Codebase)))
        assert s.get(Run, killed.id).status == "interrupted"
    for cid in done:  # finished before the kill: not asked again
        assert gh.hits[f"/repos/o/{names[cid]}"] == looked_up_before.get(f"/repos/o/{names[cid]}") == 1
    for cid in set(names) - done - claimed:  # never started by the killed run: asked once
        assert gh.hits[f"/repos/o/{names[cid]}"] == 1


def test_a_clone_in_progress_dies_with_a_killed_scan(tmp_path):
    """git clone runs in its own session (so a timeout can kill its whole group); it must
    still end when the scan that started it is SIGKILLed, not clone on unattended."""
    import socket
    import subprocess

    silent = socket.socket()  # accepts connections and never answers: the clone waits forever
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/owner/repo.git"
    script = ("import sys; from pathlib import Path; from review.codebases.fetch import git_clone; "
              "git_clone(sys.argv[1], Path(sys.argv[2]), timeout=600, max_bytes=10**9)")
    proc = subprocess.Popen([sys.executable, "-c", script, url, str(tmp_path / "dest")])
    try:
        children_die_with(proc, "git clone", start_timeout=60, gone_timeout=30)
    finally:
        silent.close()
