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
    from_file: Optional[Path] = typer.Option(None, "--from-file", help="Import a Label Studio JSON export, or a filled task spreadsheet (.csv), instead of calling the server."),
    origin: Optional[str] = typer.Option(None, "--origin", help="Name of the file source (default file:<stem>); reuse it for later exports."),
    json_: JsonOpt = False,
) -> None:
    """Read all annotations (new, updated, deleted) into human decisions and resolve them.

    Several reviewers are resolved by strict majority; ties and "can't tell" are marked for
    adjudication (queue them with `review queue papers --select disputed`). Prints the
    agreement per question (Krippendorff's alpha; Cohen's kappa, the mean over reviewer
    pairs when more than two) and writes it, per pair, to exports/human_agreement.json.
    A project deleted in Label Studio is marked gone, the others are pulled, and the
    command exits 7.

    Example:

    \b
        review pull
        review pull --from-file annotations/export-2026-11-22.json --origin team-b
        review pull --from-file exports/tasks-ada.csv
    """
    from review.labelstudio.offline import import_annotations
    from review.labelstudio.pull import PullIncomplete, run_pull

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    incomplete: PullIncomplete | None = None
    if from_file is not None:
        result = import_annotations(db, app_ctx.settings, from_file, origin=origin)
    else:
        try:
            result = run_pull(db, app_ctx.settings, project=project)
        except PullIncomplete as exc:  # the rest was pulled: show it, then fail
            result, incomplete = exc.result, exc
    if json_:
        print_json(result.as_dict())
    else:
        if result.agreement:
            print_table("Agreement per question", ["question", "alpha", "kappa", "kappa is", "items (2+ reviewers)",
                                                   "annotators", "observed", "can't tell"],
                        [(a["question"], _fmt(a["alpha"]), _fmt(a["kappa"]), a["kappa_method"] or "n/a", a["units"],
                          a["annotators"], _fmt(a["observed_agreement"]), a["cant_tell"]) for a in result.agreement])
        for failure in result.failed_projects:
            typer.echo(f"failed: {failure}", err=True)
    summary(result.summary())
    if incomplete is not None:
        raise incomplete
