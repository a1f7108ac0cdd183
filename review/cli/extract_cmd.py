"""`review extract`: turn downloaded PDFs into normalized text in the database."""

from __future__ import annotations

from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, LimitOpt, WorkersOpt
from review.cli.output import print_json, summary
from review.errors import ItemsFailed
from review.extract.stage import run_extract
from review.runs import record_run


@app.command()
def extract(
    ctx: typer.Context,
    limit: LimitOpt = None,
    workers: WorkersOpt = None,
    backend: Optional[str] = typer.Option(None, "--backend", help="pypdfium2 (fast) or pdfplumber (default from settings)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try again the PDFs whose extraction failed."),
    redo: bool = typer.Option(False, "--redo", help="Extract again every PDF (e.g. after changing the backend)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=1, help="Seconds one PDF may take (default from settings)."),
    memory_mb: Optional[int] = typer.Option(None, "--memory-mb", min=64, help="Memory (MB) a worker may use beyond its start size."),
    json_: JsonOpt = False,
) -> None:
    """Extract the text of every downloaded PDF into the database, normalized.

    Each paper gets one text row: ok (text, pages, extractor and version) or failed
    with a reason (encrypted, corrupt, no_text, timeout, memory, crash, missing). Each
    PDF runs in a worker process under a time limit and a memory cap; reruns resume.
    Exit code 1 if any PDF failed.

    Example:

    \b
        review extract
        review extract --backend pdfplumber --workers 2 --limit 100
        review extract --retry-failed --timeout 600
    """
    app_ctx = context.get(ctx)
    db = app_ctx.database()
    arguments = {"limit": limit, "workers": workers, "backend": backend, "retry_failed": retry_failed,
                 "redo": redo, "timeout": timeout, "memory_mb": memory_mb}
    with record_run(db, "extract", arguments) as run:
        report = run_extract(db, app_ctx.settings, run=run, limit=limit, workers=workers, backend=backend,
                             retry_failed=retry_failed, redo=redo, timeout=timeout, memory_mb=memory_mb)
    if json_:
        print_json(report.as_dict())
    summary(report.summary)
    if report.failed:
        raise ItemsFailed(f"{report.failed} PDF(s) could not be extracted; reasons are recorded per paper",
                          hint="see `review status`; rerun with --retry-failed (and a larger --timeout/--memory-mb)")
