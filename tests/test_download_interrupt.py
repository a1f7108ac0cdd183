"""Kill a real `review download` process mid-download (SIGKILL, then Ctrl-C) and rerun it."""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest
from sqlalchemy import select

from review.db.models import Document, Run, WorkItem
from review.download import run_download
from review.runs import record_run
from review.settings import DownloadSettings, HttpSettings, Settings
from tests.procs import clean_env, start_review
from tests.download_support import DripServer, add_paper, assert_consistent, crc, documents, make_pdf

FILES = 6


def start(tmp_path, db_url: str, data_dir) -> subprocess.Popen:
    env = clean_env(REVIEW_DATABASE_URL=db_url, REVIEW_DATA_DIR=str(data_dir), REVIEW_HTTP__PER_HOST_RATE="0",
                    REVIEW_HTTP__PER_HOST_CONCURRENCY="2", REVIEW_DOWNLOAD__WORKERS="2")
    return start_review("--silent", "download", cwd=tmp_path, env=env)


def wait_mid_download(db, data_dir, proc: subprocess.Popen, timeout: float = 30) -> None:
    """Until at least one paper is finished and another is half-written to a temp file."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        with db.session() as s:
            done = s.scalar(select(Document.id).where(Document.outcome == "ok").limit(1))
        if done and list((data_dir / "pdfs").glob(".tmp/*.part")):
            return
        time.sleep(0.03)
    pytest.fail("the download never got under way")


@pytest.fixture
def corpus(db):
    drip = DripServer(chunk=4096, pause=0.03)
    with drip:
        for i in range(FILES):
            body = make_pdf(50 + i, pad=80_000)
            add_paper(db, f"S{i}", drip.add(f"/s{i}.pdf", body), crc32=crc(body))
        yield drip


def settings_for(data_dir) -> Settings:
    return Settings(data_dir=data_dir, http=HttpSettings(per_host_rate=0, backoff=0.05, timeout=5),
                    download=DownloadSettings(workers=3))


@pytest.mark.slow
def test_sigkill_mid_download_then_rerun_resumes_without_refetching(db, db_url, corpus, tmp_path):
    data_dir = tmp_path / "data"
    proc = start(tmp_path, db_url, data_dir)
    try:
        wait_mid_download(db, data_dir, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    finished = {ident for ident, d in documents(db).items() if d.outcome == "ok"}
    assert finished and len(finished) < FILES
    assert list((data_dir / "pdfs").glob(".tmp/*.part")), "the kill did leave a partial file"
    with db.session() as s:
        killed = s.scalars(select(Run).where(Run.command == "download")).one()
        assert killed.status == "running"
        assert "claimed" in {w.state for w in s.scalars(select(WorkItem))}

    with record_run(db, "download") as run:
        report = run_download(db, settings_for(data_dir), run=run)

    assert report.stale_temp_files >= 1
    assert report.counts == {"ok": FILES - len(finished)}
    assert not report.held.items and "held" not in report.summary
    with db.session() as s:
        assert s.get(Run, killed.id).status == "interrupted", "the killed run is recorded as such"
    docs = documents(db)
    assert len(docs) == FILES and {d.outcome for d in docs.values()} == {"ok"}
    for ident in finished:
        assert corpus.requests[f"/s{ident[1:]}.pdf"] == 1, f"{ident} was fetched again"
    with db.session() as s:
        assert {w.state for w in s.scalars(select(WorkItem))} == {"done"}
    assert_consistent(db, data_dir)


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_rerun_finishes(db, db_url, corpus, tmp_path):
    data_dir = tmp_path / "data"
    proc = start(tmp_path, db_url, data_dir)
    try:
        wait_mid_download(db, data_dir, proc)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 130, err
    said = re.search(r"interrupted \(.*\): (\d+) done, (\d+) left; rerun `review --silent download` to resume", err)
    assert said and int(said[1]) + int(said[2]) == FILES and int(said[2]) > 0, err  # issue 31: how far, what next
    assert "Traceback" not in err
    assert not list((data_dir / "pdfs").glob(".tmp/*.part")), "Ctrl-C leaves no partial file"
    with db.session() as s:
        states = {w.state for w in s.scalars(select(WorkItem))}
        status = s.scalar(select(Run.status).where(Run.command == "download"))
    assert states <= {"pending", "done"} and "pending" in states, "unfinished items went back to the queue"
    assert status == "interrupted"
    finished = {ident for ident, d in documents(db).items() if d.outcome == "ok"}

    report = run_download(db, settings_for(data_dir))
    assert report.counts == {"ok": FILES - len(finished)}
    for ident in finished:
        assert corpus.requests[f"/s{ident[1:]}.pdf"] == 1
    assert_consistent(db, data_dir)
