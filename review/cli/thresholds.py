"""`--min` for the evaluate commands: parsed before any work, reported after it."""

from __future__ import annotations

from typing import Any, Callable, Iterable, TypeVar

import typer

from review.cli.output import err_console

THRESHOLDS_NOT_MET = 1
T = TypeVar("T")


def parse_minimums(specs: Iterable[str] | None, parse: Callable[[str], T]) -> list[T]:
    """Every `--min`, or a usage error naming the bad one (before anything is read)."""
    try:
        return [parse(s) for s in specs or ()]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--min") from None


def as_json(thresholds: Iterable[Any], failures: list[str]) -> dict[str, list[str]]:
    """The `thresholds` member of a --json answer: what was checked and what failed."""
    return {"checked": [f"{t.metric}={t.minimum:g}" for t in thresholds], "failed": failures}


def exit_below(failures: list[str]) -> None:
    """Print each threshold not met and exit 1 when there is any."""
    for line in failures:
        err_console().print(f"below threshold: {line}", markup=False)
    if failures:
        raise typer.Exit(THRESHOLDS_NOT_MET)
