"""`review plan`: papers (and codebases) to review for a target interval, and queue them."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, MetricOpt
from review.cli.output import print_json, print_table, summary


@app.command()
def plan(
    ctx: typer.Context,
    target: List[str] = typer.Option(..., "--target", help="STAT=HALF_WIDTH, e.g. reproducible=0.02 (repeatable; the largest need wins)."),
    confidence: Optional[float] = typer.Option(None, "--confidence", min=0.5, max=0.999, help="Interval level (default export.confidence)."),
    prior_miss: float = typer.Option(0.2, "--prior-miss", min=0.0, max=0.9, help="Without a human sample: share of true yes answers (among the statistic's denominator) the rules miss."),
    prior_invent: float = typer.Option(0.05, "--prior-invent", min=0.0, max=0.9, help="Without a human sample: share of true no answers (among the statistic's denominator) the rules call yes."),
    design: Optional[int] = typer.Option(None, "--design", help="Measure the rules on this sampling design (default the newest)."),
    queue: bool = typer.Option(False, "--queue", help="Queue the planned sample of papers and their codebases (design recorded)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the queued sample."),
    offline: Optional[Path] = typer.Option(None, "--offline", help="With --queue: write Label Studio import JSON (papers to FILE, codebases to FILE with -code) instead."),
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """How many papers (and codebases) to review for a target interval half-width.

    Uses the rules' error rates measured on the newest recorded human sample (`review queue
    --select sample`), or the stated priors when there is none, and the prediction-powered
    estimator `review export` reports; also says what a human-only estimate would need.
    --queue draws exactly that simple random sample of papers (recording its design) and
    queues the codebases of the drawn papers.

    Example:

    \b
        review plan --target reproducible=0.02
        review plan --target reproducible=0.03 --target list_parameters=0.05 --prior-miss 0.3
        review plan --target reproducible=0.02 --queue --seed 7 --offline exports/plan.json
    """
    from review.compute import load_catalog
    from review.estimate.plan import Priors, plan as make_plan, queue_plan
    from review.metric import metric_of

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    settings, db = app_ctx.settings, app_ctx.database()
    result = make_plan(db, settings, load_catalog(settings.compute.packages, settings), metric_of(settings), target,
                       priors=Priors(prior_miss, prior_invent), design_id=design, confidence=confidence)
    if queue:
        queue_plan(db, settings, result, seed=seed, offline=offline)
    if json_:
        print_json(result.as_dict())
    else:
        print_table(None, ["statistic", "± target", "papers (ppi)", "papers (human only)", "codebases", "share",
                           "rules: false yes", "rules: false no"],
                    [(n.statistic, n.half_width, n.papers, n.papers_human_only, n.codebases, n.share,
                      n.rule_false_positive, n.rule_false_negative) for n in result.needs])
        for n in result.needs:
            typer.echo(f"{n.statistic}: {n.source}" + (f"; {n.note}" if n.note else ""))
        for p in result.problems:
            typer.echo(p)
    summary(result.summary())
