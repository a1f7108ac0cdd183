"""`review import pdfs|texts`: PDFs and full texts the user already has."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, LimitOpt
from review.cli.output import err_console, print_json, print_table, summary
from review.errors import InputFileError, ItemsFailed
from review.runs import record_run

import_app = typer.Typer(help="Import PDFs (folders, tar, zip) and full-text corpora (ACL OCL parquet, JSON Lines).",
                         no_args_is_help=True)
app.add_typer(import_app, name="import")


@import_app.command("pdfs")
def pdfs(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A folder of PDFs, a .tar / .tar.gz / .zip of them, or one PDF.")],
    create: Annotated[bool, typer.Option("--create", help="Make a record (title, authors, year from the PDF) for every PDF no harvested paper matches.")] = False,
    retry_unmatched: Annotated[bool, typer.Option("--retry-unmatched", help="Look again at files an earlier run left unmatched (e.g. after another harvest).")] = False,
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Import PDFs you already have into the store, as if downloaded, one outcome per file.

    Files are matched to harvested papers by the ACL Anthology id, DOI or arXiv id in
    their name, else by their sha256 / CRC32; checked like downloads (%PDF-, size cap,
    checksum, complete); archives are streamed, never unpacked. Outcomes: matched,
    created, duplicate, unmatched, corrupt, refused (--json lists every file). Reruns
    skip files already settled. Exit code 1 if a file was corrupt or refused.

    Example:

    \b
        review import pdfs ~/anthology/acl-anthology-pdfs.tar.gz
        review import pdfs ~/papers --create --json
    """
    from review.importer.pdfs import run_import_pdfs

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    arguments = {"path": str(path), "create": create, "retry_unmatched": retry_unmatched, "limit": limit}
    with record_run(db, "import pdfs", arguments) as run:
        report = run_import_pdfs(db, app_ctx.settings, path, create=create, retry_unmatched=retry_unmatched,
                                 run=run, limit=limit, list_files=json_)
    if json_:
        print_json(report.as_dict())
    summary(report.summary)
    not_pdf = report.reasons.get("refused:not_pdf", 0)
    if sum(report.counts.values()) == not_pdf and not report.already:
        raise InputFileError("no PDF files found" + (f" ({not_pdf} file(s) that are not PDFs)" if not_pdf else ""),
                             item=str(path), hint="give a folder of .pdf files, a .tar / .tar.gz / .zip of them, or one PDF")
    unmatched, matched = report.counts.get("unmatched", 0), report.counts.get("matched", 0)
    if unmatched and not create:
        err_console().print(f"hint: {unmatched} file(s) match no harvested paper{' (none matched)' if not matched else ''}; "
                            f"`review import pdfs {path} --create` makes a record for each from the PDF "
                            "(or harvest first, then --retry-unmatched)", markup=False)
    if report.failed:
        raise ItemsFailed(f"{report.failed} file(s) corrupt or refused; the reason is recorded per file",
                          hint="`review import pdfs PATH --json` lists every file with its outcome")


@import_app.command("texts")
def texts(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="ACL OCL's parquet (acl-publication-info.*.parquet) or JSON Lines of {\"ident\", \"text\"}.")],
    corpus_version: Annotated[Optional[str], typer.Option("--corpus-version", help="Version of the corpus, stored with every text (default: from the file).")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Name of this text source (default: acl-ocl-grobid for the OCL parquet, jsonl for JSON Lines).")] = None,
    fmt: Annotated[Optional[str], typer.Option("--format", help="ocl or jsonl (default: from the file name).")] = None,
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Import full texts from a corpus, beside the texts extracted from PDFs.

    Rows are matched to papers by their id (acl_id / ident), normalized exactly like
    extracted PDF text and stored with their source and corpus version; the parquet is
    read in batches (constant memory). Which text labels use when a paper has both is
    the label.text_source setting. Reruns skip texts already imported from the same
    corpus version.

    Example:

    \b
        review import texts acl-publication-info.74k.v2.parquet
        review import texts s2orc-subset.jsonl --source s2orc --corpus-version 2023-01
    """
    from review.importer.texts import run_import_texts

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    arguments = {"path": str(path), "corpus_version": corpus_version, "source": source, "format": fmt,
                 "limit": limit}
    with record_run(db, "import texts", arguments) as run:
        report = run_import_texts(db, app_ctx.settings, path, fmt=fmt, source=source,
                                  corpus_version=corpus_version, run=run, limit=limit)
    if json_:
        print_json(report.as_dict())
    else:
        print_table(None, ["outcome", "rows"], sorted(report.counts.items()))
    summary(report.summary)
