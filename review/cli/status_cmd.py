"""`review status`: where every paper stands."""

from __future__ import annotations

from typing import Any

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, print_table
from review.db import migrate
from review.status import build_status


@app.command()
def status(
    ctx: typer.Context,
    json_: JsonOpt = False,
    runs: int = typer.Option(5, "--runs", min=0, help="How many recent runs to list."),
) -> None:
    """How many papers stand at each stage and outcome, what other workers hold, and the last runs.

    Example:

    \b
        review status
        review status --json
    """
    db = context.get(ctx).database(read_only=True)
    with db.session() as s:
        report = build_status(s, last_runs=runs, settings=context.get(ctx).settings)
        s.rollback()  # status reads only
    report.schema = migrate.current_revision(db)
    report.database = db.url.render_as_string(hide_password=True)
    if json_:
        print_json(report.as_dict())
        return
    typer.echo(f"database {report.database} (schema {report.schema})")
    sources = ", ".join(f"{k}: {v}" for k, v in sorted(report.records_by_source.items())) or "none"
    typer.echo(f"papers {report.papers} (records by source: {sources})")
    print_table("Stages", ["stage", "outcome", "reason", "papers"],
                [(r["stage"], r["outcome"], r["reason"] or "", r["count"]) for r in report.stages])
    if report.queue:
        print_table("Work queue", ["stage", "state", "items"], [(q["stage"], q["state"], q["count"]) for q in report.queue])
    if report.held:
        print_table("Claimed items", ["stage", "held by workers", "workers", "lease ends by", "abandoned"],
                    [(h["stage"], h["items"], h["workers"], _when(h["until"]), h["abandoned"]) for h in report.held])
    if report.agreement:
        print_table("Reviewer agreement", ["question", "alpha", "kappa (Cohen; mean of pairs)", "items (2+ reviewers)", "annotators"],
                    [(a["question"], "n/a" if a["alpha"] is None else f"{a['alpha']:.3f}",
                      "n/a" if a["kappa"] is None else f"{a['kappa']:.3f}", a["units"], a["annotators"])
                     for a in report.agreement])
    if report.human_evaluation:
        _print_human_evaluation(report.human_evaluation)
    print_table("Last runs", ["id", "command", "status", "started", "summary"],
                [(r["id"], r["command"], r["status"], r["started_at"], r["summary"] or "") for r in report.runs])
    typer.echo(f"next: {report.next}")


def _print_human_evaluation(h: dict[str, Any]) -> None:
    """A short block; `review evaluate human` gives the whole picture."""
    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    print_table(f"Automated labels against human answers ({h['rule_set']} {h['rules_sha256'][:12]}; "
                "review evaluate human)", ["reviewed", "scored", "left out", "P0 precision", "P0 recall",
                                           "P1 listed recall", "P2 exact", "P3 exact", "P4 exact"],
                [(h["reviewed"], h["scored"], h["left_out"], fmt(h["P0.precision"]), fmt(h["P0.recall"]),
                  fmt(h["P1.listed.recall"]), fmt(h["P2.exact"]), fmt(h["P3.exact"]), fmt(h["P4.exact"]))])


def _when(iso: str | None) -> str:
    return iso[:16].replace("T", " ") + " UTC" if iso else ""
