"""Work claiming: concurrent workers process every item exactly once."""

import multiprocessing as mp
import time
from datetime import timedelta

from sqlalchemy import func, select

from review.claims import claim, enqueue, finish, held_by_others, release
from review.db.models import WorkItem
from review.db.session import Database


def _worker(url: str, name: str, out: "mp.Queue") -> None:
    db = Database(url)
    taken = []
    while True:
        with db.session() as s:
            batch = claim(s, "extract", name, 7)
        if not batch:
            break
        for c in batch:
            time.sleep(0.002)  # "work", so the two workers really interleave
            taken.append(c.item_id)
        with db.session() as s:
            assert finish(s, batch, name) == len(batch)
    db.dispose()
    out.put((name, taken))


def _run_two_workers(url: str, n: int) -> dict[str, list[int]]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, f"w{i}", out)) for i in range(2)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    return results


def test_two_processes_take_every_item_exactly_once(db):
    n = 300
    with db.session() as s:
        assert enqueue(s, "extract", range(1, n + 1)) == n
    results = _run_two_workers(db.engine.url.render_as_string(hide_password=False), n)
    taken = results["w0"] + results["w1"]
    assert sorted(taken) == list(range(1, n + 1)), "every item once, none twice"
    assert results["w0"] and results["w1"], "both workers got work"
    with db.session() as s:
        states = dict(s.execute(select(WorkItem.state, func.count()).group_by(WorkItem.state)).all())
    assert states == {"done": n}


def test_enqueue_is_idempotent_and_retry_failed_requeues(db):
    with db.session() as s:
        assert enqueue(s, "download", [1, 2, 3]) == 3
        assert enqueue(s, "download", [1, 2, 3, 4]) == 1
    with db.session() as s:
        batch = claim(s, "download", "w", 10)
        finish(s, batch[:1], "w", error="http_404")
        finish(s, batch[1:], "w")
    with db.session() as s:
        assert claim(s, "download", "w", 10) == []
        assert enqueue(s, "download", [1, 2, 3, 4]) == 0
        assert enqueue(s, "download", [1, 2, 3, 4], requeue_failed=True) == 1
        again = claim(s, "download", "w", 10)
    assert [c.item_id for c in again] == [1]
    assert again[0].attempts == 2


def test_expired_lease_is_taken_over_and_late_finish_is_refused(db):
    with db.session() as s:
        enqueue(s, "scan", [10])
        first = claim(s, "scan", "dead-worker", 1, lease=timedelta(seconds=-1))
        second = claim(s, "scan", "live-worker", 1)
    assert [c.item_id for c in second] == [10]
    with db.session() as s:
        assert finish(s, first, "dead-worker") == 0, "a worker that lost its lease cannot finish"
        assert finish(s, second, "live-worker") == 1


def test_released_items_go_back_to_pending(db):
    with db.session() as s:
        enqueue(s, "label", [1, 2])
        batch = claim(s, "label", "w", 2)
        release(s, batch, "w")
        assert [c.item_id for c in claim(s, "label", "other", 5)] == [1, 2]


# --- liveness: one rule for every stage ------------------------------------------------------

def _hold(session, stage: str, item_ids: list[int], worker: str) -> None:
    """Items claimed by `worker` under a 30-minute lease, as its own claim() would leave them."""
    from datetime import datetime, timezone

    from sqlalchemy import update

    session.execute(update(WorkItem).where(WorkItem.stage == stage, WorkItem.item_id.in_(item_ids))
                    .values(state="claimed", worker=worker, lease_until=datetime.now(timezone.utc) + timedelta(minutes=30)))


def _ended_process() -> int:
    """The pid of a process of this machine that has ended (and been reaped)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_claims_of_a_worker_whose_process_ended_are_taken_at_once(db):
    import socket

    from review.claims import ProcessId, this_process, worker_name

    me = this_process()
    ended = f"{socket.gethostname()}:{_ended_process()}:abc123"
    reused = f"{me.host}:{me.pid}@{int(me.start or 0) + 1}:abc123"  # this pid, but another (earlier) process
    alive_here = worker_name()
    elsewhere = "gpu-node-7:4242@99:abc123"
    with db.session() as s:
        enqueue(s, "extract", range(1, 9))
        for first, name in ((1, ended), (3, reused), (5, alive_here), (7, elsewhere)):
            _hold(s, "extract", [first, first + 1], name)
    assert ProcessId.parse(ended).gone() and ProcessId.parse(reused).gone() == (me.start is not None)
    with db.session() as s:
        taken = claim(s, "extract", "rerun", 10)
    expected = {1, 2, 3, 4} if me.start is not None else {1, 2}
    assert {c.item_id for c in taken} == expected, "only the ended processes' items come back, at once"
    with db.session() as s:
        held = held_by_others(s, "extract", "rerun")
        holders = set(s.scalars(select(WorkItem.worker).where(WorkItem.state == "claimed")))
    assert held.items == 4 and held.workers == 2 and held.abandoned == 0
    assert held.until is not None and "still held by 2 other workers, until" in held.note()
    assert {alive_here, elsewhere, "rerun"} == holders


def test_a_killed_but_unreaped_worker_counts_as_gone():
    import signal
    import socket
    import subprocess
    import sys

    from review.claims import worker_gone

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        name = f"{socket.gethostname()}:{proc.pid}:abc123"
        assert not worker_gone(name)
        proc.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not worker_gone(name) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert worker_gone(name), "a zombie is not a live worker"
    finally:
        proc.kill()
        proc.wait()


def test_an_expired_lease_elsewhere_is_reported_as_abandoned(db):
    with db.session() as s:
        enqueue(s, "download", [1, 2, 3])
        claim(s, "download", "far-away:77@1:abc123", 2, lease=timedelta(seconds=-1))
        held = held_by_others(s, "download")
    assert (held.items, held.abandoned) == (0, 2)
    assert held.note() == "2 abandoned by stopped workers (the next run takes them)"
    assert held.as_dict() == {"items": 0, "workers": 0, "abandoned": 2, "until": None}


def test_worker_names_carry_the_process_and_stay_short():
    from review.claims import ProcessId, this_process, worker_name

    name = worker_name()
    assert ProcessId.parse(name) == this_process() and len(name) <= 128
    assert ProcessId.parse("w0") is None and ProcessId.parse("host:12:abc") == ProcessId("host", 12, None)
