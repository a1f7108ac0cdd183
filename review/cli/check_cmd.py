"""`review check`: one paper (PDF, .txt or .md) against a rule file."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.errors import InputFileError, ReviewError

IRREPRODUCIBLE_EXIT = 1


@app.command()
def check(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="The paper: a PDF, a .txt or a .md file; or a folder (every PDF in it)."),
    rules: Optional[str] = typer.Option(None, "--rules", help="Rule file: a path, or a name (a metric folder's rule file without .toml). Default: label.rules, else the metric's check_rules file, the one that holds on unseen papers."),
    metric: MetricOpt = None,
    option: Optional[List[str]] = typer.Option(None, "--option", help="Switch on a named option of the rule file (repeatable)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="PDF text extractor (default from the settings)."),
    json_: JsonOpt = False,
) -> None:
    """Check one paper (or every PDF of a folder): what the rules find and miss, with evidence, and whether R1/R2 hold.

    Exits 1 when a paper computes the metric but neither R1 (a package plus its
    parameters) nor R2 (a no-configuration package) holds; 8 when a file cannot be read
    (for a folder: when any cannot, the others are still checked); 5 when the rule file
    is bad. With --json an error is a JSON object on stdout too. Needs no database.

    Example:

    \b
        review check paper.pdf
        review check papers/ --json
        review check paper.txt --metric bleu --json
        review check paper.pdf --rules rouge     # the faithful Table 5 file
    """
    try:
        _check(ctx, path, rules, metric, option, backend, json_)
    except ReviewError as exc:
        if not json_:
            raise
        print_json({"source": str(path), "error": str(exc), "hint": exc.hint, "exit_code": exc.exit_code})
        raise typer.Exit(exc.exit_code) from None


def _check(ctx: typer.Context, path: Path, rules: str | None, metric: str | None, option: list[str] | None,
           backend: str | None, json_: bool) -> None:
    from review.check import check_file, check_folder
    from review.rules.stage import resolve_rules

    context.get(ctx).use_metric(metric)
    settings = context.get(ctx).settings
    ruleset = resolve_rules(settings, rules, option or (), default="check_rules")
    extract = {"backend": backend or settings.extract.backend, "regex_timeout": settings.label.regex_timeout,
               "timeout": settings.extract.timeout, "memory_mb": settings.extract.memory_mb}
    if path.is_dir():
        _report_folder(path, check_folder(path, ruleset, **extract), ruleset, json_)
        return
    result = check_file(path, ruleset, **extract)
    if json_:
        print_json(result.as_dict())
    else:
        _print(result)
    summary(f"{path}: {_verdict(result)} [{ruleset.name} {ruleset.sha256[:12]}]")
    if result.irreproducible:
        raise typer.Exit(IRREPRODUCIBLE_EXIT)


def _verdict(result) -> str:  # type: ignore[no-untyped-def]
    return ("irreproducible from the text (neither R1 nor R2)" if result.irreproducible
            else "does not compute the metric" if not result.computes
            else "R1 holds" if result.r1 else "R2 holds")


def _report_folder(folder: Path, items, ruleset, json_: bool) -> None:  # type: ignore[no-untyped-def]
    """One row per PDF, then counts; exit 8 when a file could not be read, else 1 when a
    paper is irreproducible."""
    unreadable = [i for i in items if i.result is None]
    irreproducible = [i for i in items if i.result is not None and i.result.irreproducible]
    if json_:
        print_json({"folder": str(folder), "rules": ruleset.name, "rules_sha256": ruleset.sha256,
                    "papers": [i.as_dict() for i in items],
                    "counts": {"files": len(items), "unreadable": len(unreadable),
                               "irreproducible": len(irreproducible)}})
    else:
        print_table(f"{folder}: {len(items)} PDF(s), rules {ruleset.name} ({ruleset.sha256[:12]})",
                    ["file", "verdict", "packages", "parameters", "missing"],
                    [(i.path.name, _verdict(i.result), ", ".join(i.result.packages) or "-",
                      ", ".join(repr(p) for p in i.result.params) or "-", ", ".join(i.result.missing) or "-")
                     if i.result is not None else (i.path.name, f"not checked: {i.error}", "", "", i.hint)
                     for i in items])
    summary(f"{folder}: {len(items)} PDF(s) checked, {len(irreproducible)} irreproducible, "
            f"{len(unreadable)} unreadable [{ruleset.name} {ruleset.sha256[:12]}]")
    if unreadable:
        raise typer.Exit(InputFileError.exit_code)
    if irreproducible:
        raise typer.Exit(IRREPRODUCIBLE_EXIT)


def _print(r) -> None:  # type: ignore[no-untyped-def]
    m = r.metric
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    typer.echo(f"{r.source}: {r.chars} characters, rules {r.rules} ({r.rules_sha256[:12]})")
    typer.echo(f"mentions {m}: {yes(r.prelim)}    computes {m}: {yes(r.computes)}")
    for name, values in (("packages", r.packages), ("parameters", r.params), ("measures", r.variants),
                         ("protocol", r.protocol), ("code links", r.code_urls)):
        typer.echo(f"{name:11} {', '.join(repr(v) if name == 'parameters' else v for v in values) or '-'}")
    typer.echo(f"R1 (package + parameters): {yes(r.r1)}    R2 (no-configuration package): {yes(r.r2)}")
    if r.missing:
        typer.echo("missing: " + ", ".join(r.missing))
    if r.timed_out:
        typer.echo("timed out (left out, see label.regex_timeout): " + ", ".join(r.timed_out))
    shown = [e for e in r.evidence if e.kind != "flag"] + [e for e in r.evidence if e.kind == "flag"][:4]
    if shown:
        print_table("Evidence", ["label", "rule", "chars", "snippet"],
                    [(e.label, e.rule, f"{e.start}-{e.end}", e.snippet + (f" [attached to {e.attached}]"
                                                                             if e.attached else "")) for e in shown])
    if r.rejected:
        print_table("Rejected (do not count)", ["label", "rule", "chars", "reason", "snippet"],
                    [(e.label, e.rule, f"{e.start}-{e.end}", e.reason, e.snippet) for e in r.rejected])
