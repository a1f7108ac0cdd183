"""`review download`: fetch the papers' PDFs into the content-addressed store."""

from __future__ import annotations

from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, LimitOpt, WorkersOpt
from review.cli.output import print_json, summary
from review.download import run_download
from review.errors import ItemsFailed
from review.runs import record_run


@app.command()
def download(
    ctx: typer.Context,
    limit: LimitOpt = None,
    venue: Optional[List[str]] = typer.Option(None, "--venue", help="Only papers of this venue id (repeatable)."),
    year: Optional[List[int]] = typer.Option(None, "--year", help="Only papers of this year (repeatable)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try again the papers whose download failed."),
    refresh: bool = typer.Option(False, "--refresh", help="Re-check downloaded PDFs with conditional requests."),
    workers: WorkersOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Download the PDFs of harvested papers, verified, into <data_dir>/pdfs.

    Each paper ends with a Document row: ok (path and sha256) or failed with a reason
    (http_404, not_pdf, checksum_mismatch, too_large, timeout, truncated,
    gave_up_after_retries, ...). Reruns skip finished papers; exit code 1 if any failed.

    Example:

    \b
        review download --venue acl --year 2020 --limit 100
        review download --retry-failed
    """
    app_ctx = context.get(ctx)
    db = app_ctx.database()
    arguments = {"limit": limit, "venue": venue or [], "year": year or [], "retry_failed": retry_failed,
                 "refresh": refresh, "workers": workers}
    with record_run(db, "download", arguments) as run:
        report = run_download(db, app_ctx.settings, run=run, limit=limit, venues=venue, years=year,
                              retry_failed=retry_failed, refresh=refresh, workers=workers)
    if json_:
        print_json(report.as_dict())
    summary(report.summary)
    if report.failed:
        raise ItemsFailed(f"{report.failed} PDF(s) failed; reasons are recorded per paper",
                          hint="see `review status`; rerun with --retry-failed")
