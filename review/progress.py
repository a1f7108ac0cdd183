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

_state: dict = {"silent": False, "interrupted": None}


def set_silent(silent: bool) -> None:
    _state["silent"] = silent


class Bar:
    def __init__(self, progress: Progress | None, task: int | None, total: int | None = None):
        self._progress, self._task = progress, task
        self.total, self.done = total, 0  # counted even when silent: Ctrl-C reports them

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def describe(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text)


@contextmanager
def progress(total: int | None, description: str) -> Iterator[Bar]:
    """Yield a bar; `total` should be counted first so the bar can show time remaining.

    On Ctrl-C the bar's counts are kept for `interrupted_line()`, so the command can end
    with "30 done, 50 left" instead of a bare exit 130."""
    bar = Bar(None, None, total)
    try:
        console = Console(stderr=True)
        if _state["silent"] or not console.is_terminal or not sys.stderr.isatty():
            yield bar
            return
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=False) as prog:
            bar._progress, bar._task = prog, prog.add_task(description, total=total)
            yield bar
    except KeyboardInterrupt:
        _state["interrupted"] = (description, bar.done, total)
        raise


def forget_interrupt() -> None:
    _state["interrupted"] = None


def interrupted_line(command: str) -> str:
    """What a command interrupted by Ctrl-C says: how far it got and that a rerun resumes
    (every stage keeps what it finished and skips it next time)."""
    got = _state.get("interrupted")
    if got is None:
        return f"interrupted; rerun `{command}` to resume"
    description, done, total = got
    left = f", {total - done} left" if total is not None else ""
    return f"interrupted ({description}): {done} done{left}; rerun `{command}` to resume"
