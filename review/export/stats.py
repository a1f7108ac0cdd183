"""Figure 1 statistics, Figure 3 counts, the package table and the published figures.

Every share is a count over a denominator, both written out, with a bootstrap confidence
interval. For a yes/no column, resampling the n papers with replacement gives a number of
"yes" papers that is exactly Binomial(n, k/n), so drawing that binomial B times *is* the
ordinary nonparametric bootstrap, in O(B) instead of O(B·n). The generator is seeded from
the export seed and the statistic's name, so every interval is identical on rerun and
adding a statistic never shifts another one's interval.
"""

from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from review.compute import CATEGORIES, GITHUB_ROUGE, UNKNOWN_PYROUGE, Catalog
from review.export.dataset import Record
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


def bootstrap_ci(name: str, count: int, n: int, settings: ExportSettings) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of count/n (see the module docstring)."""
    if n <= 0:
        return None, None
    rng = np.random.default_rng([settings.seed, zlib.crc32(name.encode())])
    draws = rng.binomial(n, count / n, size=settings.bootstrap_samples) / n
    alpha = 1 - settings.confidence
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return round(float(low), 6), round(float(high), 6)


def counts_as_package(label: str, settings: ComputeSettings) -> bool:
    if label == UNKNOWN_PYROUGE:
        return settings.unknown_pyrouge_counts
    if label == GITHUB_ROUGE:
        return settings.github_rouge_counts
    return True


def rouge_rows(records: list[Record]) -> list[dict[str, Any]]:
    return [r.values for r in records if r.values["paper_rouge"] is True]


def figure1(records: list[Record], compute: ComputeSettings, export: ExportSettings) -> list[Stat]:
    """The Figure 1 headline results (denominator: the papers that compute ROUGE)."""
    rows = rouge_rows(records)
    n = len(rows)

    def cites(row: dict[str, Any], key: str) -> bool:
        return any(counts_as_package(p, compute) for p in row[key])

    def share(name: str, description: str, test: Callable[[dict[str, Any]], bool],
              among: Callable[[dict[str, Any]], bool] = lambda r: True) -> Stat:
        base = [r for r in rows if among(r)]
        k = sum(1 for r in base if test(r))
        low, high = bootstrap_ci(name, k, len(base), export)
        return Stat(name, description, k, len(base), low, high)

    stats = [
        Stat("rouge_papers", "papers that compute ROUGE (P0)", n, None),
        share("reproducible", "basically reproducible (R1 or R2 or R3)", lambda r: r["reproducible"] is True),
        share("release_code", "release code (incl. incomplete) (C0)", lambda r: r["has_code"] is True),
        share("code_with_rouge", "release code with ROUGE evaluation (code_rouge_prelim)",
              lambda r: r["code_rouge_prelim"] is True),
        share("bootstrapping", "perform ROUGE significance testing / bootstrapping (P3)",
              lambda r: "bootstrapping" in r["paper_protocol"]),
        share("list_parameters", "list ROUGE parameters (P1)", lambda r: r["paper_params"] is True),
        share("cite_package", "cite a ROUGE package, incl. unofficial (P4)", lambda r: cites(r, "paper_packages")),
        share("software_error_share", "papers citing a package (paper or code) whose packages have scoring errors",
              lambda r: r["software_error"] is True, among=lambda r: cites(r, "packages")),
        share("incorrect_software", "cite software with scoring errors (paper or code)",
              lambda r: r["software_error"] is True),
        share("r1", "R1: cite a package and list parameters", lambda r: r["r1"] is True),
        share("r2", "R2: cite a no-configuration package (MS/rouge, GL/seq2seq)", lambda r: r["r2"] is True),
        share("r3", "R3: codebase with a complete ROUGE evaluation (C2)", lambda r: r["r3"] is True),
        share("human_reviewed", "ROUGE papers whose labels rest entirely on human decisions",
              lambda r: r["label_source"] == "human"),
    ]
    return stats


def figure3(records: list[Record]) -> list[dict[str, Any]]:
    """ROUGE papers per publication year, one count per Figure 3 series."""
    per_year: dict[Any, Counter[str]] = defaultdict(Counter)
    for r in rouge_rows(records):
        per_year[r["paper_year"]][r["figure3_category"] or CATEGORIES[2]] += 1
    years = sorted(per_year, key=lambda y: (y is None, y or 0))
    return [{"year": y, **{c: per_year[y][c] for c in CATEGORIES}, "total": sum(per_year[y].values())}
            for y in years]


def package_table(records: list[Record], catalog: Catalog, compute: ComputeSettings) -> list[dict[str, Any]]:
    """Per package: ROUGE papers citing it in the paper, in the code, either; its correctness."""
    paper: Counter[str] = Counter()
    code: Counter[str] = Counter()
    either: Counter[str] = Counter()
    for r in rouge_rows(records):
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


# The paper's own numbers (spec §1 and §4), for the side-by-side table.
PUBLISHED: list[tuple[str, str, float, str]] = [
    # (our statistic, how the paper words it, value, unit)
    ("records", "citations collected", 110689, "count"),
    ("full_text", "full-text papers", 100582, "count"),
    ("rouge_papers", "papers that compute ROUGE", 2834, "count"),
    ("codebases", "linked codebases", 831, "count"),
    ("reproducible", "reproducible", 0.20, "share"),
    ("release_code", "release code (incl. incomplete)", 0.33, "share"),
    ("code_with_rouge", "release code with ROUGE evaluation", 0.12, "share"),
    ("bootstrapping", "ROUGE significance testing / bootstrapping", 0.06, "share"),
    ("list_parameters", "list ROUGE parameters", 0.05, "share"),
    ("cite_package", "cite a ROUGE package (incl. unofficial)", 0.35, "share"),
    ("software_error_share", "package citations with scoring errors", 0.76, "share"),
    ("incorrect_software", "papers citing incorrect software", 755, "count"),
    ("package:MS/rouge", "cite incorrect MS/rouge", 221, "count"),
    ("package:GL/rougescore", "cite incorrect GL/rougescore", 183, "count"),
    ("package:BZ/pyrouge", "cite incorrect BZ/pyrouge", 125, "count"),
    ("package:PT/rouge", "cite incorrect PT/rouge", 70, "count"),
]


def comparison(stats: list[Stat], prisma: dict[str, Any], packages: list[dict[str, Any]],
               codebases: int) -> list[dict[str, Any]]:
    """This run's value next to the published one, for each published figure."""
    by_name = {s.name: s for s in stats}
    by_pkg = {p["package"]: p for p in packages}
    out = []
    for name, wording, published, unit in PUBLISHED:
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
        elif unit == "share":
            ours = by_name[name].share
            ours = None if ours is None else round(ours, 6)
        else:
            ours = by_name[name].count
        out.append({"statistic": name, "paper_wording": wording, "unit": unit, "published": published, "this_run": ours})
    return out
