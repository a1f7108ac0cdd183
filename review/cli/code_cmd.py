"""`review code link|github|scan`: papers' codebases, their GitHub look-ups and the metric's packages."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import DryRunOpt, JsonOpt, LimitOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.errors import ItemsFailed

code_app = typer.Typer(help="Codebases: link papers to code, look them up on GitHub, infer the metric's packages.",
                       no_args_is_help=True)
app.add_typer(code_app, name="code")


@code_app.command("link")
def link(
    ctx: typer.Context,
    pwc: Optional[Path] = typer.Option(None, "--pwc", help="Papers With Code links dump (.json, .json.gz, .parquet); "
                                       "default: setting code.pwc_links."),
    source: Optional[list[str]] = typer.Option(None, "--source", help="Only these sources: anthology_pwccode, "
                                               "pwc_dump, paper_text (repeatable)."),
    pwc_papers: Optional[Path] = typer.Option(None, "--pwc-papers", help="Papers With Code papers-with-abstracts "
                                              "dump: the year and first author the title match checks."),
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Link papers to codebases from the Anthology, a Papers With Code dump and the papers' text.

    Dump records are matched by arXiv id, PDF URL, abstract page, ACL Anthology id and DOI
    first, then by title (checked against year and first author); --json lists the
    titles of the records that matched no paper.

    Example:

    \b
        review code link --pwc links-between-papers-and-code.json.gz
        review code link --pwc links-between-papers-and-code.json.gz --pwc-papers papers-with-abstracts.json.gz
        review code link --source paper_text --dry-run
    """
    from review.codebases.link import SOURCES, run_link

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    bad = [s for s in source or [] if s not in SOURCES]
    if bad:
        raise typer.BadParameter(f"unknown source {bad[0]!r} (choose from {', '.join(SOURCES)})", param_hint="--source")
    result = run_link(app_ctx.database(), app_ctx.settings, pwc_path=pwc, sources=source or SOURCES, dry_run=dry_run,
                      pwc_papers_path=pwc_papers)
    if json_:
        print_json({"run": result.run_id, "dry_run": dry_run, "counts": dict(sorted(result.counts.items())),
                    "pwc_unmatched_titles": result.unmatched_titles})
    summary(result.summary())


@code_app.command("github")
def github(
    ctx: typer.Context,
    limit: LimitOpt = None,
    refresh: bool = typer.Option(False, "--refresh", help="Look up again even when the cached result is recent."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Retry codebases whose look-up failed."),
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Look each GitHub codebase up (exists, renamed, deleted, stars, ...) and search it for the
    metric's term (code.search_query, else the code catalog's `prelim`).

    The token comes from the environment variable named by code.github_token_env
    (GITHUB_TOKEN); without one, look-ups run but code search is skipped.

    Example:

    \b
        GITHUB_TOKEN=... review code github
        review code github --limit 50 --json
    """
    from review.codebases.github import run_github

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    result = run_github(app_ctx.database(), app_ctx.settings, limit=limit, refresh=refresh, retry_failed=retry_failed)
    if json_:
        print_json({"run": result.run_id, "counts": dict(sorted(result.counts.items())),
                    "calls": dict(result.calls), "stopped": result.stopped})
    summary(result.summary())
    if result.counts["error"]:
        raise ItemsFailed(f"{result.counts['error']} look-ups failed", hint="see `review status`; rerun with --retry-failed")


@code_app.command("scan")
def scan(
    ctx: typer.Context,
    target: Optional[str] = typer.Argument(None, help="One local directory, archive or repository URL to scan "
                                           "(no database); without it, every linked codebase is scanned."),
    limit: LimitOpt = None,
    rescan: bool = typer.Option(False, "--rescan", help="Scan again codebases scanned before."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Scan again codebases whose scan failed."),
    only_prelim: bool = typer.Option(False, "--only-prelim", help="Only codebases where GitHub search found the term."),
    refresh: bool = typer.Option(False, "--refresh", help="Clone again instead of reusing the clone cache."),
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Infer which of the metric's packages produce a codebase's scores (C1), which it merely carries, and C2.

    Reads, never runs, the code: dependency files, README commands, shell scripts,
    notebooks and Python (followed from the entry points to each use). Each piece of
    evidence has a role (evaluation, training, unreached, declared, vendored, docs,
    commented) and the reason for it; the C2 verdict names each failed condition.

    Example:

    \b
        review code scan ./my-summarizer
        review code scan ./my-summarizer --json
        review code scan https://github.com/owner/name --json
        review code scan --limit 100
        review code scan ./my-translator --metric bleu --json
    """
    from review.codebases.catalog import load_catalog
    from review.codebases.runner import run_scan, scan_target

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    if target is not None:
        report = scan_target(app_ctx.settings, target, refresh=refresh)
        if json_:
            print_json(report.as_dict())
        else:
            _print_report(report)
        term = load_catalog(app_ctx.settings.code.catalog or None, app_ctx.settings).prelim
        summary(f"packages used: {', '.join(report.packages_used) or 'none'}; present: "
                f"{', '.join(report.packages_present) or 'none'}; C2: {report.verdict}; mentions {term!r}: "
                f"{'yes' if report.prelim else 'no'}; anti-features: {', '.join(report.anti_feature_names) or 'none'}")
        return
    result = run_scan(app_ctx.database(), app_ctx.settings, limit=limit, rescan=rescan, retry_failed=retry_failed,
                      only_prelim=only_prelim, refresh_clones=refresh)
    if json_:
        print_json({"run": result.run_id, "counts": dict(sorted(result.counts.items())),
                    "packages": dict(result.packages.most_common()), "c2": dict(sorted(result.verdicts.items()))})
    summary(result.summary())
    failed = sum(v for k, v in result.counts.items() if k not in ("ok", "skipped_deleted"))
    if failed:
        raise ItemsFailed(f"{failed} codebases could not be scanned", hint="see `review status`; rerun with --retry-failed")


def _print_report(report) -> None:  # type: ignore[no-untyped-def]
    """One scan for a person: the evidence with roles, the four C2 conditions, anti-features, limits."""
    lists = {p: "present" for p in report.packages_present}
    lists.update({p: "used" for p in report.packages_used})
    print_table(report.target, ["package", "list", "role", "file", "line", "source", "text", "reason"],
                [(e.package + (" (superseded)" if e.superseded else ""), lists.get(e.package, "-"), e.role, e.file,
                  e.line if e.cell is None else f"cell {e.cell}:{e.line}", e.source, e.text, e.reason)
                 for e in report.evidence])
    print_table(f"C2 (does the evaluation look reproducible?): {report.verdict}", ["condition", "holds", "why"],
                [(f"{c.number} {c.name}", "unknown" if c.holds is None else ("yes" if c.holds else "no"),
                  "; ".join(c.reasons) or "; ".join(str(r.get("reason", "")) for r in c.evidence[:2]))
                 for c in report.conditions])
    for reason in report.eval_reproducible_reason:
        typer.echo(f"C2 {report.verdict}: {reason}")
    for a in report.anti_features:
        typer.echo(f"anti-feature {a.feature}: {a.detail}" + (f" [{a.file}:{a.line}]" if a.file else ""))
    for limit in report.limits:
        typer.echo(f"limit: {limit}")
