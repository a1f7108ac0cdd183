"""The one progress helper: a rich bar with a known total, silent when it should be.

Silent under `--silent`, `--json`, or when stderr is not a terminal (pipes, CI logs), so
machine-readable output is never mixed with bars.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_state = {"silent": False}


def set_silent(silent: bool) -> None:
    _state["silent"] = silent


class Bar:
    def __init__(self, progress: Progress | None, task: int | None):
        self._progress, self._task = progress, task

    def advance(self, n: int = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def describe(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text)


@contextmanager
def progress(total: int | None, description: str) -> Iterator[Bar]:
    """Yield a bar; `total` should be counted first so the bar can show time remaining."""
    console = Console(stderr=True)
    if _state["silent"] or not console.is_terminal or not sys.stderr.isatty():
        yield Bar(None, None)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as prog:
        task = prog.add_task(description, total=total)
        yield Bar(prog, task)
