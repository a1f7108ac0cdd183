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


def test_a_run_whose_process_ended_is_shown_and_then_recorded_interrupted(db):
    import socket
    import subprocess
    import sys

    from review.claims import this_process
    from review.status import build_status

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    me = this_process()
    with db.session() as s:
        rows = [Run(command="extract", tool_version="t", host=socket.gethostname(), pid=ended.pid, status="running"),
                Run(command="download", tool_version="t", host="gpu-node-7", pid=ended.pid, status="running"),
                Run(command="survey", tool_version="t", host=me.host, pid=me.pid, pid_start=me.start,
                    status="running")]
        s.add_all(rows)
        s.flush()
        ids = [r.id for r in rows]
    with db.session() as s:
        shown = {r["id"]: r["status"] for r in build_status(s).runs}
    assert [shown[i] for i in ids] == ["interrupted", "running", "running"], \
        "status tells a dead run at once; elsewhere and alive stay running"
    with db.session() as s:
        assert s.get(Run, ids[0]).status == "running", "status itself writes nothing"
    with record_run(db, "label"):
        pass
    with db.session() as s:
        dead, far, alive = (s.get(Run, i) for i in ids)
        assert dead.status == "interrupted" and f":{ended.pid}" in dead.error and "ended without closing" in dead.error
        assert far.status == alive.status == "running"


def test_status_lists_items_other_workers_hold(cli, db, tmp_path):
    import json
    from datetime import datetime, timezone

    from sqlalchemy import update

    with db.session() as s:
        enqueue(s, "extract", [1, 2, 3])
        s.execute(update(WorkItem).where(WorkItem.item_id.in_([1, 2]))
                  .values(state="claimed", worker="gpu-node-7:4242@99:abc123",
                          lease_until=datetime(2031, 5, 4, 3, 2, tzinfo=timezone.utc)))
    code, out, err = cli("--db", db.url.render_as_string(hide_password=False), "status", "--json")
    assert code == 0, err
    assert json.loads(out)["held"] == [{"stage": "extract", "items": 2, "workers": 1, "abandoned": 0,
                                        "until": "2031-05-04T03:02:00+00:00"}]
    code, out, err = cli("--db", db.url.render_as_string(hide_password=False), "status")
    assert "Claimed items" in out and "2031-05-04 03:02 UTC" in out


def test_drain_names_a_failed_item_by_its_public_name(db, caplog):
    """A log line saying "item 3 failed" names a row of one database; the reader needs the
    ident they can look up, and a naming function that itself fails must not hide the error."""
    def handle(session, item_id):
        raise ValueError("corrupt PDF")

    def name(item_id):
        if item_id == 2:
            raise LookupError("row gone")
        return f"paper D19-{item_id:04d}"

    with db.session() as s:
        enqueue(s, "extract", [1, 2])
    with caplog.at_level("ERROR"), record_run(db, "extract") as run:
        assert drain(db, "extract", handle, run=run, name=name) == {"error": 2}
    assert "extract: paper D19-0001 failed: ValueError: corrupt PDF" in caplog.text
    assert "extract: item 2 failed: ValueError: corrupt PDF" in caplog.text
