"""`review pull`: reviewers' annotations into human decisions, with agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, print_table, summary


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@app.command()
def pull(
    ctx: typer.Context,
    project: Optional[str] = typer.Option(None, "--project", help="Only the project with this title."),
    from_file: Optional[Path] = typer.Option(None, "--from-file", help="Import a Label Studio JSON export instead of calling the server."),
    origin: Optional[str] = typer.Option(None, "--origin", help="Name of the file source (default file:<stem>); reuse it for later exports."),
    json_: JsonOpt = False,
) -> None:
    """Read all annotations (new, updated, deleted) into human decisions and resolve them.

    Several reviewers are resolved by majority; ties are marked for adjudication (queue them
    with `review queue papers --select disputed`). Prints the agreement per question
    (Krippendorff's alpha; Cohen's kappa for two reviewers) and writes it to
    exports/human_agreement.json.

    Example:

    \b
        review pull
        review pull --from-file annotations/export-2026-11-22.json --origin team-b
    """
    from review.labelstudio.offline import import_annotations
    from review.labelstudio.pull import run_pull

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    if from_file is not None:
        result = import_annotations(db, app_ctx.settings, from_file, origin=origin)
    else:
        result = run_pull(db, app_ctx.settings, project=project)
    if json_:
        print_json(result.as_dict())
    else:
        if result.agreement:
            print_table("Agreement per question", ["question", "alpha", "kappa", "items (2+ reviewers)", "annotators",
                                                   "observed"],
                        [(a["question"], _fmt(a["alpha"]), _fmt(a["kappa"]), a["units"], a["annotators"],
                          _fmt(a["observed_agreement"])) for a in result.agreement])
        for failure in result.failed_projects:
            typer.echo(f"failed: {failure}", err=True)
    summary(result.summary())
    if result.failed_projects:
        raise typer.Exit(7)
