"""`review label`: rule files -> automated labels with evidence."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import DryRunOpt, JsonOpt, LimitOpt, MetricOpt
from review.cli.output import print_json, print_table, summary
from review.runs import record_run


@app.command()
def label(
    ctx: typer.Context,
    rules: Optional[str] = typer.Option(None, "--rules", help="Rule file: a path, or a name (a metric folder's rule file without .toml). Default: label.rules, else the metric's rule file."),
    option: Optional[List[str]] = typer.Option(None, "--option", help="Switch on a named option of the rule file (repeatable)."),
    relabel: bool = typer.Option(False, "--relabel", help="Label every text again, not only new or re-extracted ones."),
    diff: bool = typer.Option(False, "--diff", help="After labeling, list the papers whose labels changed since the previous version of this rule file."),
    against: Optional[str] = typer.Option(None, "--against", help="With --diff: compare with this stored rule set (name, sha256 prefix or id)."),
    list_: bool = typer.Option(False, "--list", help="List the stored rule-set versions and exit."),
    drop: Optional[str] = typer.Option(None, "--drop", help="Delete a stored rule-set version (sha256 prefix or id) with its findings and labels, and exit."),
    limit: LimitOpt = None,
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
    metric: MetricOpt = None,
) -> None:
    """Label every extracted text with a rule file and store the evidence.

    Each match becomes a finding (rule, label, character span, snippet); each paper gets
    automated labels (prelim, computes, packages, params, protocol, variants, code URLs)
    under the rule file's sha256. A changed rule file is a new version: its labels live
    beside the old ones, and --diff lists the papers whose labels changed.

    Example:

    \b
        review label
        review label --rules patterns/rouge/rouge-precise.toml --diff --against 0a7eb417a8ad
        review label --metric bleu
        review label --list
    """
    from review.rules.stage import (diff_labels, drop_rule_set, find_rule_set, list_rule_sets, previous_rule_set,
                                    resolve_rules, run_label)
    from review.db.models import RuleSet as RuleSetRow

    app_ctx = context.get(ctx)
    app_ctx.use_metric(metric)
    db = app_ctx.database()
    if list_:
        with db.session() as s:
            rows = list_rule_sets(s)
        if json_:
            print_json({"rule_sets": rows})
        else:
            print_table("Rule sets", ["id", "name", "version", "sha256", "papers", "path"],
                        [(r["id"], r["name"], r["version"], r["sha256"][:12], r["papers"], r["path"]) for r in rows])
        return
    if drop:
        with record_run(db, "label --drop", {"drop": drop}) as run:
            with db.session() as s:
                info = drop_rule_set(s, drop)
            run.counts.update({"papers": info["papers"], "findings": info["findings"]})
            run.summary = f"dropped rule set {info['name']} {info['sha256'][:12]}"
        if json_:
            print_json(info)
        summary(f"dropped rule set {info['name']} ({info['sha256'][:12]}): {info['papers']} paper labels, "
                f"{info['findings']} findings; human decisions untouched")
        return
    ruleset = resolve_rules(app_ctx.settings, rules, option or ())  # a bad file stops here, before any text
    if dry_run:
        result = run_label(db, app_ctx.settings, ruleset=ruleset, limit=limit, relabel=relabel, dry_run=True)
        if json_:
            print_json(result.as_dict())
        summary(result.summary())
        return
    against_id = None
    if diff and against:  # named before labelling: a wrong name must not leave new labels behind an error
        with db.session() as s:
            against_id = find_rule_set(s, against).id
    args = {"rules": str(ruleset.path), "options": list(ruleset.options), "relabel": relabel, "limit": limit,
            "diff": diff, "against": against}
    with record_run(db, "label", args) as run:
        result = run_label(db, app_ctx.settings, ruleset=ruleset, run=run, limit=limit, relabel=relabel)
    out = result.as_dict()
    changes = None
    if diff:
        with db.session() as s:
            other = s.get(RuleSetRow, against_id) if against_id else previous_rule_set(s, result.rule_set_id or 0)
            if other is None:
                out["diff"] = {"against": None, "changed": []}
                summary("no earlier version of this rule file has labels to compare with")
            else:
                changes = diff_labels(s, other.id, result.rule_set_id or 0)
                out["diff"] = {"against": other.sha256, "against_name": other.name,
                               "changed": [c.as_dict() for c in changes]}
    if json_:
        print_json(out)
    elif changes is not None:
        rows = [(c.ident, name, _fmt(v["old"]), _fmt(v["new"])) for c in changes for name, v in c.changes.items()]
        print_table(f"Labels changed against {out['diff']['against'][:12]} ({len(changes)} papers)",
                    ["paper", "label", "old", "new"], rows)
    summary(result.summary() + (f"; {len(changes)} papers changed" if changes is not None else ""))
    if result.failed:
        raise typer.Exit(1)


def _fmt(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return "-" if value is None else str(value)
