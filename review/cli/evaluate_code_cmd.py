"""`review evaluate code`: how right the code scan's answers are, measured on a code gold file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from review.cli import context
from review.cli.evaluate_cmd import evaluate_app
from review.cli.options import JsonOpt
from review.cli.output import err_console, print_json, print_table, summary
from review.cli.thresholds import exit_below, parse_minimums


@evaluate_app.command("code")
def code(
    ctx: typer.Context,
    gold: Path = typer.Option(..., "--gold", help="Code gold file (JSON Lines, ../shared/spec/GOLD.md)."),
    root: Optional[Path] = typer.Option(None, "--root", help="Folder holding one owner+name checkout per repository "
                                        "(for lines without a 'path')."),
    minimum: Optional[List[str]] = typer.Option(None, "--min", help="Fail (exit 1) below this score, e.g. "
                                                "packages_used.exact=0.9 (repeatable)."),
    json_: JsonOpt = False,
) -> None:
    """Scan every gold repository as `review code scan` does and score C1, "present" and C2.

    Prints precision, recall and F1 per label for packages_used and packages_present, the
    share of repositories whose packages_used is exactly right, C2 agreement and binary
    scores (unknown is an outcome of its own), and every disagreement with the scan's
    evidence. Gold lines with "split": "holdout" are scored apart too: dev and holdout
    figures are printed side by side. Exits 1 when a --min threshold is not met, 8 when the gold file or a checkout
    is bad (the line is named). Reads the checkouts only; writes nothing.

    Example:

    \b
        python gold/code/fetch.py --out ~/gold-checkouts
        review evaluate code --gold gold/code/dev.jsonl --root ~/gold-checkouts
        review evaluate code --gold gold/code/dev.jsonl --root ~/gold-checkouts --json
        review evaluate code --gold dev.jsonl --root co --min packages_used.exact=0.9 --min eval_reproducible.agreement=0.85
    """
    from review.evaluate.code import check_thresholds, parse_threshold, run

    thresholds = parse_minimums(minimum, parse_threshold)
    result = run(context.get(ctx).settings, gold, root)
    if json_:
        print_json(result.as_dict())
    else:
        _print(result)
    used, c2 = result.sets["packages_used"], result.verdict
    summary(f"{result.repositories} repositories scanned in {result.seconds:.1f} s ({len(result.failed)} failed); "
            f"packages_used exact {used.exact}/{used.items}; C2 agreement {c2.agreed}/{c2.items} "
            f"({c2.unknown} unknown); {len(result.disagreements)} disagreements" + _parts_summary(result))
    failures = check_thresholds(result.metrics(), thresholds)
    exit_below(failures)


def _print(result: Any) -> None:
    rows = []
    for q, s in result.sets.items():
        rows.append((q, s.items, f"{s.exact}/{s.items}", _f(s.exact_share), _f(s.overall.precision),
                     _f(s.overall.recall), _f(s.overall.f1)))
    c2 = result.verdict
    counts = c2.counts
    rows.append(("eval_reproducible", c2.items, f"{c2.agreed}/{c2.items} agree", _f(c2.agreement),
                 _f(counts.precision), _f(counts.recall), _f(counts.f1)))
    print_table(f"{result.gold}: scores", ["question", "repositories", "exact", "share", "precision", "recall", "F1"],
                rows)
    if result.has_holdout:
        print_table("dev and holdout (gold lines with \"split\": \"holdout\"; never tuned on)",
                    ["score", "dev", "holdout"], _part_rows(result))
    table = c2.as_dict()["table"]
    print_table("eval_reproducible: expected x proposed", ["expected", "true", "false", "unknown"],
                [(k, v["true"], v["false"], v["unknown"]) for k, v in table.items()])
    labels = sorted(set().union(*(s.labels for s in result.sets.values())))
    label_rows = []
    for label in labels:
        row: list[Any] = [label]
        for s in result.sets.values():
            c = s.labels.get(label)
            row += ["", "", ""] if c is None else [f"{c.tp}/{c.fp}/{c.fn}", _f(c.precision), _f(c.recall)]
        label_rows.append(row)
    print_table("per label (tp/fp/fn)", ["label", "used tp/fp/fn", "used P", "used R",
                                         "present tp/fp/fn", "present P", "present R"], label_rows)
    print_table("disagreements", ["repo", "part", "question", "expected", "proposed", "evidence"],
                [(d.repo, d.part, d.question, _v(d.expected), _v(d.proposed), _evidence(d.evidence))
                 for d in result.disagreements])  # print_table shows repository text as text
    for r in result.failed:
        err_console().print(f"scan failed: {r.repo}: {r.failed}", markup=False)


def _part_rows(result: Any) -> list[tuple[str, str, str]]:
    """One row per score, dev beside holdout: the holdout figure is the one that predicts unseen repositories."""
    dev, hold = result.parts["dev"], result.parts["holdout"]

    def both(get: Any) -> tuple[str, str]:
        return get(dev), get(hold)

    rows = [("repositories", *both(lambda p: str(p.repositories)))]
    for q in ("packages_used", "packages_present"):
        rows.append((f"{q} exact", *both(lambda p: f"{p.sets[q].exact}/{p.sets[q].items} ({_f(p.sets[q].exact_share)})")))
        rows.append((f"{q} precision", *both(lambda p: _f(p.sets[q].overall.precision))))
        rows.append((f"{q} recall", *both(lambda p: _f(p.sets[q].overall.recall))))
    rows.append(("C2 agreement", *both(lambda p: f"{p.verdict.agreed}/{p.verdict.items} ({_f(p.verdict.agreement)})")))
    return rows


def _parts_summary(result: Any) -> str:
    if not result.has_holdout:
        return ""
    out = []
    for name in ("dev", "holdout"):
        p = result.parts[name]
        u = p.sets["packages_used"]
        out.append(f"{name}: packages_used exact {u.exact}/{u.items}, C2 {p.verdict.agreed}/{p.verdict.items}")
    return " [" + "; ".join(out) + "]"


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _v(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "[]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _evidence(rows: list[dict[str, Any]]) -> str:
    parts = []
    for r in rows[:4]:
        if "reason" in r and "package" not in r and "feature" not in r:
            parts.append(str(r["reason"]))
            continue
        where = f"{r.get('file', '')}:{r.get('line', '')}" if r.get("file") else ""
        label = r.get("package") or r.get("feature") or ""
        text = str(r.get("text") or r.get("detail") or "")
        text = text if len(text) <= 90 else text[:89] + "…"
        flags = [k for k in ("commented", "superseded") if r.get(k)]
        parts.append(f"{label} {where} {text}".strip() + (f" ({', '.join(flags)})" if flags else ""))
    more = len(rows) - 4
    return "; ".join(parts) + (f"; +{more} more" if more > 0 else "")
