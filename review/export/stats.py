"""Figure 1 statistics, Figure 3 counts, the package table and the published figures.

Every share is a count over a denominator, both written out, with a bootstrap confidence
interval. For a yes/no column, resampling the n papers with replacement gives a number of
"yes" papers that is exactly Binomial(n, k/n), so drawing that binomial B times *is* the
ordinary nonparametric bootstrap, in O(B) instead of O(B·n). The generator is seeded from
the export seed and the count and denominator themselves, so every interval is identical on
rerun, adding a statistic never shifts another one's interval, and one count over one
denominator always gets one interval (two statistics that happen to be 3 of 7 do not get
two different lower bounds). The bootstrap treats every label as right: it measures the
sampling noise of the papers, not the rules' errors (for those, a human sample and
`review.estimate`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from review.compute import CATEGORIES, Catalog, counts_as_package
from review.export.dataset import Record
from review.metric import Metric, Published, default_metric
from review.settings import ComputeSettings, ExportSettings


@dataclass
class Stat:
    name: str
    description: str
    count: int
    denominator: int | None
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def share(self) -> float | None:
        if not self.denominator:
            return None
        return self.count / self.denominator

    def as_dict(self) -> dict[str, Any]:
        share = self.share
        return {"name": self.name, "description": self.description, "count": self.count,
                "denominator": self.denominator, "share": None if share is None else round(share, 6),
                "ci_low": self.ci_low, "ci_high": self.ci_high}


STAT_COLUMNS = ["name", "description", "count", "denominator", "share", "ci_low", "ci_high"]
ESTIMATE_COLUMNS = ["method", "estimate", "estimate_low", "estimate_high", "n_human", "human_only", "human_only_low",
                    "human_only_high", "automated_only", "rule_false_positive", "rule_false_negative", "estimate_note"]


PROVENANCE_COLUMNS = ["provenance"]


def stat_rows(stats: list[Stat], estimates: dict[str, Any] | None, made: dict[str, str] | None = None,
              refusal: str = "") -> list[dict[str, Any]]:
    """statistics.csv/json rows: with the sample's estimate columns when a sample design
    exists (`review.estimate`), and what made each statistic's rows (`provenance`).

    `refusal` is why the sample gives no estimate at all (e.g. a partly reviewed sample
    queued in a non-random order): written as the `estimate_note` of every statistic, so
    the file itself says it, not only the log."""
    made = made or {}
    if estimates is None:
        return [{**s.as_dict(), "provenance": made.get(s.name, "")} for s in stats]
    empty = {**dict.fromkeys(ESTIMATE_COLUMNS), "estimate_note": refusal or None}
    return [{**s.as_dict(), **(estimates[s.name].columns() if s.name in estimates else empty),
             "provenance": made.get(s.name, "")} for s in stats]


def stat_provenance(records: list[Record], compute: ComputeSettings, metric: Metric | None = None) -> dict[str, str]:
    """statistic name -> what made the rows of its denominator (`review.provenance` note:
    the shared rule set, extractor and code scan, or "mixed" with the counts)."""
    from review.export.dataset import provenance_of

    m = metric or default_metric()
    rows = [r for r in records if r.values["paper_metric"] is True]
    every = provenance_of(rows).note()
    out = {m.stat_name("metric_papers"): every, "human_reviewed": every}
    for key, (_, among) in share_tests(compute).items():
        out[m.stat_name(key)] = provenance_of([r for r in rows if among(r.values)]).note()
    return out


def bootstrap_ci(count: int, n: int, settings: ExportSettings) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of count/n (see the module docstring)."""
    if n <= 0:
        return None, None
    rng = np.random.default_rng([settings.seed, count, n])
    draws = rng.binomial(n, count / n, size=settings.bootstrap_samples) / n
    alpha = 1 - settings.confidence
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return round(float(low), 6), round(float(high), 6)


def metric_rows(records: list[Record]) -> list[dict[str, Any]]:
    return [r.values for r in records if r.values["paper_metric"] is True]


Test = Callable[[dict[str, Any]], bool]
EVERY: Test = lambda r: True  # noqa: E731

# The share statistics of Figure 1: (test, among) over a dataset row (the denominator is
# the papers that compute the metric, narrowed by `among`), and the review questions the
# answer rests on (a sampled paper counts as human-labelled for it when all are settled).
SHARE_QUESTIONS: dict[str, tuple[str, ...]] = {
    "reproducible": ("P0", "P1", "P4", "C0", "C1", "C2"), "release_code": ("P0", "C0"),
    "code_with_metric": ("P0", "C0"), "bootstrapping": ("P0", "P3"), "list_parameters": ("P0", "P1"),
    "cite_package": ("P0", "P4"), "software_error_share": ("P0", "P4", "C0", "C1"),
    "incorrect_software": ("P0", "P4", "C0", "C1"), "r1": ("P0", "P1", "P4"), "r2": ("P0", "P4"),
    "r3": ("P0", "C0", "C2"),
}


def human_reviewed(row: dict[str, Any]) -> bool:
    """Every review question of the paper answered by people (`review.estimate.design`'s rule:
    an automated answer, e.g. "no code" where nobody asked C0, never counts)."""
    from review.answers import QUESTIONS
    from review.estimate.design import human_answered

    return human_answered(row, QUESTIONS)


def share_tests(compute: ComputeSettings) -> dict[str, tuple[Test, Test]]:
    """(test, among) of every share statistic, by its internal name (`code_with_metric`)."""

    def cites(row: dict[str, Any], key: str) -> bool:
        return any(counts_as_package(p, compute) for p in row[key])

    return {
        "reproducible": (lambda r: r["reproducible"] is True, EVERY),
        "release_code": (lambda r: r["has_code"] is True, EVERY),
        "code_with_metric": (lambda r: r["code_metric_prelim"] is True, EVERY),
        "bootstrapping": (lambda r: "bootstrapping" in r["paper_protocol"], EVERY),
        "list_parameters": (lambda r: r["paper_params"] is True, EVERY),
        "cite_package": (lambda r: cites(r, "paper_packages"), EVERY),
        "software_error_share": (lambda r: r["software_error"] is True, lambda r: cites(r, "packages")),
        "incorrect_software": (lambda r: r["software_error"] is True, EVERY),
        "r1": (lambda r: r["r1"] is True, EVERY),
        "r2": (lambda r: r["r2"] is True, EVERY),
        "r3": (lambda r: r["r3"] is True, EVERY),
    }


def figure1(records: list[Record], compute: ComputeSettings, export: ExportSettings, *,
            metric: Metric | None = None, catalog: Catalog | None = None) -> list[Stat]:
    """The Figure 1 headline results (denominator: the papers that compute the metric).

    Statistic names and descriptions are the metric's (`<column>_papers`, "papers that
    compute <name> (P0)"); `catalog` names the no-configuration packages in R2's."""
    m = metric or default_metric()
    rows = metric_rows(records)
    n = len(rows)
    no_config = ", ".join(catalog.no_config_labels) if catalog and catalog.no_config_labels else "none"
    tests = share_tests(compute)

    def share(name: str, description: str, key: str | None = None) -> Stat:
        test, among = tests[key or name] if (key or name) in tests else (human_reviewed, EVERY)
        base = [r for r in rows if among(r)]
        k = sum(1 for r in base if test(r))
        low, high = bootstrap_ci(k, len(base), export)
        return Stat(name, description, k, len(base), low, high)

    stats = [
        Stat(m.stat_name("metric_papers"), m.text("stat_papers"), n, None),
        share("reproducible", "basically reproducible (R1 or R2 or R3)"),
        share("release_code", "release code (incl. incomplete) (C0)"),
        share(m.stat_name("code_with_metric"), m.text("stat_code"), "code_with_metric"),
        share("bootstrapping", m.text("stat_bootstrapping")),
        share("list_parameters", m.text("stat_list_parameters")),
        share("cite_package", m.text("stat_cite_package")),
        share("software_error_share", "papers citing a package (paper or code) whose packages have scoring errors"),
        share("incorrect_software", "cite software with scoring errors (paper or code)"),
        share("r1", "R1: cite a package and list parameters"),
        share("r2", m.text("stat_r2", no_config=no_config)),
        share("r3", m.text("stat_r3")),
        share("human_reviewed", m.text("stat_human_reviewed")),
    ]
    return stats


def figure3(records: list[Record]) -> list[dict[str, Any]]:
    """Papers that compute the metric per publication year, one count per Figure 3 series."""
    per_year: dict[Any, Counter[str]] = defaultdict(Counter)
    for r in metric_rows(records):
        per_year[r["paper_year"]][r["figure3_category"] or CATEGORIES[2]] += 1
    years = sorted(per_year, key=lambda y: (y is None, y or 0))
    return [{"year": y, **{c: per_year[y][c] for c in CATEGORIES}, "total": sum(per_year[y].values())}
            for y in years]


def package_table(records: list[Record], catalog: Catalog, compute: ComputeSettings) -> list[dict[str, Any]]:
    """Per package: papers (computing the metric) citing it in the paper, in the code, either; its correctness."""
    paper: Counter[str] = Counter()
    code: Counter[str] = Counter()
    either: Counter[str] = Counter()
    for r in metric_rows(records):
        paper.update(r["paper_packages"])
        code.update(r["code_packages"])
        either.update(r["packages"])
    total = sum(either.values())
    out = []
    for label in sorted(either, key=lambda p: (-either[p], p)):
        pkg = catalog.packages.get(label)
        err = catalog.error(label)
        out.append({
            "package": label, "kind": pkg.kind if pkg else "not in catalog",
            "software_error": "unknown" if err is None else ("true" if err else "false"),
            "counts_as_package": counts_as_package(label, compute),
            "papers_paper": paper[label], "papers_code": code[label], "papers": either[label],
            "share_of_citations": round(either[label] / total, 6) if total else None,
            "result": pkg.result if pkg else "",
        })
    return out


def package_totals(table: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(r["papers"] for r in table)
    wrong = sum(r["papers"] for r in table if r["software_error"] == "true")
    unknown = sum(r["papers"] for r in table if r["software_error"] == "unknown")
    return {"citations": total, "with_software_error": wrong, "unknown_correctness": unknown,
            "software_error_share": round(wrong / total, 6) if total else None}


def citation_share(totals: dict[str, Any], export: ExportSettings) -> Stat:
    """Package citations naming a package with scoring errors, over all package citations:
    the unit of the published "76% of package citations" and of the Packages table, so the
    figure, the comparison and the Packages section give one number (the paper share
    `software_error_share` is a different statistic and keeps its own name). Its bootstrap
    resamples citations as if independent; a paper's citations are not, so read the interval
    as a lower bound on the spread."""
    wrong, total = totals["with_software_error"], totals["citations"]
    low, high = bootstrap_ci(wrong, total, export)
    return Stat("software_error_citations", "package citations (paper or code) naming a package with scoring errors",
                wrong, total, low, high)


def linked_codebases(records: list[Record]) -> int:
    """Distinct codebases linked from papers that compute the metric (a repository two papers
    share counts once; codebases a reviewer ruled out (C0 = no) are no longer linked)."""
    return len({u for r in metric_rows(records) for u in r["code_urls"]})


def comparison(stats: list[Stat], prisma: dict[str, Any], packages: list[dict[str, Any]],
               codebases: int, published_figures: tuple[Published, ...] = ()) -> list[dict[str, Any]]:
    """This run's value next to the published one, for each figure the metric's reference
    study published (the metric folder's `[[published]]`)."""
    by_name = {s.name: s for s in stats}
    by_pkg = {p["package"]: p for p in packages}
    out = []
    for fig in published_figures:
        name, wording, published, unit = fig.statistic, fig.wording, fig.value, fig.unit
        ours: float | int | None
        if name.startswith("package:"):
            row = by_pkg.get(name.split(":", 1)[1])
            ours = row["papers"] if row else 0
        elif name == "records":
            ours = prisma["records"]
        elif name == "full_text":
            ours = prisma["full_text"]
        elif name == "codebases":
            ours = codebases
        elif name not in by_name:
            ours = None  # a statistic this release does not compute
        elif unit == "share":
            ours = by_name[name].share
            ours = None if ours is None else round(ours, 6)
        else:
            ours = by_name[name].count
        out.append({"statistic": name, "paper_wording": wording, "unit": unit, "published": published, "this_run": ours})
    return out
