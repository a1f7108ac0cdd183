"""`review evaluate papers` / `human`: how right a rule file's labels are, measured on a gold file or on the
resolved human decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, summary
from review.cli.thresholds import as_json as thresholds_json
from review.cli.thresholds import exit_below, parse_minimums

evaluate_app = typer.Typer(help="Measure automated labels against human labels (gold files).", no_args_is_help=True)
app.add_typer(evaluate_app, name="evaluate")


@evaluate_app.command("papers")
def papers(
    ctx: typer.Context,
    gold: Path = typer.Option(..., "--gold", help="Papers gold file (JSON Lines, ../shared/spec/GOLD.md)."),
    rules: Optional[str] = typer.Option(None, "--rules", help="Rule file: a path, or a name (a metric folder's rule file without .toml). Default: label.rules, else the metric's rule file."),
    option: Optional[List[str]] = typer.Option(None, "--option", help="Switch on a named option of the rule file (repeatable)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="PDF text extractor (default from the settings)."),
    minimum: Optional[List[str]] = typer.Option(None, "--min", help="Fail (exit 1) below this score, e.g. P0.precision=0.97 (repeatable)."),
    json_: JsonOpt = False,
) -> None:
    """Label every gold paper with a rule file and print the scores, disagreements and per-rule precision.

    The papers are read and labelled exactly as `review check` does. Exits 1 when a --min
    threshold is not met, 8 when the gold file is bad (the line is named), 5 when the rule
    file is bad. Writes nothing, not even to the database (which only `paper` entries read).

    Example:

    \b
        review evaluate papers --gold gold/papers/dev.jsonl
        review evaluate papers --gold gold/papers/dev.jsonl --rules patterns/rouge/rouge-precise.toml --json
        review evaluate papers --gold dev.jsonl --min P0.precision=0.97 --min P4.exact=0.95
    """
    from review.compute import load_catalog
    from review.evaluate.gold import read_gold
    from review.evaluate.papers import evaluate, read_texts
    from review.evaluate.score import check_thresholds, parse_threshold
    from review.rules.stage import resolve_rules

    thresholds = parse_minimums(minimum, parse_threshold)
    app_ctx = context.get(ctx)
    settings = app_ctx.settings
    ruleset = resolve_rules(settings, rules, option or ())
    catalog = load_catalog(settings.compute.packages, settings)
    gold_file = read_gold(gold, catalog.packages)
    texts = read_texts(gold_file, backend=backend or settings.extract.backend,
                       extract_options={"timeout": settings.extract.timeout, "memory_mb": settings.extract.memory_mb},
                       open_database=lambda: _read_only_database(app_ctx))
    result = evaluate(gold_file, texts, ruleset)
    failures = check_thresholds(result.metrics(), thresholds)
    if json_:
        print_json({**result.as_dict(), "thresholds": thresholds_json(thresholds, failures)})
    else:
        _print(result)
    s = result.scores
    skipped = f", {len(gold_file.code_lines)} code entries left out" if gold_file.code_lines else ""
    summary(f"{gold}: {s.items} papers ({s.computing} compute the metric){skipped}, {len(s.disagreements)} "
            f"disagreements ({ruleset.name} {ruleset.sha256[:12]})")
    exit_below(failures)


@evaluate_app.command("human")
def human(
    ctx: typer.Context,
    rules: Optional[str] = typer.Option(None, "--rules", help="Rule file whose stored labels are scored: a path, or a name (a metric folder's rule file without .toml). Default: the rule set compute reads, label.rules."),
    option: Optional[List[str]] = typer.Option(None, "--option", help="With --rules: the named options it was labelled with (repeatable)."),
    rule_set: Optional[str] = typer.Option(None, "--rule-set", help="A stored rule-set version instead (sha256 prefix or id; `review label --list`)."),
    minimum: Optional[List[str]] = typer.Option(None, "--min", help="Fail (exit 1) below this score, e.g. P0.precision=0.97 (repeatable)."),
    json_: JsonOpt = False,
) -> None:
    """Score the stored automated labels against the resolved human decisions (every human pass measures the rules).

    The human answers are resolved by the same rule as pull and compute; a question the
    reviewers left tied or "can't tell" has no human answer and is left out (a paper whose
    P0 is disputed, as a whole), and the output counts what was left out and why. The
    scores are those of `review evaluate papers`; code URLs are not scored. Exits 1 when a
    --min threshold is not met, 5 when the rule file has no stored labels. Writes nothing.

    Example:

    \b
        review evaluate human
        review evaluate human --rules patterns/rouge/rouge-precise.toml --json
        review evaluate human --rule-set 0a7eb417a8ad --min P0.precision=0.97
    """
    from review.evaluate.score import check_thresholds, parse_threshold

    thresholds = parse_minimums(minimum, parse_threshold)
    if rule_set and rules:
        raise typer.BadParameter("give --rules or --rule-set, not both", param_hint="--rule-set")
    app_ctx = context.get(ctx)
    result = _evaluate_human(app_ctx, rules, option or (), rule_set)
    failures = check_thresholds(result.metrics(), thresholds)
    if json_:
        print_json({**result.as_dict(), "thresholds": thresholds_json(thresholds, failures)})
    else:
        _print_human(result)
    s = result.scores
    summary(f"human answers: {s.items} papers scored ({s.computing} compute the metric), "
            f"{sum(result.left_out.values())} left out, {len(s.disagreements)} disagreements "
            f"({result.rule_set} {result.rules_sha256[:12]})")
    exit_below(failures)


def _evaluate_human(app_ctx: context.AppContext, rules: Path | None, options: Any, ref: str | None) -> Any:
    """Pick the stored rule set, score it, roll back: nothing is written."""
    from review.compute.stage import choose_rule_set, configured_rules
    from review.errors import ReviewError, RuleFileError
    from review.evaluate.human import evaluate_human, stored_rule_set
    from review.rules.stage import find_rule_set, resolve_rules

    settings = app_ctx.settings
    ruleset = resolve_rules(settings, rules, options) if rules else None  # a bad file stops here
    db = _read_only_database(app_ctx)
    with db.sessions() as s:
        try:
            if ruleset is not None:
                row = stored_rule_set(s, ruleset)
            elif ref:
                try:
                    row = find_rule_set(s, ref)
                except ReviewError as exc:
                    raise RuleFileError(exc.message, item="--rule-set", hint=exc.hint) from None
            else:
                row = choose_rule_set(s, settings.compute.rule_set, configured_rules(settings))
                if row is None:
                    raise RuleFileError("no stored labels to evaluate", item="--rules",
                                        hint="run `review label` first")
            return evaluate_human(s, row)
        finally:
            s.rollback()


def _print_human(result: Any) -> None:
    s = result.scores
    typer.echo(f"human answers: {result.reviewed} papers reviewed, {s.items} scored, {s.computing} compute the "
               f"metric; rules {result.rule_set} ({result.rules_sha256[:12]})")
    if not result.reviewed:
        typer.echo("  no human answers yet: `review pull` (or `review pull --from-file`) brings them in")
    typer.echo("  code URLs are not a question of the paper form: not scored")
    for reason, n in sorted(result.left_out.items()):
        typer.echo(f"  left out: {n} paper{'s' if n != 1 else ''}: {reason}")
    for q, reasons in sorted(result.questions_left_out.items()):
        for reason, n in sorted(reasons.items()):
            scored = "scored as lists parameters only" if reason.startswith("yes,") else "not scored"
            typer.echo(f"  {q} {scored} on {n} paper{'s' if n != 1 else ''}: {reason}")
    _print_scores(result)


def _read_only_database(app_ctx: context.AppContext) -> Any:
    """The survey database, opened without creating or migrating it."""
    from review.db.migrate import ensure_current
    from review.evaluate.papers import check_database_exists

    check_database_exists(app_ctx.settings.database)
    db = app_ctx.database(check_schema=False)
    ensure_current(db, auto_create=False)
    return db


def _fmt(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.3f}"


def _print(result: Any) -> None:
    """Plain, fixed-width text: readable in a terminal, a CI log or a diff."""
    s = result.scores
    opts = f" +{','.join(result.options)}" if result.options else ""
    typer.echo(f"{result.gold}: {s.items} papers, {s.computing} compute the metric; "
               f"rules {result.rules}{opts} ({result.rules_sha256[:12]})")
    _print_scores(result)


def _print_scores(result: Any) -> None:
    """The score table, the disagreements and per-rule precision (papers and human alike)."""
    s = result.scores
    echo = typer.echo
    echo("")
    echo(f"{'question':24} {'items':>5} {'tp':>4} {'fp':>4} {'fn':>4} {'prec':>5} {'rec':>5} {'F1':>5}  exact")
    _row("P0 computes", s.items, s.p0, f"accuracy {_fmt(s.p0_accuracy).strip()}")
    _row("P1 lists parameters", s.sets["P1"].items, s.p1_listed, "")
    for q, name in (("P1", "P1 parameter strings"), ("P2", "P2 measures"), ("P3", "P3 protocol"),
                    ("P4", "P4 packages"), ("code_urls", "code URLs")):
        st = s.sets[q]
        _row(name, st.items, st.overall, f"{st.exact}/{st.items} = {_fmt(st.exact_share).strip()}")
    for q in ("P2", "P3", "P4"):
        for label, c in sorted(s.sets[q].labels.items()):
            _row(f"  {q} {label}", None, c, "")
    if s.disagreements:
        echo("")
        echo(f"Disagreements ({len(s.disagreements)}):")
        for d in s.disagreements:
            echo(f"- {d.item} {d.question}: expected {_answer(d.expected)}; proposed {_answer(d.proposed)}")
            for e in d.evidence:
                echo(f"    {e['rule']}: {e['snippet']}")
            ev = d.expected_evidence
            human = isinstance(ev, str) and ev.startswith("human")
            if ev and (human or not d.evidence):  # a gold snippet only when the proposal has none
                echo(f"    {'' if human else 'gold: '}{ev if isinstance(ev, str) else ' | '.join(map(str, ev))}")
    if result.rule_scores:
        echo("")
        echo("Per-rule precision (matches on scored answers; worst first):")
        echo(f"  {'rule':32} {'kind':9} {'matches':>7} {'right':>6} {'prec':>5} {'papers':>6} {'right':>6}")
        for r in result.rule_scores:
            echo(f"  {r.rule:32} {r.kind:9} {r.matches:7} {r.right:6} {_fmt(r.precision)} {r.items:6} "
                 f"{r.items_right:6}")


def _row(name: str, items: int | None, c: Any, tail: str) -> None:
    n = "" if items is None else str(items)
    typer.echo(f"{name:24} {n:>5} {c.tp:4} {c.fp:4} {c.fn:4} {_fmt(c.precision)} {_fmt(c.recall)} {_fmt(c.f1)}  {tail}")


def _answer(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "[" + ", ".join(repr(v) for v in value) + "]"
