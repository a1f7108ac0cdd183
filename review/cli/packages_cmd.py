"""`review packages test|sensitivity|check`: metric packages measured against the reference."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt, LimitOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.errors import InputFileError

packages_app = typer.Typer(help="Metric packages against the reference: correctness (Table 2), "
                           "configuration sensitivity (Table 1), the catalog checked.", no_args_is_help=True)
app.add_typer(packages_app, name="packages")

SpecimenOpt = typer.Option(None, "--specimen", help="JSONL of pairs: reference, hypothesis (text or a list of "
                           "sentences), optional id. Default: the database's papers (abstract vs Lead-3 of the body).")


def _setup(ctx: typer.Context, metric: Optional[str]):
    from review.metric import metric_of
    from review.packages.harness import load_harness
    from review.packages.venvs import default_cache

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    m = metric_of(app_ctx.settings)
    h = load_harness(m.folder, m.id)
    venv_dir = app_ctx.settings.packages.venv_dir
    cache = app_ctx.settings.resolve(venv_dir) if venv_dir else default_cache()
    return app_ctx, m, h, cache


def _pairs(app_ctx: context.AppContext, specimen: Optional[Path], limit: Optional[int]):
    from review.packages import specimen as spec

    if specimen is not None:
        pairs = spec.read_jsonl(specimen)
    else:
        pairs = spec.from_database(app_ctx.database(), app_ctx.settings.packages.text_source)
        if not pairs:
            raise InputFileError("no paper in the database has an abstract and a body to pair",
                                 hint="extract texts first (review extract), or pass --specimen FILE.jsonl")
    return pairs[:limit] if limit else pairs


@packages_app.command("test")
def test(ctx: typer.Context, metric: MetricOpt = None, specimen: Optional[Path] = SpecimenOpt,
         package: Optional[list[str]] = typer.Option(None, "--package", help="Only this candidate (NAME), or another "
                                                     "release of it (NAME==VERSION, installed unlocked); repeatable."),
         ci_only: bool = typer.Option(False, "--ci-only", help="Only the candidates marked `ci` in harness.toml."),
         limit: LimitOpt = None, json_: JsonOpt = False) -> None:
    """Table 2: each candidate package against the reference, per version, on one specimen.

    Counts the outputs (R1, R2, RL x P/R/F, plain and stemmed) differing from the
    reference beyond the metric's tolerance, and the difference of the averaged scores;
    a package that fails to install, crashes or hangs is reported with its reason.
    Results go to <exports>/packages-<metric>.json and packages-<metric>-test.csv.

    Example:

    \b
        review packages test --metric rouge --specimen pairs.jsonl
        review packages test --package rouge-score==0.1.1 --limit 200
    """
    from review.packages.service import run_test

    app_ctx, m, h, cache = _setup(ctx, metric)
    pairs = _pairs(app_ctx, specimen, limit)
    result = run_test(h, pairs, cache, app_ctx.settings.resolve(app_ctx.settings.exports_dir), package or [], ci_only)
    if json_:
        print_json(result)
    else:
        print_table(f"{m.name} packages vs {h.reference['label']} ({len(pairs)} pairs)",
                    ["package", "version", "outputs differing", "pairs differing", "max |mean diff| (points)", "status"],
                    [(r["package"], r["version"], f"{100 * r['share_differing']:.1f}%" if "share_differing" in r else "-",
                      r.get("pairs_differing", "-"), r.get("max_mean_diff", "-"), r["reason"] or r["status"])
                     for r in result["rows"]])
        typer.echo(f"signature: {result['signature']}")
    failed = sum(1 for r in result["rows"] if r["reason"])
    summary(f"packages test: {len(result['rows'])} package(s) measured on {len(pairs)} pairs, {failed} failed; "
            f"written {result['json']}")


@packages_app.command("sensitivity")
def sensitivity(ctx: typer.Context, metric: MetricOpt = None, specimen: Optional[Path] = SpecimenOpt,
                limit: LimitOpt = None, json_: JsonOpt = False) -> None:
    """Table 1: the reference under the paper's configurations, as deltas from the baseline (points).

    Ends with the "Rogue-3" demonstration: the same outputs under the most flattering
    configuration, plus the most flattering package measured on the same specimen.

    Example:

    \b
        review packages sensitivity --metric rouge --specimen pairs.jsonl
    """
    from review.packages.service import run_table1

    app_ctx, m, h, cache = _setup(ctx, metric)
    pairs = _pairs(app_ctx, specimen, limit)
    result = run_table1(h, pairs, cache, app_ctx.settings.resolve(app_ctx.settings.exports_dir))
    if json_:
        print_json(result)
    else:
        cols = list(h.scores)
        print_table(f"{m.name} configuration sensitivity on {h.reference['label']} ({len(pairs)} pairs)",
                    ["configuration", "measure", *[f"{c} mean" for c in cols], *[f"{c} delta" for c in cols],
                     "published delta (R1)"],
                    [(r["name"], r["measure"], *[f"{r['means'][c]:.2f}" for c in cols],
                      *[f"{r['deltas'][c]:+.2f}" for c in cols],
                      "" if r["published"] is None else f"{r['published']:+.2f}") for r in result["rows"]])
        for score, r in result["rogue3"].items():
            extra = f"; with {r['package']} on top: {r['with_package']:.2f}" if "package" in r else ""
            typer.echo(f"Rogue-3 {score}: baseline {r['baseline']:.2f}, most flattering configuration "
                       f"'{r['configuration']}' {r['score']:.2f}{extra}")
        typer.echo(f"signature: {result['signature']}")
    summary(f"packages sensitivity: {len(result['rows'])} configuration(s) on {len(pairs)} pairs; written {result['json']}")


@packages_app.command("check")
def check(ctx: typer.Context, metric: MetricOpt = None, json_: JsonOpt = False) -> None:
    """Compare the catalog with the newest measured results (review packages test).

    Names every disagreement: a label's software_error, each per-mode (and per-variant)
    claim of the catalog, and each measured citation the newest results contradict or
    supersede (docs/packages.md).

    Example:

    \b
        review packages check --metric rouge
    """
    from review.packages import results

    app_ctx, m, h, _ = _setup(ctx, metric)
    path = app_ctx.settings.resolve(app_ctx.settings.exports_dir) / results.RESULTS.format(metric=m.id)
    rows = results.check(m.packages, path)
    parted = results.disagreements(m.packages, path)
    if not rows:
        raise InputFileError("no measured results to compare", item=str(path), hint="run `review packages test` first")
    claimed = {d["package"] for d in parted if d["kind"] == "claim"}
    if json_:
        print_json({"rows": rows, "disagreements": parted})
    else:
        print_table(f"{m.name} catalog vs measurement", ["package", "label", "version", "catalog", "measured",
                                                          "outputs differing", "agree"],
                    [(r["package"], r["label"], r["version"], r["catalog"], r["measured"],
                      "-" if r["share_differing"] is None else f"{100 * r['share_differing']:.1f}%",
                      "NO (claim)" if r["package"] in claimed else {True: "yes", False: "NO", None: "?"}[r["agree"]])
                     for r in rows])
        for d in parted:
            typer.echo(f"disagreement ({d['kind']}): {d['text']}")
    summary(f"packages check: {len(rows)} measured, {len(parted)} disagreement(s) with the catalog"
            + (": " + ", ".join(f"{d['label']} ({d['package']}, {d['kind']})" for d in parted) if parted else ""))
