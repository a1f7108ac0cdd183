"""Work claiming: concurrent workers process every item exactly once."""

import multiprocessing as mp
import time
from datetime import timedelta

from sqlalchemy import func, select

from review.claims import claim, enqueue, finish, release
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
