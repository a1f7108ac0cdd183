"""`review extract` over the work queue, on SQLite and PostgreSQL, with real worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sqlalchemy import select

from review.db.models import Document, PaperText, Run, WorkItem
from review.extract import NORMALIZER_VERSION, run_extract
from review.extract.stage import STAGE
from review.runs import record_run
from review.settings import load_settings
from tests.extract_support import PDFS, add_paper_with_pdf, write_config

FILES = {"rouge": "rouge-paper.pdf", "plain": "plain-paper.pdf", "enc": "encrypted.pdf", "scan": "scanned.pdf",
         "trunc": "truncated.pdf"}
EXPECTED = {"rouge": ("ok", None), "plain": ("ok", None), "enc": ("failed", "encrypted"),
            "scan": ("failed", "no_text"), "trunc": ("failed", "corrupt"), "gone": ("failed", "missing")}


@pytest.fixture
def corpus(db, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    ids = {key: add_paper_with_pdf(db, data_dir, PDFS / name, key) for key, name in FILES.items()}
    ids["gone"] = add_paper_with_pdf(db, data_dir, None, "gone")
    settings = load_settings(write_config(tmp_path, db.url.render_as_string(hide_password=False), data_dir,
                                          timeout=60.0))
    return db, settings, ids


def texts_by_key(db, ids):
    with db.session() as s:
        rows = {t.paper_id: t for t in s.scalars(select(PaperText))}
        s.expunge_all()
    return {key: rows.get(pid) for key, pid in ids.items()}


def test_every_pdf_gets_a_text_row_with_outcome(corpus):
    db, settings, ids = corpus
    with record_run(db, "extract") as run:
        report = run_extract(db, settings, run=run, workers=2)
    assert report.outcomes == {"ok": 2, "encrypted": 1, "no_text": 1, "corrupt": 1, "missing": 1}
    texts = texts_by_key(db, ids)
    for key, (outcome, reason) in EXPECTED.items():
        assert (texts[key].outcome, texts[key].reason) == (outcome, reason), key
    rouge = texts["rouge"]
    assert "ROUGE-1.5.5" in rouge.content and "-c 95 -r 1000 -n 2 -m" in rouge.content
    assert (rouge.pages, rouge.chars, rouge.extractor) == (4, len(rouge.content), "pypdfium2")
    assert rouge.extractor_version and rouge.normalizer_version == NORMALIZER_VERSION and rouge.seconds > 0
    with db.session() as s:
        doc_sha = s.scalar(select(Document.sha256).where(Document.paper_id == ids["rouge"]))
        states = dict(s.execute(select(WorkItem.item_id, WorkItem.state).where(WorkItem.stage == STAGE)).all())
        counts = s.get(Run, run.id).counts
    assert rouge.document_sha256 == doc_sha and rouge.run_id == run.id
    assert texts["enc"].content is None and "password" in texts["enc"].detail.lower()
    assert states[ids["rouge"]] == "done" and states[ids["enc"]] == "failed"
    assert counts["ok"] == 2 and counts["pages"] == 4 + 3 + 2  # rouge, plain, the scan's 2 pages


def test_reruns_resume_retry_and_notice_new_pdfs(corpus, tmp_path):
    db, settings, ids = corpus
    run_extract(db, settings, workers=1, limit=2)
    assert sum(t is not None for t in texts_by_key(db, ids).values()) == 2
    rest = run_extract(db, settings, workers=2)
    assert sum(rest.outcomes.values()) == 4
    assert run_extract(db, settings, workers=2).outcomes == {}  # nothing left
    retried = run_extract(db, settings, workers=2, retry_failed=True)
    assert sum(retried.outcomes.values()) == 4 and retried.ok == 0
    # The encrypted paper's PDF is replaced by a readable one: its text is redone.
    with db.session() as s:
        doc = s.scalar(select(Document).where(Document.paper_id == ids["enc"]))
        doc.path = s.scalar(select(Document.path).where(Document.paper_id == ids["plain"]))
        doc.sha256 = "f" * 64
    again = run_extract(db, settings, workers=1)
    assert again.outcomes == {"ok": 1}
    assert texts_by_key(db, ids)["enc"].outcome == "ok"
    redo = run_extract(db, settings, workers=2, backend="pdfplumber", redo=True)
    assert sum(redo.outcomes.values()) == 6
    assert texts_by_key(db, ids)["rouge"].extractor == "pdfplumber"


def test_a_hanging_extraction_does_not_stop_the_run(corpus, monkeypatch):
    db, settings, ids = corpus
    # A timeout far below what any PDF needs stands in for a parser that hangs:
    # every worker is killed at the deadline and the run still finishes every paper.
    report = run_extract(db, settings, workers=2, timeout=0.001)
    assert sum(report.outcomes.values()) == 6
    assert report.outcomes.get("timeout", 0) >= 1


def json_part(out: str) -> dict:
    """The JSON object in stdout. review.log's RichHandler writes log lines to stdout too
    (rich's default console), a backbone issue reported to the lead; skip past them."""
    return json.loads(out[out.index("\n{") + 1:] if not out.startswith("{") else out)


def test_cli_extract_then_search(cli, db, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    add_paper_with_pdf(db, data_dir, PDFS / "rouge-paper.pdf", "2020.rouge-1", title="A ROUGE paper")
    add_paper_with_pdf(db, data_dir, PDFS / "plain-paper.pdf", "2020.plain-2", title="A BLEU paper")
    add_paper_with_pdf(db, data_dir, PDFS / "encrypted.pdf", "2020.locked-3")
    write_config(tmp_path, db.url.render_as_string(hide_password=False), data_dir)
    code, out, err = cli("extract", "--workers", "2", "--json")
    assert code == 1, err  # one PDF failed: exit code 1 and a hint, after doing all the others
    report = json_part(out)
    assert report["outcomes"] == {"ok": 2, "encrypted": 1} and report["pages"] == 7
    assert "extract: 2 ok, 1 failed (encrypted 1)" in err
    code, out, err = cli("search", "pyrouge")
    assert code == 0, err
    assert "2020.rouge-1" in out and "2020.plain-2" not in out and "pyrouge" in out
    code, out, err = cli("search", '"-c 95 -r 1000 -n 2 -m"', "--json")
    hits = json.loads(out)["hits"]
    assert [h["ident"] for h in hits] == ["2020.rouge-1"] and "**" in hits[0]["snippet"]
    code, out, err = cli("search", "BLEU", "--json")
    assert {h["ident"] for h in json.loads(out)["hits"]} >= {"2020.plain-2"}


def test_two_processes_share_the_queue_without_doing_anything_twice(db, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    n = 10
    for i in range(n):
        add_paper_with_pdf(db, data_dir, PDFS / ("rouge-paper.pdf" if i % 2 else "plain-paper.pdf"), f"p{i}")
    write_config(tmp_path, db.url.render_as_string(hide_password=False), data_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEW_")}
    procs = [subprocess.Popen([sys.executable, "-m", "review", "extract", "--workers", "1"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with db.session() as s:
        texts = s.scalars(select(PaperText)).all()
        runs = s.scalars(select(Run).where(Run.command == "extract")).all()
        states = s.scalars(select(WorkItem.state).where(WorkItem.stage == STAGE)).all()
        assert len(texts) == n and all(t.outcome == "ok" for t in texts)
        assert states == ["done"] * n
        assert len(runs) == 2 and sum(r.counts.get("ok", 0) for r in runs) == n


def test_the_summary_says_what_other_workers_still_hold(corpus):
    """Papers another machine's worker claimed are left to it, and the summary says until when."""
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import update

    from review.extract.stage import queue_documents

    db, settings, ids = corpus
    queue_documents(db)
    lease = datetime.now(timezone.utc) + timedelta(minutes=30)
    with db.session() as s:
        s.execute(update(WorkItem).where(WorkItem.item_id.in_([ids["rouge"], ids["plain"]]))
                  .values(state="claimed", worker="gpu-node-7:4242@99:abc123", lease_until=lease))
    report = run_extract(db, settings, workers=1)
    assert sum(report.outcomes.values()) == 4
    assert (report.held.items, report.held.workers) == (2, 1)
    assert f"2 still held by 1 other worker, until {lease:%Y-%m-%d %H:%M} UTC at the latest" in report.summary
    assert report.as_dict()["held"]["items"] == 2
