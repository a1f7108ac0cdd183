"""`review show ID`: one paper, everything stored about it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, print_table


@app.command()
def show(
    ctx: typer.Context,
    paper: str = typer.Argument(..., help="The paper's public id: Anthology id or ident, DOI, or arXiv id."),
    evidence: int = typer.Option(40, "--evidence", min=0, help="Evidence rows shown per rule set."),
    json_: JsonOpt = False,
) -> None:
    """One paper: its labels per rule set with evidence and page numbers, human answers, computed verdict and history.

    Reads only; a database that does not exist is an error (exit 4), an unknown id exit 8.

    Example:

    \b
        review show D19-1620
        review show 10.18653/v1/D19-1620 --json
    """
    from review.show import show_paper

    app_ctx = context.get(ctx)
    db = app_ctx.database(read_only=True)
    with db.session() as s:
        view = show_paper(s, paper, evidence=evidence, pdf_dirs=_pdf_dirs(app_ctx.settings.data_dir, db))
        s.rollback()  # show reads only
    if json_:
        print_json(view.as_dict())
        return
    _print(view)


def _pdf_dirs(data_dir: Path, db: Any) -> tuple[Path, ...]:
    """The data folder, and the SQLite file's folder (a survey's own store sits beside its database)."""
    dirs = [Path(data_dir)]
    if db.url.get_backend_name() == "sqlite" and db.url.database:
        dirs.append(Path(db.url.database).parent)
    return tuple(dirs)


def _print(v: Any) -> None:
    p = v.paper
    typer.echo(f"{p['ident']}: {p['title']} ({p['venue'] or p['source']} {p['year'] or ''})".rstrip())
    for key in ("doi", "arxiv_id", "url", "pdf_url"):
        if p[key]:
            typer.echo(f"  {key}: {p[key]}")
    if p["former_idents"]:
        typer.echo(f"  formerly: {', '.join(p['former_idents'])}")
    d = v.document
    typer.echo("PDF: " + ("none" if d is None else f"{d['outcome']}" + (f" ({d['reason']})" if d["reason"] else "")
                          + (f" {d['path']}" if d["path"] else "")))
    for t in v.texts:
        typer.echo(f"text ({t['source']}): {t['outcome']}" + (f" ({t['reason']})" if t["reason"] else "")
                   + (f", {t['chars']} characters, {t['pages']} pages, {t['extractor']}" if t["outcome"] == "ok" else ""))
    for lb in v.labels:
        typer.echo(f"labels by {lb['rule_set']} ({lb['rules_sha256'][:12]}): computes {'yes' if lb['computes'] else 'no'}; "
                   f"packages {', '.join(lb['packages']) or '-'}; parameters {', '.join(map(repr, lb['params'])) or '-'}; "
                   f"measures {', '.join(lb['variants']) or '-'}; protocol {', '.join(lb['protocol']) or '-'}; "
                   f"code links {', '.join(lb['code_urls']) or '-'}")
        if lb["evidence"]:
            more = lb["evidence_total"] - len(lb["evidence"])
            print_table(f"Evidence ({lb['rule_set']})" + (f", {more} more not shown" if more > 0 else ""),
                        ["label", "rule", "page", "snippet"],
                        [(e["label"], e["rule"], e["page"] or "", e["snippet"]) for e in lb["evidence"]])
    if v.human:
        print_table("Human answers", ["question", "answer", "annotator", "when", "from"],
                    [(h["question"], h["answer"], h["annotator"], str(h["annotated_at"])[:16],
                      h["origin"] + (" (withdrawn)" if h["withdrawn"] else "")) for h in v.human])
    else:
        typer.echo("human answers: none")
    c = v.computed
    if c is not None:
        typer.echo(f"computed: R1 {c['r1']}, R2 {c['r2']}, R3 {c['r3']}, reproducible {c['reproducible']}, "
                   f"software error {c['software_error']} (labels: {c['label_source']})")
    for cb in v.codebases:
        typer.echo(f"codebase {cb['url']}: lookup {cb['lookup'] or '-'}, scan {cb['scan'] or '-'}"
                   + (f" ({cb['scan_reason']})" if cb["scan_reason"] else "")
                   + (f", packages {', '.join(cb['packages'])}" if cb["packages"] else ""))
    if v.history:
        print_table("History", ["run", "command", "status", "started"],
                    [(h["run"], h["command"], h["status"], str(h["started_at"])[:16]) for h in v.history])
