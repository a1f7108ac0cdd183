"""`review check`: one paper (PDF, .txt or .md) against a rule file."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, MetricOpt
from review.cli.output import print_json, print_table, summary

IRREPRODUCIBLE_EXIT = 1


@app.command()
def check(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="The paper: a PDF, a .txt or a .md file."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Rule file (default: label.rules, else the metric's rule file)."),
    metric: MetricOpt = None,
    option: Optional[List[str]] = typer.Option(None, "--option", help="Switch on a named option of the rule file (repeatable)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="PDF text extractor (default from the settings)."),
    json_: JsonOpt = False,
) -> None:
    """Check one paper: what the rules find and miss, with evidence, and whether R1/R2 hold.

    Exits 1 when the paper computes the metric but neither R1 (a package plus its
    parameters) nor R2 (a no-configuration package) holds; 8 when the file cannot be read;
    5 when the rule file is bad. Needs no database.

    Example:

    \b
        review check paper.pdf
        review check paper.txt --metric bleu --json
        review check paper.pdf --rules patterns/rouge/rouge-precise.toml
    """
    from review.check import check_file
    from review.rules.stage import resolve_rules

    context.get(ctx).use_metric(metric)
    settings = context.get(ctx).settings
    ruleset = resolve_rules(settings, rules, option or ())
    result = check_file(path, ruleset, backend=backend or settings.extract.backend,
                        regex_timeout=settings.label.regex_timeout,
                        timeout=settings.extract.timeout, memory_mb=settings.extract.memory_mb)
    if json_:
        print_json(result.as_dict())
    else:
        _print(result)
    verdict = ("irreproducible from the text (neither R1 nor R2)" if result.irreproducible
               else "does not compute the metric" if not result.computes
               else "R1 holds" if result.r1 else "R2 holds")
    summary(f"{path}: {verdict} [{ruleset.name} {ruleset.sha256[:12]}]")
    if result.irreproducible:
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
