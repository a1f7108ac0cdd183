"""The HTML report: one self-contained file (figures inlined as SVG, no scripts, no fetches)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Iterable, Sequence

from review.compute import CATEGORIES
from review.export.dataset import Record
from review.export.papers import Evidence
from review.export.stats import Stat
from review.metric import Metric, default_metric

CSS = """
body{font-family:system-ui,-apple-system,'DejaVu Sans',sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#212529}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}
th,td{border:1px solid #dee2e6;padding:0.25em 0.6em;text-align:left;vertical-align:top}
th{background:#f1f3f5} td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1em 0} figure svg{max-width:100%;height:auto} code{background:#f1f3f5;padding:0 0.2em}
.small{font-size:0.85em;color:#495057}
.banner{border:2px solid #e67700;background:#fff3bf;padding:0.6em 1em;margin:1em 0;font-size:1.05em}
.banner.verified{border-color:#2b8a3e;background:#ebfbee}
td.evidence{max-width:28em;font-size:0.85em}
td.n .small{display:block}
"""


def _cell(value: Any) -> str:
    if value is None:
        return "<td></td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, (int, float)):
        return f'<td class="n">{html.escape(_num(value))}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _num(value: float | int) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def inline_svg(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return f"<figure>{text[start:]}</figure>" if start >= 0 else ""


def build_report(*, stats: list[Stat], comparison: list[dict[str, Any]], per_year: list[dict[str, Any]],
                 packages: list[dict[str, Any]], package_totals: dict[str, Any], prisma: list[tuple[str, str, int]],
                 manifest: dict[str, Any], figures: dict[str, Path], files: list[str],
                 disputed: list[tuple[str, list[str]]] | None = None, metric: Metric | None = None,
                 human_evaluation: dict[str, Any] | None = None, sample: Any = None,
                 records: Sequence[Record] = (), evidence: dict[str, list[Evidence]] | None = None,
                 codebases: int | None = None, measured: dict[str, Any] | None = None) -> str:
    m = manifest
    metric = metric or default_metric()
    title = html.escape(metric.text("report_title"))
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}: report</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        f'<p class="small">review {html.escape(m["version"])} · data time {html.escape(str(m["time"]))} · '
        f'signature <code>{html.escape(m["signature"])}</code></p>',
        provenance_line(m.get("provenance")),
        verification_banner(records, sample),
        "<p>Labels rest on human decisions where they exist and on the automated rules otherwise; "
        "the dataset's <code>label_source</code> column says which for every paper.</p>",
        "<h2>This run against the published figures</h2>" if comparison else "",
        table(["statistic", "in the paper", "published", "this run"],
              [(c["statistic"], c["paper_wording"],
                _pct(c["published"]) if c["unit"] == "share" else c["published"],
                _pct(c["this_run"]) if c["unit"] == "share" else c["this_run"]) for c in comparison])
        if comparison else "",
        codebases_note(codebases, m["database"]["counts"].get("codebases")) if comparison else "",
        disputed_section(disputed or []),
        human_evaluation_section(human_evaluation),
        "<h2>Figure 1 statistics</h2>",
        f'<p class="assumes">Bootstrap {m["settings"]["export"]["confidence"]:.0%} intervals '
        f'({m["settings"]["export"]["bootstrap_samples"]} resamples, seed {m["settings"]["export"]["seed"]}) '
        "<strong>treat every label as right</strong>: they show how much the shares would move with another "
        "draw of papers, not how wrong the labels are. Only a random sample reviewed by people gives intervals "
        "that include the rules&rsquo; errors (<code>review plan</code>, <code>review queue papers --select "
        "sample</code>; the prediction-powered section below when there is one).</p>",
        table(["statistic", "meaning", "count", "denominator", "share", "bootstrap CI low (labels taken as right)",
               "bootstrap CI high (labels taken as right)"],
              [(s.name, s.description, s.count, s.denominator, _pct(s.share), _pct(s.ci_low), _pct(s.ci_high))
               for s in stats]),
        sample_section(sample, stats, m.get("human_answers")),
        inline_svg(figures["figure1"]),
        f"<h2>{html.escape(metric.text('figure3_title'))}</h2>",
        table(["year", *CATEGORIES, "total"], [("" if r["year"] is None else str(r["year"]), *[r[c] for c in CATEGORIES], r["total"])
                                                   for r in per_year]),
        inline_svg(figures["figure3"]),
        "<h2>Packages</h2>",
        f'<p>{package_totals["citations"]} package citations in {html.escape(metric.text("papers"))} (paper or code); '
        f'{package_totals["with_software_error"]} of them ({_pct(package_totals["software_error_share"])}) name a '
        f'package with scoring errors; {package_totals["unknown_correctness"]} name one whose correctness is unknown.</p>',
        table(["package", "kind", "software error", "counts as package", "papers (paper)", "papers (code)",
               "papers", "tested result"],
              [(p["package"], p["kind"], p["software_error"], p["counts_as_package"], p["papers_paper"],
                p["papers_code"], p["papers"], p["result"]) for p in packages]),
        *package_sections(measured),
        "<h2>PRISMA 2020 flow</h2>",
        table(["stage", "box", "count"], prisma),
        inline_svg(figures["prisma"]),
        paper_table(records, evidence or {}),
        "<h2>Provenance</h2>",
        table(["rule set", "version", "sha256", "exported rows it made"],
              [(r["name"], r["version"], r["sha256"], r.get("rows", 0)) for r in m["rule_sets"]]),
        f'<p class="small">package catalog sha256 <code>{html.escape(m["packages_catalog"]["sha256"])}</code></p>',
        table(["run", "command", "status", "finished"], [(r["id"], r["command"], r["status"], r["finished_at"])
                                                         for r in m["runs"]]),
        table(["table", "rows"], sorted(m["database"]["counts"].items())),
        "<h2>Files</h2><ul>" + "".join(f'<li><a href="{html.escape(f)}">{html.escape(f)}</a></li>' for f in files)
        + "</ul>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def provenance_line(made: dict[str, Any] | None) -> str:
    """The header's account of what made the rows (`review.provenance`): each of rule set,
    extractor and code scan with its one value, or "mixed" and every value with its rows."""
    if not made or not made.get("rows"):
        return ""
    parts = []
    for label, name in (("rule set", "rule_set"), ("rule file sha256", "rule_set_sha256"),
                        ("text extractor", "extractor"), ("code scan", "code_scan")):
        found = made.get(name) or {}
        if not found:
            continue
        if len(found) == 1:
            value = next(iter(found))
            parts.append(f"{label} <code>{html.escape(value)}</code>")
        else:
            each = "; ".join(f"<code>{html.escape(v)}</code> ({n})" for v, n in
                             sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"{label} <strong>mixed</strong>: {each}")
    return (f'<p class="small" id="provenance">The {made["rows"]} computed rows were made by: '
            + ", ".join(parts) + ".</p>")


def disputed_section(disputed: list[tuple[str, list[str]]]) -> str:
    """Papers with questions reviewers left undecided: shown only when there are any."""
    if not disputed:
        return ""
    return (f"<h2>Disputed answers</h2><p>{len(disputed)} paper{'s' if len(disputed) != 1 else ''} have questions "
            "the reviewers left undecided (a tie, or &ldquo;can&rsquo;t tell&rdquo;) that no adjudicator has settled "
            "yet: the automated answers are used for them, and the dataset&rsquo;s <code>label_sources</code> says "
            "<code>disputed</code>. Queue them with <code>review queue papers --select disputed</code> (and "
            "<code>review queue code --select disputed</code>).</p>"
            + table(["paper", "disputed questions"], [(ident, ", ".join(qs)) for ident, qs in disputed]))


def human_evaluation_section(ev: dict[str, Any] | None) -> str:
    """How right the automated labels were on the papers reviewers answered (`review evaluate
    human`, its `as_dict()`); shown only when there are human answers."""
    if not ev or not ev["reviewed"]:
        return ""
    sc = ev["scores"]
    left = sum(ev["left_out"].values())
    why = "; ".join(f"{n} {html.escape(r)}" for r, n in sorted(ev["left_out"].items()))
    rows = [("P0 computes the metric", sc["P0"]["items"], sc["P0"]["precision"], sc["P0"]["recall"], sc["P0"]["f1"],
             _pct(sc["P0"]["accuracy"]) + " accuracy" if sc["P0"]["accuracy"] is not None else ""),
            ("P1 lists parameters", sc["P1_listed"]["items"] + ev["p1_listed_only"], sc["P1_listed"]["precision"],
             sc["P1_listed"]["recall"], sc["P1_listed"]["f1"], "")]
    for q, name in (("P1", "P1 parameter strings"), ("P2", "P2 measures"), ("P3", "P3 protocol"),
                    ("P4", "P4 packages")):
        rows.append((name, sc[q]["items"], sc[q]["precision"], sc[q]["recall"], sc[q]["f1"],
                     f"{_pct(sc[q]['exact_share'])} exact" if sc[q]["exact_share"] is not None else ""))
    return (f"<h2>Automated labels against the human answers</h2><p>Rule set <code>{html.escape(ev['rule_set'])}"
            f"</code> (<code>{html.escape(ev['rules_sha256'][:12])}</code>) on the {ev['scored']} papers with a "
            f"resolved human answer to P0, of {ev['reviewed']} reviewed"
            + (f"; {left} left out ({why})" if left else "")
            + ". Questions the reviewers left tied or &ldquo;can&rsquo;t tell&rdquo; are not scored; P1-P4 are "
            "scored on the papers the reviewers say compute the metric. <code>review evaluate human</code> lists "
            "every disagreement.</p>"
            + table(["question", "papers", "precision", "recall", "F1", "exact / accuracy"],
                    [(n, i, *(None if v is None else round(v, 3) for v in (p, r, f)), e)
                     for n, i, p, r, f, e in rows]))


def sample_section(sample: Any, stats: list[Stat], human_answers: dict[str, int] | None = None) -> str:
    """The estimates from a recorded human sample (`review.estimate`): shown only when one exists."""
    if sample is None:
        return ""
    level = f"{sample.confidence:.0%}"
    rows = []
    for s in stats:
        e = sample.estimates.get(s.name)
        if e is None:
            continue
        rows.append((s.name, e.method or "none", _pct(e.estimate), _pct(e.ci_low), _pct(e.ci_high),
                     _pct(e.human), _pct(e.human_low), _pct(e.human_high), _pct(e.automated), e.n_human,
                     _pct(e.rule_false_positive), _pct(e.rule_false_negative), e.note))
    problems = "".join(f"<li>{html.escape(p)}</li>" for p in sample.problems)
    answers = ", ".join(f"{q} {n}" for q, n in (human_answers or {}).items())
    return (f"<h2>Estimates from the human sample</h2><p class=\"small\">{html.escape(sample.design)}; "
            f"{sample.n_sample} of {sample.n_frame} papers drawn.</p>"
            + (f'<p class="small" id="human-answers">Papers with a person&rsquo;s answer, per question: '
               f"{html.escape(answers)}. A statistic counts a paper as reviewed only when people answered every "
               "question it rests on.</p>" if answers else "")
            + f"<p class=\"assumes\">The {level} interval of a prediction-powered estimate (method <code>ppi</code>: the rules&rsquo; "
            f"answers on every paper, corrected by the errors the reviewers found in this random sample; Angelopoulos "
            f"et al., Science 2023) would contain the share a complete human review finds in {level} of such "
            f"samples. <em>Human only</em> comes from the sample alone and <em>automated only</em> from the rules "
            f"alone (no valid interval); the table above and the bars of Figure 1 use the labels as they stand, the "
            f"black dots of Figure 1 are the prediction-powered estimates.</p>"
            + (f"<ul>{problems}</ul>" if problems else "")
            + table(["statistic", "method", "estimate", "CI low", "CI high", "human only", "low", "high",
                     "automated only", "reviewed papers", "rules: false yes", "rules: false no", "note"], rows))


def verification_banner(records: Sequence[Record], sample: Any = None) -> str:
    """How much of what follows people checked, before any figure: an unreviewed run's shares
    sit next to published ones and would otherwise read as findings."""
    total = len(records)
    full = sum(1 for r in records if r.values["label_source"] == "human")
    some = sum(1 for r in records if r.values["label_source"] != "human"
               and "human" in (r.values["label_sources"] or {}).values())
    part = f" ({some} more partly)" if some else ""
    drawn = (f" A random sample of {sample.n_sample} papers was drawn for estimation; see &ldquo;Estimates from the "
             f"human sample&rdquo;." if sample is not None else "")
    if total and full == total:
        return (f'<div class="banner verified" id="verification" data-verified="{full}" data-papers="{total}">'
                f"<strong>Verified by people:</strong> all {total} papers&rsquo; labels rest on human decisions."
                f"{drawn}</div>")
    return (f'<div class="banner" id="verification" data-verified="{full}" data-papers="{total}">'
            f"<strong>Automated proposals:</strong> {full} of {total} papers verified by people{part}. "
            "Every other label is a rule match nobody has checked, and the figures below are only as right as "
            f"those rules.{drawn}</div>")


def codebases_note(linked: int | None, in_database: int | None) -> str:
    """Which codebases the comparison counts, next to the database's own count."""
    if linked is None or in_database is None:
        return ""
    other = in_database - linked
    verb = "belongs" if other == 1 else "belong"
    why = (f"; the other {other} {verb} to papers that do not compute the metric, are shared, or were ruled "
           "out by a reviewer (C0 = no)" if other > 0 else "")
    return (f'<p class="small" id="codebases-note">Linked codebases: {linked} distinct codebases of the papers that '
            f"compute the metric; the database holds {in_database}{why}.</p>")


def _labels(values: dict[str, Any]) -> str:
    computes = {True: "computes", False: "does not compute", None: "?"}[values["paper_metric"]]
    bits = [computes]
    if values["paper_metric"]:
        bits.append("packages: " + (", ".join(values["packages"]) or "none"))
        bits.append("parameters listed" if values["paper_params"] else "no parameters")
        bits.append({True: "reproducible", False: "not reproducible", None: "reproducible ?"}[values["reproducible"]])
    return "; ".join(bits)


def paper_table(records: Sequence[Record], evidence: dict[str, list[Evidence]]) -> str:
    """One row per paper: its labels, who gave them, and the text the rules matched (with the
    page), so a doubtful figure can be traced to the papers behind it."""
    if not records:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("paper", "labels", "source", "evidence", "page"))
    rows = []
    for rec in records:
        v = rec.values
        hits = evidence.get(v["paper_ident"], [])
        ev = "<br>".join(f"[{html.escape(h.kind)}] {html.escape(h.label)}: &ldquo;{html.escape(h.snippet)}&rdquo;"
                         for h in hits) or "no rule matched"
        pages = ", ".join(str(h.page) for h in hits if h.page is not None)
        rows.append(f'<tr data-paper="{html.escape(v["paper_ident"])}"><td>{html.escape(v["paper_ident"])}</td>'
                    f"<td>{html.escape(_labels(v))}</td><td>{html.escape(v['label_source'] or 'none')}</td>"
                    f'<td class="evidence">{ev}</td><td class="n">{pages}</td></tr>')
    return ("<h2>Papers</h2><p class=\"small\">Every paper with its labels, where they come from "
            "(<code>label_source</code>: human, automated, mixed, disputed) and up to two rule matches with the page "
            "of the extracted PDF text they are on.</p>"
            f'<table id="papers"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


NOT_MEASURED = "not measured yet: run <code>review packages {cmd}</code> (results go to <code>{file}</code>)"


def package_sections(measured: dict[str, Any] | None) -> list[str]:
    """Rogue Scores' Table 2 (package correctness) and Table 1 (configuration sensitivity) from the
    newest stored `review packages` results; `measured` holds `file`, `layout` (variants, scores,
    measures of the metric's harness) and the results' sections. None: the metric has no harness."""
    if measured is None:
        return []
    lay, test, sens = measured["layout"], measured.get("test"), measured.get("sensitivity")
    out = ['<h2 id="package-correctness">Package correctness</h2>']
    if not test:
        out.append(f'<p class="not-measured">{NOT_MEASURED.format(cmd="test", file=measured["file"])}</p>')
    else:
        out.append(f'<p class="small">Share of outputs differing from {html.escape(lay["reference"])} by more than '
                   f'{lay["tolerance"]:g}, and below it the difference of the averaged score (points); measured '
                   f'{html.escape(test["measured_at"])}, signature <code>{html.escape(test["signature"])}</code>.</p>')
        out.append(correctness_table(lay, test["rows"]))
    out.append('<h2 id="configuration-sensitivity">Configuration sensitivity</h2>')
    if not sens:
        out.append(f'<p class="not-measured">{NOT_MEASURED.format(cmd="sensitivity", file=measured["file"])}</p>')
    else:
        scores = lay["scores"]
        out.append(f'<p class="small">{html.escape(lay["reference"])} under each configuration, mean minus the '
                   f'baseline&rsquo;s (points); measured {html.escape(sens["measured_at"])}, signature '
                   f'<code>{html.escape(sens["signature"])}</code>.</p>')
        out.append(table(["configuration", "options", "measure", "splitting", *[f"{s} delta" for s in scores],
                          f"published delta ({scores[0]})"],
                         [(r["name"], " ".join(r["options"]) if isinstance(r["options"], list) else str(r["options"]),
                           r["measure"], r["splitting"], *[f"{r['deltas'][s]:+.2f}" for s in scores],
                           "" if r.get("published") is None else f"{r['published']:+.2f}") for r in sens["rows"]]))
        r3 = "; ".join(f"{s}: baseline {v['baseline']:.2f}, &lsquo;{html.escape(v['configuration'])}&rsquo; "
                       f"{v['score']:.2f}" + (f", with {html.escape(v['package'])} {v['with_package']:.2f}"
                                               if "package" in v else "") for s, v in (sens.get("rogue3") or {}).items())
        out.append(f'<p class="small" id="rogue3">Most flattering: {r3}.</p>' if r3 else "")
    return out


def correctness_table(lay: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """Table 2's grid: a row per package and version, a column per variant x score x measure."""
    cols = [(v, s, m) for v in lay["variants"] for s in lay["scores"] for m in lay["measures"]]
    per_v, per_s = len(lay["scores"]) * len(lay["measures"]), len(lay["measures"])
    head = ('<tr><th rowspan="3">package</th><th rowspan="3">version</th>'
            + "".join(f'<th colspan="{per_v}">{html.escape(v)}{": " + html.escape(" ".join(o)) if o else ""}</th>'
                      for v, o in lay["variants"].items())
            + '<th rowspan="3">outputs differing</th><th rowspan="3">signature</th></tr><tr>'
            + "".join(f'<th colspan="{per_s}">{html.escape(s)}</th>' for _ in lay["variants"] for s in lay["scores"])
            + "</tr><tr>" + "".join(f"<th>{html.escape(m)}</th>" for _ in lay["variants"] for _ in lay["scores"]
                                    for m in lay["measures"]) + "</tr>")
    body = []
    for r in rows:
        name = html.escape(r["package"])
        if r.get("reason"):
            cells = f'<td colspan="{len(cols) + 1}">{html.escape(r["reason"])}</td>'
        else:
            cells = "".join(_grid_cell(r, "/".join(c)) for c in cols) + f'<td class="n">{_pct(r["share_differing"])}</td>'
        body.append(f'<tr data-package="{name}"><td>{name}</td><td>{html.escape(str(r["version"]))}</td>{cells}'
                    f'<td class="small"><code>{html.escape(r["signature"])}</code></td></tr>')
    return f'<table id="package-grid"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _grid_cell(row: dict[str, Any], key: str) -> str:
    share, diff = row["share_by_cell"].get(key), row["mean_diff"].get(key)
    if share is None:
        return f'<td class="n" data-cell="{key}">not computed</td>'
    return (f'<td class="n" data-cell="{key}" data-share="{share}" data-diff="{diff}">{_pct(share)}'
            f'<span class="small">{diff:+.2f}</span></td>')
