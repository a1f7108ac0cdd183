"""Open (or join) the run a harvest is recorded under, and keep its counts current."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from review.db.session import Database
from review.harvest.result import HarvestResult
from review.runs import RunRecorder, record_run

CHECKPOINT_SECONDS = 10.0


@dataclass
class HarvestRun:
    """The recorder plus the result; `checkpoint()` saves the counts so far now and then.
    `extra` holds counts the write path keeps besides the result's (e.g. `truncated_title`)."""

    recorder: RunRecorder
    result: HarvestResult
    prefix: str = ""
    extra: Counter[str] = field(default_factory=Counter)
    _last: float = field(default_factory=time.monotonic)

    @property
    def id(self) -> int:
        return self.recorder.id

    def publish(self) -> None:
        counts = {f"{self.prefix}{k}": v for k, v in {**self.result.counts(), **self.extra}.items()}
        if not self.prefix:
            self.recorder.counts.clear()
        for key, value in counts.items():
            self.recorder.counts[key] = value

    def checkpoint(self, force: bool = False) -> None:
        if force or time.monotonic() - self._last >= CHECKPOINT_SECONDS:
            self._last = time.monotonic()
            self.publish()
            self.recorder.checkpoint()


@contextmanager
def harvest_run(db: Database, command: str, arguments: dict[str, Any], run: RunRecorder | None,
                source: str) -> Iterator[HarvestRun]:
    """Yield a `HarvestRun`; the run's counts and summary are the result's, even on failure.

    A caller that already has a run (e.g. `review survey`) passes it; its counts are then
    prefixed with the source (`acl_added`, ...) so two harvests in one run stay apart.
    """
    if run is not None:
        handle = HarvestRun(run, HarvestResult(source=source, run_id=run.id), prefix=f"{source}_")
        try:
            yield handle
        finally:
            handle.publish()
        return
    with record_run(db, command, arguments) as recorder:
        handle = HarvestRun(recorder, HarvestResult(source=source, run_id=recorder.id))
        try:
            yield handle
        finally:
            handle.publish()
            recorder.summary = handle.result.summary()
