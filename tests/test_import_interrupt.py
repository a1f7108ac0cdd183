"""Kill a real `review import pdfs` mid-archive (SIGKILL) and rerun it: every file once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from review.db.models import Document, Run
from review.db.models.documents import ImportedFile
from review.download.store import PdfStore
from review.importer.pdfs import run_import_pdfs
from review.settings import Settings
from tests.import_support import add_paper, crc, make_pdf, sha, write_tar

FILES = 300


def ledger_rows(db) -> int:
    with db.session() as s:
        return s.scalar(select(func.count()).select_from(ImportedFile)) or 0


@pytest.mark.slow
def test_sigkill_mid_import_then_rerun_settles_every_file_exactly_once(db, db_url, tmp_path):
    members = []
    for i in range(FILES):
        body = make_pdf(i, pad=20_000)
        add_paper(db, f"P19-{i + 1000}", crc32=crc(body))
        members.append((f"pdfs/P19-{i + 1000}.pdf", body))
    path = write_tar(tmp_path / "bundle.tar.gz", members, mode="w:gz")
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEW_")}
    env.update({"REVIEW_DATABASE_URL": db_url, "REVIEW_DATA_DIR": str(data_dir), "REVIEW_IMPORTS__PDF_BATCH": "7"})
    proc = subprocess.Popen([sys.executable, "-m", "review", "--silent", "import", "pdfs", str(path)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while ledger_rows(db) < 20:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the import never got under way"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    settled = ledger_rows(db)
    assert 20 <= settled < FILES, "the kill landed mid-import"
    stored_before = {p.name: p.stat().st_mtime_ns for p in (data_dir / "pdfs").glob("??/??/*.pdf")}
    assert len(stored_before) >= settled  # files of the open batch may be stored, their rows were not committed
    with db.session() as s:
        assert s.scalar(select(Run.status).where(Run.command == "import pdfs")) == "running"

    report = run_import_pdfs(db, Settings(data_dir=data_dir), path)

    assert report.already == settled
    assert report.counts == {"matched": FILES - settled}
    with db.session() as s:
        docs = s.scalars(select(Document)).all()
        rows = s.scalars(select(ImportedFile)).all()
    assert len(docs) == FILES and {d.outcome for d in docs} == {"ok"}
    assert len({d.paper_id for d in docs}) == FILES
    assert len(rows) == FILES and {r.outcome for r in rows} == {"matched"}
    assert {r.member for r in rows} == {m for m, _ in members}
    stored = {p.name: p.stat().st_mtime_ns for p in (data_dir / "pdfs").glob("??/??/*.pdf")}
    assert set(stored) == {f"{sha(body)}.pdf" for _, body in members}
    assert all(stored[name] == when for name, when in stored_before.items()), "a stored file was written again"
    assert not PdfStore(data_dir).partial_files()
    for d in docs:
        assert sha((data_dir / d.path).read_bytes()) == d.sha256


# --- helper processes of a killed import (issue 16.7: workers die with their parent) -------

_TEXT_POOL_PARENT = """
import time
from review.importer.texts import _Pool
pool = _Pool(2)
pool.submit(["warm up"]).result()
print(" ".join(str(pid) for pid in pool.pool._processes), flush=True)
time.sleep(600)
"""

_META_PARENT = """
import sys, time
from review.importer import pdfmeta
pdfmeta.read_meta_in_process = lambda path: time.sleep(600)  # a PDF that hangs the reader
print("reading", flush=True)
pdfmeta.read_meta(sys.argv[1], timeout=600)
"""


def _kill_parent_and_check_children(script: str, *args: str) -> None:
    from tests.procs import children_die_with

    parent = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    parent.stdout.readline()  # the parent is ready
    children_die_with(parent, "a helper process of the import")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; parent-death signal")
def test_text_import_workers_die_with_a_killed_import():
    """`review import texts` normalizes in a process pool; idle workers waited forever once it was killed."""
    _kill_parent_and_check_children(_TEXT_POOL_PARENT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; parent-death signal")
def test_a_hung_metadata_reader_dies_with_a_killed_import(tmp_path):
    """`review import pdfs --create` reads each PDF's metadata in a child with a time limit the
    parent enforces; once the parent is killed, nobody would end a reader stuck on a hostile PDF."""
    _kill_parent_and_check_children(_META_PARENT, str(tmp_path / "x.pdf"))


# --- `review import texts`: SIGKILL mid-file, then rerun ------------------------------------

TEXTS = 1500


def _text_rows(db) -> int:
    from review.db.models import PaperText
    with db.session() as s:
        return s.scalar(select(func.count()).select_from(PaperText)) or 0


@pytest.mark.slow
def test_sigkill_mid_text_import_then_rerun_stores_every_text_exactly_once(db, db_url, tmp_path):
    import json

    from review.db.models import PaperText
    from review.importer.texts import run_import_texts

    words = ("We report ROUGE-1, ROUGE-2 and ROUGE-L F1 computed with the official Perl script "
             "and stemming enabled on the CNN/Daily Mail test set. ") * 30
    path = tmp_path / "corpus.jsonl"
    with path.open("w") as out:
        for i in range(TEXTS):
            add_paper(db, f"2020.acl-main.{i + 1}")
            out.write(json.dumps({"ident": f"2020.acl-main.{i + 1}", "text": f"Paper {i}. {words}"}) + "\n")
    from tests.procs import clean_env, sigkill_when, start_review

    env = clean_env(REVIEW_DATABASE_URL=db_url, REVIEW_DATA_DIR=str(tmp_path / "data"),
                    REVIEW_IMPORTS__TEXT_BATCH="5", REVIEW_IMPORTS__WORKERS="1")
    proc = start_review("--silent", "import", "texts", str(path), cwd=tmp_path, env=env)
    sigkill_when(proc, lambda: _text_rows(db) >= 30, "import")
    settled = _text_rows(db)
    assert 30 <= settled < TEXTS, "the kill landed mid-import"

    report = run_import_texts(db, Settings(data_dir=tmp_path / "data"), path)

    assert report.counts["imported"] == TEXTS - settled
    assert report.counts["unchanged"] == settled
    with db.session() as s:
        texts = s.execute(select(PaperText.paper_id, PaperText.source)).all()
    assert len(texts) == TEXTS and len({p for p, _ in texts}) == TEXTS, "every paper has its text once"
    assert {src for _, src in texts} == {"jsonl"}
