"""Options shared by many commands, declared once so they read the same everywhere."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", min=1, help="Process at most this many items.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Report what would change; write nothing.")]
WorkersOpt = Annotated[Optional[int], typer.Option("--workers", min=1, help="Parallel workers (default from settings).")]
ShortOpt = Annotated[bool, typer.Option("--short", help="Abbreviated signature.")]
MetricOpt = Annotated[Optional[str], typer.Option(
    "--metric", help="Metric folder: the name of one under patterns/ or a folder's path; overrides label.metric.")]
