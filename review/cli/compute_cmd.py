"""`review compute`: R1-R3, software_error and reproducible for every paper."""

from __future__ import annotations

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import DryRunOpt, JsonOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.compute import run_compute


@app.command()
def compute(ctx: typer.Context, json_: JsonOpt = False, dry_run: DryRunOpt = False,
            force: bool = typer.Option(False, "--force", help="Rewrite the labels even when nothing changed."),
            metric: MetricOpt = None) -> None:
    """Compute the reproducibility labels (R1, R2, R3, software_error, reproducible).

    Resolved human answers win where they exist (strict majority of reviewers, or an
    adjudicator on a disputed question); automated labels are used otherwise, and every
    row says which (a tie not yet adjudicated keeps the automated answer, flagged
    "disputed"). The package catalog and the open choices are settings (`review config`,
    section compute).

    Example:

    \b
        review compute
        review compute --json --dry-run
        review compute --metric bleu
    """
    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    result = run_compute(app_ctx.database(), app_ctx.settings, dry_run=dry_run, force=force)
    if json_:
        print_json(result.as_dict())
    else:
        print_table(None, ["papers", f"{result.metric or 'metric'} papers", "reproducible", "software error", "rule set"],
                    [(result.papers, result.metric_papers, result.reproducible, result.software_error,
                      result.rule_set or "(none)")])
        typer.echo(f"signature: {result.signature}")
        if result.unknown_packages:
            typer.echo("packages not in the catalog (correctness unknown): " + ", ".join(result.unknown_packages))
    summary(result.summary())
