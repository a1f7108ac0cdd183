"""`review survey`: every stage in order, resumable; `--sample` runs offline on a bundled corpus."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.errors import ItemsFailed
from review.survey import StageReport, run_sample_survey, run_survey


@app.command()
def survey(
    ctx: typer.Context,
    sample: bool = typer.Option(False, "--sample", help="Run offline on the metric's sample corpus (own database and exports folder)."),
    source: Optional[List[str]] = typer.Option(None, "--source", help="Harvest only these sources (acl, dblp); repeatable."),
    no_github: bool = typer.Option(False, "--no-github", help="Skip the GitHub look-ups."),
    human: str = typer.Option("auto", "--human", help="Human pass: auto (Label Studio if its key is set), offline (write import files), skip."),
    format_: Optional[str] = typer.Option(None, "--format", help="Dataset format: csv, jsonl or parquet."),
    out: Optional[Path] = typer.Option(None, "--out", help="Export folder (default: the exports_dir setting)."),
    time: Optional[str] = typer.Option(None, "--time", help="Time written in the export manifest."),
    pdfs: Optional[Path] = typer.Option(None, "--pdfs", help="Import these PDFs (folder, .tar, .tar.gz, .zip) before downloading."),
    texts: Optional[Path] = typer.Option(None, "--texts", help="Import these full texts (ACL OCL parquet, JSON Lines) before downloading."),
    plan: bool = typer.Option(False, "--plan", help="Only say what remains per stage and host, the least time the downloads take at the per-host rates, and what --pdfs/--texts would save."),
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Run every stage in order: harvest, download, extract, label, code link / github /
    scan, the human pass (queued and reported, not waited on), compute, export. Rerun it
    to resume where it stopped. Ends with the paths of the report and the figures.

    Example:

    \b
        review survey --sample
        review survey --sample --metric bleu
        review survey --source acl --no-github
        review survey --plan --pdfs ~/anthology-pdfs.tar.gz --texts acl-publication-info.74k.v2.parquet
    """
    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    if plan:
        _plan(app_ctx, pdfs, texts, json_)
        return

    def show(stage: StageReport) -> None:
        if not json_:
            typer.echo(f"[{stage.status:>7}] {stage.name}: {stage.summary}", err=True)

    if sample:
        result = run_sample_survey(app_ctx.settings, keep_database=bool(app_ctx.db_url), out_dir=out, fmt=format_,
                                   time_=time, on_stage=show)
    else:
        result = run_survey(app_ctx.database(), app_ctx.settings, sources=source or ("acl", "dblp"),
                            github=not no_github, human=human, out_dir=out, fmt=format_, time_=time, on_stage=show,
                            pdfs=pdfs, texts=texts)
    if json_:
        print_json(result.as_dict())
    else:
        print_table("Survey", ["stage", "status", "seconds", "summary"],
                    [(s.name, s.status, f"{s.seconds:.1f}", s.summary) for s in result.stages])
        typer.echo(f"database: {result.database}")
        if result.report:
            typer.echo(f"report:   {result.report}")
            typer.echo(f"dataset:  {result.dataset}")
            for fig in result.figures:
                typer.echo(f"figure:   {fig}")
        if result.human_file:
            typer.echo(f"human review tasks: {result.human_file.parent}")
    summary(result.summary())
    if result.failed:
        raise ItemsFailed(f"stages failed: {', '.join(result.failed)}", hint="see the messages above; rerun to resume")


def _plan(app_ctx: context.AppContext, pdfs: Optional[Path], texts: Optional[Path], json_: bool) -> None:
    from review.importer.plan import duration, plan_survey

    result = plan_survey(app_ctx.database(), app_ctx.settings, pdfs=pdfs, texts=texts)
    if json_:
        print_json(result.as_dict())
    else:
        print_table("Remaining per stage", ["stage", "remaining", "note"],
                    [(st["stage"], st["remaining"], st["note"]) for st in result.stages])
        imported = bool(pdfs)
        print_table("Downloads per host", ["host", "PDFs", "rate/s", "at least"] + (["in --pdfs", "then"] if imported else []),
                    [(h.host, h.pdfs, h.rate or "no limit", duration(h.seconds) if h.seconds is not None else "-")
                     + ((h.saved_by_import, duration(h.seconds_after_import) if h.seconds_after_import is not None else "-")
                        if imported else ()) for h in result.hosts])
        for kind, info in result.imports.items():
            typer.echo(f"--{kind}: " + ", ".join(f"{k} {v}" for k, v in info.items() if k not in ("path", "note") and v != "")
                       + (f" ({info['note']})" if info.get("note") else ""))
    summary(result.summary())
