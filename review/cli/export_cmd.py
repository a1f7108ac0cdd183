"""`review export`: the dataset, statistics, figures, PRISMA counts, report and manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, MetricOpt
from review.cli.output import print_json, summary
from review.export import run_export


@app.command()
def export(
    ctx: typer.Context,
    format_: Optional[str] = typer.Option(None, "--format", help="Dataset format: csv, jsonl or parquet (default from settings)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default: the exports_dir setting)."),
    time: Optional[str] = typer.Option(None, "--time", help="Time to write in the manifest (default: end of the newest run that made the data)."),
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Write the dataset (the released Rogue Scores columns, then ours), Figure 1
    statistics with bootstrap intervals, Figures 1 and 3 and the PRISMA flow (PNG and
    SVG), the package table, an HTML report and a manifest. Same data, same bytes.

    Example:

    \b
        review export
        review export --format parquet --out exports/2026-11
        review export --metric bleu --out exports/bleu
    """
    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    result = run_export(app_ctx.database(read_only=True), app_ctx.settings, out_dir=out, fmt=format_, time=time)
    if json_:
        print_json(result.as_dict())
    else:
        typer.echo(f"report:  {result.report}")
        typer.echo(f"dataset: {result.dataset}")
        for fig in result.figures:
            typer.echo(f"figure:  {fig}")
    summary(result.summary())
