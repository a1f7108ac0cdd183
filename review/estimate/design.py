"""Sampling designs: recording them, telling a random sample from anything else, and the
one rule for when a sample supports an estimate.

A draw is recorded once: the same frame, seed and items queued again (a rerun of the same
`review queue`) reuse the row. The frame is kept whole (item ids and strata), so weights
and "was this item in the frame" never depend on how the corpus changed since.

`review plan`, `review queue` and the estimator (`review.estimate.figure1`, used by export)
all ask this module: how many reviewed papers a statistic needs (`minimum`, `shortfall`),
which papers count as reviewed for it (`human_answered`: every question it rests on
answered by a person, never an automated answer), and in which order a drawn sample is
queued by default (`default_order`: random, so a partly reviewed sample is still random).
Why one module: plan used to ask for fewer papers than the estimator then required.
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
MIN_HUMAN = 30  # reviewed papers a statistic needs before a normal interval means anything
MIN_PER_STRATUM = 2  # reviewed papers each stratum needs for its variance
CODE_QUESTIONS = ("C0", "C1", "C2")


def default_order(select: str) -> str:
    """The order items are queued in when the user names none: a sample drawn for
    estimation is met in random order (any reviewed part of it is then a random sample);
    everything else least certain first."""
    return "random" if select in SAMPLED else "least-certain"


def minimum(frame: int) -> int:
    """Reviewed papers a statistic needs on a frame of `frame` papers: MIN_HUMAN, or the
    whole frame when it is smaller (nothing more can be asked of reviewers)."""
    return max(min(MIN_HUMAN, frame), 0)


def shortfall(n_human: int, frame: int) -> str:
    """Why `n_human` reviewed papers are too few for an estimate ("" when they are enough)."""
    need = minimum(frame)
    if n_human >= need and n_human > 0:
        return ""
    return f"{n_human} reviewed paper(s), at least {max(need, 1)} needed"


def planned_size(solved: int, frame: int) -> int:
    """Papers `review plan` asks for: what the interval needs, but never fewer than the
    estimator requires (so answering all of them gives the estimate)."""
    return min(max(solved, minimum(frame)), frame)


def unanswered(row: dict[str, Any], questions: Sequence[str]) -> list[str]:
    """The questions of `questions` no person answered for this computed row (its `sources`).

    A paper reviewers say does not compute the metric needs nothing else, and C1 and C2
    of a paper without code (C0 = no) have nothing to answer. An automated answer is never
    a human one, not even "no code" for a paper without a linked codebase: nobody checked
    that."""
    sources = row.get("sources") or row.get("label_sources") or {}  # a computed row, or a dataset row
    if row.get("paper_metric") is False and sources.get("P0") == "human":
        return []
    out = []
    for q in questions:
        source = sources.get(q)
        if source == "human" or (source is None and q in ("C1", "C2") and row.get("has_code") is False):
            continue
        out.append(q)
    return out


def human_answered(row: dict[str, Any], questions: Sequence[str]) -> bool:
    """Whether people answered every question of `questions` for this row (see `unanswered`)."""
    return not unanswered(row, questions)


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
