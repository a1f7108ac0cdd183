import pytest
from sqlalchemy import select

from review.claims import enqueue
from review.db.models import Run, WorkItem
from review.runs import record_run
from review.stage import drain


def test_run_row_records_success_and_counts(db):
    with record_run(db, "harvest", {"source": "acl"}) as run:
        run.count("added", 3)
        run.summary = "3 added"
        run.signature.update({"rules_sha256": None, "extractor": "pypdfium2-5"})
    with db.session() as s:
        row = s.get(Run, run.id)
    assert (row.status, row.counts, row.summary, row.arguments) == ("ok", {"added": 3}, "3 added", {"source": "acl"})
    assert row.finished_at is not None
    assert row.signature == {"extractor": "pypdfium2-5", "version": row.tool_version}


def test_failed_run_keeps_its_error_and_partial_counts(db):
    with pytest.raises(RuntimeError):
        with record_run(db, "download") as run:
            run.count("ok", 2)
            raise RuntimeError("disk full")
    with db.session() as s:
        row = s.get(Run, run.id)
    assert row.status == "failed" and "disk full" in row.error and row.counts == {"ok": 2}


def test_drain_isolates_bad_items_and_resumes(db):
    seen = []

    def handle(session, item_id):
        seen.append(item_id)
        if item_id == 3:
            raise ValueError("corrupt PDF")
        return "ok"

    with db.session() as s:
        enqueue(s, "extract", range(1, 6))
    with record_run(db, "extract") as run:
        outcomes = drain(db, "extract", handle, run=run, limit=4)
    assert outcomes == {"ok": 3, "error": 1}
    with record_run(db, "extract") as run:
        assert drain(db, "extract", handle, run=run) == {"ok": 1}
    assert seen == [1, 2, 3, 4, 5], "a rerun takes only what is left"
    with db.session() as s:
        failed = s.scalars(select(WorkItem).where(WorkItem.state == "failed")).all()
    assert [(w.item_id, w.last_error) for w in failed] == [(3, "ValueError: corrupt PDF")]
