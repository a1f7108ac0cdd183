"""Recording and finding sampling designs; telling a random sample from anything else.

A draw is recorded once: the same frame, seed and items queued again (a rerun of the same
`review queue`) reuse the row. The frame is kept whole (item ids and strata), so weights
and "was this item in the frame" never depend on how the corpus changed since.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Run, SamplingDesign

SAMPLED = ("sample", "stratified")


def frame_digest(frame: Sequence[Sequence[Any]]) -> str:
    return hashlib.sha256(json.dumps(frame, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Draw:
    """What a queue selection drew, before it is recorded."""

    kind: str
    method: str
    seed: int
    requested: int
    strata_by: str | None
    frame: list[list[Any]]  # [[item_id, stratum], ...]
    items: list[int]
    random: bool = True
    reason: str | None = None
    order: str | None = None  # the order reviewers meet the items in (a partial review is random only if random)

    def strata(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        drawn = set(self.items)
        for item, stratum in self.frame:
            key = str(stratum) if self.method == "stratified" else "all"
            row = out.setdefault(key, [0, 0])
            row[0] += 1
            row[1] += item in drawn
        return dict(sorted(out.items()))


def make_draw(kind: str, method: str, seed: int, requested: int, strata_by: str | None,
              frame: Iterable[tuple[int, Any]], items: Iterable[int], cut: str | None = None,
              order: str | None = None) -> Draw:
    """A Draw from the candidates and the chosen ones; `cut` says why (if) the draw was cut
    after it was made, in an order that is not random: then it is no random sample."""
    rows = sorted([int(i), None if s is None else str(s)] for i, s in frame)
    return Draw(kind, method, seed, requested, strata_by if method == "stratified" else None, rows,
                sorted(int(i) for i in items), cut is None, cut, order)


def record(session: Session, draw: Draw, *, rule_set: str | None, target: str | None, run_id: int | None) -> int:
    """The design row's id: an identical earlier draw is reused, else a new row is written."""
    digest = frame_digest(draw.frame)
    for row in session.scalars(select(SamplingDesign).where(SamplingDesign.kind == draw.kind,
                                                            SamplingDesign.frame_sha256 == digest)):
        if (row.method, row.seed, row.requested, row.strata_by, row.items, row.random, row.queue_order) == (
                draw.method, draw.seed, draw.requested, draw.strata_by, draw.items, draw.random, draw.order):
            return row.id
    row = SamplingDesign(kind=draw.kind, method=draw.method, seed=draw.seed, requested=draw.requested,
                         strata_by=draw.strata_by, frame=draw.frame, frame_sha256=digest, items=draw.items,
                         strata=draw.strata(), random=draw.random, reason=draw.reason, queue_order=draw.order,
                         rule_set=rule_set,
                         target=target, run_id=run_id)
    session.add(row)
    session.flush()
    return row.id


def latest(session: Session, kind: str = "papers", design_id: int | None = None) -> SamplingDesign | None:
    """The design asked for, else the newest one of `kind`."""
    if design_id is not None:
        return session.get(SamplingDesign, design_id)
    return session.scalar(select(SamplingDesign).where(SamplingDesign.kind == kind)
                          .order_by(SamplingDesign.id.desc()).limit(1))


def undesigned_samples(session: Session) -> list[str]:
    """Queue runs that drew a sample but recorded no design (made before designs were
    recorded): their items are a convenience set as far as estimates are concerned."""
    out = []
    for run in session.scalars(select(Run).where(Run.command.like("queue %")).order_by(Run.id)):
        args = run.arguments or {}
        if args.get("select") in SAMPLED and not args.get("dry_run") and run.status == "ok" \
                and "sampling_design" not in (run.counts or {}):
            out.append(f"run {run.id} ({run.command} --select {args.get('select')} --n {args.get('n')} "
                       f"--seed {args.get('seed')}) recorded no sampling design")
    return out
