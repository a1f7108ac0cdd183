"""Figures 1 and 3 and the PRISMA flow diagram, as PNG and SVG, byte-identical on rerun.

matplotlib stamps a date into SVG/PDF and a version into PNG and draws random ids in SVG;
we drop the metadata it lets us drop, fix the rest (`svg.hashsalt`), and use the
Agg canvas through `matplotlib.figure.Figure` (no pyplot, no global state, no display).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from review.compute import CATEGORIES
from review.export.stats import Stat
from review.metric import Metric, default_metric

RC = {"svg.hashsalt": "review-export", "svg.fonttype": "path", "font.family": "DejaVu Sans", "font.size": 9,
      "path.simplify": True}
COLORS = {CATEGORIES[0]: "#2b8a3e", CATEGORIES[1]: "#c92a2a", CATEGORIES[2]: "#adb5bd", CATEGORIES[3]: "#1971c2"}


SHORT = {
    "reproducible": "reproducible (R1/R2/R3)", "release_code": "release code", "code_with_metric": None,
    "bootstrapping": "significance testing", "list_parameters": "list parameters",
    "cite_package": "cite a package", "software_error_share": "papers citing a package with scoring errors",
    "software_error_citations": "package citations with scoring errors",
}


def short_labels(metric: Metric) -> dict[str, str]:
    """Figure 1's bar labels by statistic name, in the metric's words."""
    return {metric.stat_name(k): v if v is not None else metric.text("code_evaluation") for k, v in SHORT.items()}


def save(fig: Figure, stem: Path) -> list[Path]:
    """Write `<stem>.png` and `<stem>.svg` with fixed metadata."""
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    with matplotlib.rc_context(RC):
        fig.savefig(png, format="png", dpi=150, metadata={"Software": None})
        fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return [png, svg]


def figure1_chart(stats: list[Stat], stem: Path, metric: Metric | None = None,
                  estimates: dict[str, Any] | None = None) -> list[Path]:
    """The shares the reference study published, this run's next to them; without published
    figures (a metric nobody reviewed before), the headline shares alone. With a human
    sample (`estimates`), each bar also gets the prediction-powered estimate and interval."""
    metric = metric or default_metric()
    short = short_labels(metric)
    published = {p.statistic: p.value for p in metric.published if p.unit == "share"}
    shown = [s for s in stats if s.denominator and (s.name in published if published else s.name in short)]
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(8, 0.45 * max(len(shown), 1) + 1.6))
        ax = fig.subplots()
        labels = [short.get(s.name, s.name) for s in shown]
        ys = list(range(len(shown)))[::-1]
        values = [100 * (s.share or 0) for s in shown]
        lows = [100 * ((s.share or 0) - (s.ci_low or 0)) for s in shown]
        highs = [100 * ((s.ci_high or 0) - (s.share or 0)) for s in shown]
        ax.barh(ys, values, color="#1971c2", xerr=[lows, highs], capsize=3,
                label="this run (95% bootstrap CI; treats the labels as right)")
        if published:
            ax.scatter([100 * published[s.name] for s in shown], ys, color="#e8590c", marker="D", zorder=3,
                       label=metric.text("published_source"))
        if estimates:
            _ppi_marks(ax, shown, ys, estimates)
        for y, s, v in zip(ys, shown, values):
            ax.text(v + 1, y + 0.25, f"{v:.1f}% ({s.count}/{s.denominator})", fontsize=7, va="center")
        ax.set_yticks(ys, labels, fontsize=7)
        ax.set_xlim(0, 118)
        ax.set_xlabel("% of each statistic's denominator (papers; package citations for citation shares)")
        ax.set_title(metric.text("figure1_title" if published else "figure1_title_alone"))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=7, frameon=False)
        fig.tight_layout()
    return save(fig, stem)


def _ppi_marks(ax: Any, shown: list[Stat], ys: list[int], estimates: dict[str, Any]) -> None:
    """The prediction-powered estimate (black dot) and its interval, just under each bar."""
    pts = [(y - 0.3, estimates[s.name]) for s, y in zip(shown, ys)
           if s.name in estimates and estimates[s.name].method]
    if not pts:
        return
    xs = [100 * e.estimate for _, e in pts]
    err = [[100 * (e.estimate - e.ci_low) for _, e in pts], [100 * (e.ci_high - e.estimate) for _, e in pts]]
    ax.errorbar(xs, [y for y, _ in pts], xerr=err, fmt="o", color="#212529", markersize=3, capsize=2,
                elinewidth=1, zorder=4, label="prediction-powered (human sample + rules, 95% CI)")


def figure3_chart(per_year: list[dict[str, Any]], stem: Path, metric: Metric | None = None) -> list[Path]:
    metric = metric or default_metric()
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(8.5, 3.6))
        ax = fig.subplots()
        years = [str(r["year"]) for r in per_year]
        bottom = [0] * len(per_year)
        for cat in CATEGORIES:
            values = [r[cat] for r in per_year]
            ax.bar(years, values, bottom=bottom, color=COLORS[cat], label=cat)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_ylabel(metric.text("papers"))
        ax.set_xlabel("publication year")
        ax.set_title(metric.text("figure3_title"))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        for label in ax.get_xticklabels():
            label.set_rotation(45)
        fig.tight_layout()
    return save(fig, stem)


def prisma_chart(counts: dict[str, Any], stem: Path, metric: Metric | None = None) -> list[Path]:
    """Boxes down the middle (what stays), boxes on the right (what leaves)."""
    metric = metric or default_metric()
    sources = ", ".join(f"{k[len('records_'):]}: {v}" for k, v in counts.items() if k.startswith("records_"))
    main = [
        f"Records identified\n(n = {counts['records']}; {sources or 'none'})",
        f"Papers after duplicates removed\n(n = {counts['papers']})",
        f"Full-text papers\n(n = {counts['full_text']})",
        f"{metric.text('prisma_screened')}\n(n = {counts['screened']})",
        f"{metric.text('prisma_included')}\n(n = {counts['included']})",
    ]
    side = [
        f"Duplicates removed: {counts['duplicates_removed']}\nRemoved/retracted: {counts['removed_or_retracted']}",
        f"No PDF: {counts['no_pdf']}\nNo text: {counts['no_text']}",
        f"Excluded by preliminary search: {counts['excluded_prelim']}\nAwaiting labels: {counts['not_labeled']}",
        f"Excluded by screening (P0): {counts['excluded_screening']}",
    ]
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.5, 6))
        ax = fig.subplots()
        ax.set_xlim(0, 10)
        ax.set_ylim(0, 10)
        ax.axis("off")
        box = {"boxstyle": "round,pad=0.4", "facecolor": "#e7f5ff", "edgecolor": "#1971c2"}
        out = {"boxstyle": "round,pad=0.4", "facecolor": "#fff5f5", "edgecolor": "#c92a2a"}
        ys = [9.0, 7.0, 5.0, 3.0, 1.0]
        mains = [_box(ax, 3.0, y, text, box, 8, f"prisma-box-{i}") for i, (y, text) in enumerate(zip(ys, main))]
        for i, (upper, lower) in enumerate(zip(mains, mains[1:])):
            _arrow(ax, (0.5, 1.0), lower, (0.5, 0.0), upper, f"prisma-arrow-down-{i}")
        for i, (y, text) in enumerate(zip([8.0, 6.0, 4.0, 2.0], side)):
            target = _box(ax, 7.6, y, text, out, 7.5, f"prisma-side-{i}")
            _arrow(ax, (0.0, 0.5), target, (3.0, y), "data", f"prisma-arrow-out-{i}")
        ax.set_title("PRISMA 2020 flow")
        fig.tight_layout()
    return save(fig, stem)


def _box(ax: Any, x: float, y: float, text: str, style: dict[str, Any], size: float, gid: str) -> Any:
    """A PRISMA box; returns its frame (the patch arrows point at), tagged `gid` in the SVG."""
    t = ax.text(x, y, text, ha="center", va="center", fontsize=size, bbox=style)
    patch = t.get_bbox_patch()
    patch.set_gid(gid)
    return patch


def _arrow(ax: Any, head: tuple[float, float], target: Any, tail: tuple[float, float], source: Any, gid: str) -> None:
    """An arrow whose ends are given relative to the boxes themselves (fractions of their
    frames), so it reaches its box whatever the text makes the box's size (fixed data
    coordinates once left the exclusion arrows ~150 px short of their boxes)."""
    ann = ax.annotate("", xy=head, xycoords=target, xytext=tail, textcoords=source,
                      arrowprops={"arrowstyle": "->", "shrinkA": 0, "shrinkB": 0})
    ann.arrow_patch.set_gid(gid)
