"""Which items go to reviewers, and in which order.

Selections: `all` (every candidate: prelim papers, or codebases not excluded by the
GitHub search), `flagged` (papers the rules flag as computing the metric; codebases whose scan
found a package), `sample` (N at random, reproducible with a seed), `stratified` (N per
year or venue, seeded), and `disputed` (items whose reviewers tied, for adjudication).
Orders: `least-certain` (fewest rule matches first: the weakest evidence is the likeliest
false positive), `ident`, `year`, `random` (seeded).
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Iterable

from sqlalchemy import select as sql_select
from sqlalchemy.orm import Session

from review.db.models import HumanResolution
from review.errors import ConfigError
from review.labelstudio.tasks import Candidate

SELECTIONS = ("all", "flagged", "sample", "stratified", "disputed")
ORDERS = ("least-certain", "ident", "year", "random")
STRATA = ("year", "venue")


def disputed_ids(session: Session, kind: str) -> set[int]:
    return set(session.scalars(sql_select(HumanResolution.item_id).where(
        HumanResolution.kind == kind, HumanResolution.needs_adjudication.is_(True))))


def choose(session: Session, cands: list[Candidate], how: str, *, n: int | None = None, seed: int = 0,
           by: str = "year") -> list[Candidate]:
    """The selected candidates (order not yet applied)."""
    if how not in SELECTIONS:
        raise ConfigError(f"unknown selection {how!r}", hint=f"one of {', '.join(SELECTIONS)}")
    cands = sorted(cands, key=lambda c: (c.ident, c.item_id))  # stable input for seeded draws
    if how == "all":
        return cands
    if how == "flagged":
        return [c for c in cands if c.flagged]
    if how == "disputed":
        ids = disputed_ids(session, cands[0].kind) if cands else set()
        return [c for c in cands if c.item_id in ids]
    if n is None or n < 1:
        raise ConfigError(f"--select {how} needs --n (a positive number)")
    rng = random.Random(seed)
    if how == "sample":
        return rng.sample(cands, min(n, len(cands)))
    if by not in STRATA:
        raise ConfigError(f"unknown stratum {by!r}", hint=f"one of {', '.join(STRATA)}")
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        groups[str(getattr(c, by))].append(c)
    out: list[Candidate] = []
    for key in sorted(groups):
        out += rng.sample(groups[key], min(n, len(groups[key])))
    return out


def order(cands: Iterable[Candidate], how: str, *, seed: int = 0) -> list[Candidate]:
    if how not in ORDERS:
        raise ConfigError(f"unknown order {how!r}", hint=f"one of {', '.join(ORDERS)}")
    items = sorted(cands, key=lambda c: (c.ident, c.item_id))
    if how == "least-certain":
        return sorted(items, key=lambda c: c.certainty)
    if how == "year":
        return sorted(items, key=lambda c: (c.year is None, c.year or 0))
    if how == "random":
        random.Random(seed).shuffle(items)
    return items
