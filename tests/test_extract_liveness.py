"""Extract workers die with their parent, stay within their CPU time, and a killed run is resumed at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import select

from review.db.models import PaperText, Run, WorkItem
from review.extract import extract_file, run_extract
from review.extract.isolate import Worker, WorkerPool
from review.extract.stage import STAGE
from review.runs import record_run
from review.settings import load_settings
from tests.extract_support import PDFS, add_paper_with_pdf, write_config, write_flate_bomb
from tests.procs import alive, children, clean_env, start_review, wait_gone

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; parent-death signal")


# --- allocation failures (issue 18.6) -------------------------------------------------------

@pytest.mark.parametrize("backend", ["pdfplumber", "pypdfium2"])
def test_a_flate_bomb_is_a_memory_failure(tmp_path, backend):
    """256 MiB of content stream from 260 kB of file, under a 64 MB cap: 'memory', not 'corrupt'."""
    write_flate_bomb(tmp_path / "bomb.pdf", 256)
    ex = extract_file(tmp_path / "bomb.pdf", backend, memory_mb=64, timeout=60)
    assert (ex.outcome, ex.reason) == ("failed", "memory"), ex.detail


def test_the_same_stream_small_enough_is_read():
    """The control: a 2 MiB stream of spaces inflates fine and is a page without text."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        write_flate_bomb(Path(tmp) / "small.pdf", 2)
        for backend in ("pdfplumber", "pypdfium2"):
            ex = extract_file(Path(tmp) / "small.pdf", backend, memory_mb=64, timeout=60)
            assert (ex.outcome, ex.reason) == ("failed", "no_text"), (backend, ex.detail)


# --- a worker on its own --------------------------------------------------------------------

def test_a_spinning_worker_is_ended_by_its_cpu_time_limit_even_with_nobody_watching():
    """Nobody collects the answer (as when the parent was killed): the kernel ends the worker."""
    w = Worker(timeout=1.0, memory_mb=512)
    try:
        w.submit(None, PDFS / "rouge-paper.pdf", "test:spin")
        w.proc.join(60)  # CPU time, not wall time: slower on a busy machine
        assert w.proc.exitcode == -signal.SIGXCPU
        ex = w.collect()
        assert (ex.outcome, ex.reason) == ("failed", "timeout") and "CPU time" in ex.detail
        assert w.extract(PDFS / "rouge-paper.pdf", "pypdfium2").ok  # a fresh worker takes over
    finally:
        w.close()


def test_an_idle_worker_exits_when_its_pipe_closes_even_with_a_younger_sibling():
    """The fallback where the kernel cannot kill a worker with its parent: end of file.

    A worker forked later must not hold a copy of an older worker's parent-side pipe end,
    or the older one would never see the end of its pipe.
    """
    with WorkerPool(2, timeout=30, memory_mb=512) as pool:
        jobs = [(i, PDFS / "plain-paper.pdf", "pypdfium2") for i in range(2)]
        assert all(r.ok for _, r in pool.imap(iter(jobs)))
        older, younger = pool.workers
        assert older.proc.is_alive() and younger.proc.is_alive()
        older.conn.close()  # what the parent's death does to its end
        older.proc.join(10)
        assert older.proc.exitcode == 0, "the worker saw end of file and left"
        assert younger.proc.is_alive()
        older.conn = None


_ORPHAN_PARENT = """
import sys, time
from review.extract.isolate import Worker
workers = [Worker(timeout=600, memory_mb=512) for _ in range(2)]
for w in workers:
    w.submit(None, sys.argv[1], "test:spin")
print(" ".join(str(w.proc.pid) for w in workers), flush=True)
time.sleep(600)
"""


@linux_only
def test_busy_workers_die_with_their_parent():
    """SIGKILL of the parent while its workers spin on a hostile PDF: the workers go at once."""
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN_PARENT, str(PDFS / "rouge-paper.pdf")],
                              stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and set(pids) <= set(children(parent.pid))
        time.sleep(0.3)
        assert all(alive(p) for p in pids), "the workers are busy"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert wait_gone(pids, 5) == [], "a worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


# --- the stage: SIGKILL mid-run, then rerun at once -----------------------------------------

N_PAPERS = 8


def _texts_and_states(db):
    with db.session() as s:
        texts = {t.paper_id: t.run_id for t in s.scalars(select(PaperText))}
        states = dict(s.execute(select(WorkItem.item_id, WorkItem.state).where(WorkItem.stage == STAGE)).all())
    return texts, states


@linux_only
@pytest.mark.slow
def test_sigkill_mid_extract_then_immediate_rerun_finishes_every_paper_once(db, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    ids = [add_paper_with_pdf(db, data_dir, PDFS / ("rouge-paper.pdf" if i % 2 else "plain-paper.pdf"), f"k{i}")
           for i in range(N_PAPERS)]
    # pdfplumber takes about a second a paper: the run is surely mid-way when it is killed
    write_config(tmp_path, db.url.render_as_string(hide_password=False), data_dir, backend="pdfplumber")
    proc = start_review("--silent", "extract", "--workers", "2", cwd=tmp_path, env=clean_env())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()
            texts, states = _texts_and_states(db)
            if texts and "claimed" in states.values():
                break
            time.sleep(0.05)
        else:
            pytest.fail("the extraction never got under way")
        workers = children(proc.pid)
        assert len(workers) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert wait_gone(workers, 5) == [], "a worker of the killed run is still alive"
    texts, states = _texts_and_states(db)
    finished = {pid for pid, state in states.items() if state == "done"}
    stranded = {pid for pid, state in states.items() if state == "claimed"}
    assert finished and stranded and len(finished) < N_PAPERS
    with db.session() as s:
        killed = s.scalars(select(Run).where(Run.command == "extract")).one()
    assert killed.status == "running"

    settings = load_settings(tmp_path / "review.toml")
    started = time.monotonic()
    with record_run(db, "extract") as run:
        report = run_extract(db, settings, run=run, workers=2, backend="pypdfium2")  # the fast one
    assert time.monotonic() - started < 120, "the rerun did not wait out a lease"

    assert sum(report.outcomes.values()) == N_PAPERS - len(finished), "every unfinished paper, once"
    assert report.ok == N_PAPERS - len(finished) and not report.held.items and not report.held.abandoned
    assert "held" not in report.summary
    texts, states = _texts_and_states(db)
    assert set(states.values()) == {"done"} and sorted(texts) == sorted(ids)
    redone = {pid for pid, run_id in texts.items() if run_id == run.id}
    assert redone == set(ids) - finished, "finished papers were not extracted again"
    with db.session() as s:
        assert s.get(Run, killed.id).status == "interrupted"
        assert "ended without closing" in s.get(Run, killed.id).error
