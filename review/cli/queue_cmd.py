"""`review queue papers|code`: automated labels to Label Studio (or a task file)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import DryRunOpt, JsonOpt, LimitOpt, MetricOpt
from review.cli.output import print_json, summary


@app.command()
def queue(
    ctx: typer.Context,
    kind: str = typer.Argument(..., help="What to review: papers or code."),
    project: Optional[str] = typer.Option(None, "--project", help="Project title (created if missing; default per kind and metric)."),
    select: str = typer.Option("all", "--select", help="all | flagged | sample | stratified | disputed (ties, to adjudicate)."),
    n: Optional[int] = typer.Option(None, "--n", min=1, help="Items to draw (sample), or per stratum (stratified)."),
    seed: int = typer.Option(0, "--seed", help="Seed for sample, stratified and random order."),
    by: str = typer.Option("year", "--by", help="Stratum for --select stratified: year or venue."),
    order: Optional[str] = typer.Option(None, "--order", help="least-certain | ident | year | random (default: random for --select sample|stratified, so a partly reviewed sample stays random; else least-certain)."),
    overlap: Optional[int] = typer.Option(None, "--overlap", min=1, help="Reviewers per task: set on a new project (default label_studio.overlap; 1 to adjudicate), changed on an existing one only when given."),
    rule_set: Optional[str] = typer.Option(None, "--rule-set", help="Use labels of this rule file sha256 (prefix); default the label.rules file, else the newest per paper."),
    offline: Optional[Path] = typer.Option(None, "--offline", help="Write the tasks here instead of calling the server: Label Studio import JSON, or a spreadsheet for FILE.csv; the labeling configuration goes next to it (FILE stem + .label-config.xml)."),
    limit: LimitOpt = None,
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Queue papers or codebases for human review in Label Studio, with predictions.

    Creates or reuses the project and imports only items not already there; after a rule
    change it replaces the predictions (model_version = rule file sha256). Reruns never
    duplicate tasks and never change reviewers per task unless --overlap is given.
    --select disputed builds adjudication tasks: each shows the disputed questions with
    every reviewer's answer, pre-filled with nothing for them.

    Example:

    \b
        review queue papers --select sample --n 200 --seed 7
        review queue code --project "Code review, team B" --overlap 2
        review queue papers --offline exports/tasks.json
        review queue papers --offline exports/tasks.csv
        review queue papers --metric bleu   # its own project, with BLEU's questions and packages
    """
    from review.labelstudio.queue import run_queue

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    result = run_queue(app_ctx.database(), app_ctx.settings, kind, project=project, select_=select, n=n, seed=seed,
                       by=by, order_=order, overlap=overlap, rule_set=rule_set, limit=limit, offline=offline,
                       dry_run=dry_run)
    if json_:
        print_json(result.as_dict())
    summary(result.summary())
