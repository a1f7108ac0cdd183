"""`review export`: the dataset, statistics, figures, PRISMA counts, report and manifest.

Everything is derived from the database as it stands (run `review compute` first), and
written so that exporting the same data twice gives byte-identical files: rows sorted,
fixed number formats, seeded bootstrap, figures without dates, and a manifest time taken
from the data's own runs (or given with `--time`), never from the clock.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review import __version__
from review.compute import load_catalog
from review.db import migrate
from review.db.models import Reproducibility
from review.db.session import Database
from review.errors import ConfigError, InputFileError, ReviewError
from review.export import dataset as ds
from review.export import figures, manifest, papers, prisma, report, stats
from review.log import get_logger
from review.metric import metric_of
from review.redact import redact
from review.runs import record_run
from review.settings import Settings
from review.signature import Signature

log = get_logger("export")

__all__ = ["ExportResult", "run_export"]


@dataclass
class ExportResult:
    out_dir: Path
    files: list[Path] = field(default_factory=list)
    report: Path | None = None
    figures: list[Path] = field(default_factory=list)
    dataset: Path | None = None
    papers: int = 0
    metric_papers: int = 0
    reproducible: int = 0
    run_id: int | None = None
    warnings: list[str] = field(default_factory=list)
    metric: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"out_dir": str(self.out_dir), "files": [str(f) for f in self.files],
                "report": str(self.report) if self.report else None, "figures": [str(f) for f in self.figures],
                "dataset": str(self.dataset) if self.dataset else None, "papers": self.papers,
                "metric": self.metric, "metric_papers": self.metric_papers, "reproducible": self.reproducible,
                "run_id": self.run_id,
                "warnings": self.warnings}

    def summary(self) -> str:
        return (f"exported {self.papers} papers ({self.metric_papers} compute {self.metric or 'the metric'}, "
                f"{self.reproducible} reproducible) "
                f"to {self.out_dir}: {len(self.files)} files")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write(path: Path, text: str) -> Path:
    path.write_text(redact(text), encoding="utf-8", newline="\n")
    return path


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def _human_evaluation(session: Any, settings: Settings) -> dict[str, Any] | None:
    """`review evaluate human` for the rule set the exported rows were computed from (when
    they share one; else the one compute would read), for the report (reads only)."""
    from review.compute.stage import choose_rule_set, configured_rules
    from review.evaluate.human import evaluate_human
    from review.provenance import rule_set_of_rows

    try:
        rule_set = rule_set_of_rows(session) or choose_rule_set(session, settings.compute.rule_set,
                                                                configured_rules(settings))
    except ReviewError:  # compute reports a bad compute.rule_set; the report goes without this section
        return None
    # the resolutions compute stored: the human answers the dataset rests on
    return evaluate_human(session, rule_set, stored=True).as_dict() if rule_set is not None else None


def _package_results(metric: Any, out: Path, settings: Settings, files: list[Path]) -> dict[str, Any] | None:
    """The newest `review packages` results of the metric for the report (None: the metric has no
    harness); stored in the exports folder, they are copied beside the other files when exporting
    elsewhere, and listed (with their CSVs) among the export's files."""
    import shutil

    from review.packages import results
    from review.packages.harness import load_harness

    if not (metric.folder / "harness.toml").is_file():
        return None
    h = load_harness(metric.folder, metric.id)
    path, data = results.latest([out, settings.resolve(settings.exports_dir)], metric.id)
    if path is not None:
        for src in [path, *path.parent.glob(f"packages-{metric.id}-*.csv")]:
            if src.parent.resolve() != out.resolve():
                shutil.copyfile(src, out / src.name)
            files.append(out / src.name)
    layout = {"reference": h.reference["label"], "tolerance": h.tolerance, "scores": list(h.scores),
              "measures": list(h.measures), "variants": dict(h.reference["variants"])}
    return {"file": results.RESULTS.format(metric=metric.id), "layout": layout, **data}


def run_export(db: Database, settings: Settings, *, out_dir: Path | str | None = None, fmt: str | None = None,
               time: str | None = None) -> ExportResult:
    """Write every export file into `out_dir` (default: the exports_dir setting)."""
    fmt = (fmt or settings.export.format).lower()
    if fmt not in ds.FORMATS:
        raise ConfigError(f"unknown dataset format {fmt!r}", item="export.format", hint="csv, jsonl or parquet")
    out = Path(out_dir) if out_dir is not None else settings.resolve(settings.exports_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputFileError(f"cannot create the output folder: {exc.strerror}", item=str(out)) from None
    metric = metric_of(settings)
    catalog = load_catalog(settings.compute.packages, settings)
    result = ExportResult(out_dir=out, metric=metric.name)
    with record_run(db, "export", {"format": fmt, "out": str(out), "time": time}) as run:
        with db.session() as s:
            records = ds.read_records(s)
            prisma_counts = prisma.prisma_counts(s, records)
            counts = manifest.table_counts(s)
            runs = manifest.data_runs(s)
            made = ds.provenance_of(records)
            rule_sets = manifest.rule_sets(s, made)
            human_eval = _human_evaluation(s, settings)
            evidence = papers.evidence(s)
        schema = migrate.current_revision(db)
        if records and counts[Reproducibility.__tablename__] == 0:
            result.warnings.append("no reproducibility labels yet: run `review compute` before exporting")
        elif any(not r.computed for r in records):
            result.warnings.append("some papers have no reproducibility labels: rerun `review compute`")
        for w in result.warnings:
            log.warning(w)

        stamp, stamp_source = manifest.manifest_time(time or settings.export.time or None, runs)
        fig1 = stats.figure1(records, settings.compute, settings.export, metric=metric, catalog=catalog)
        from review.estimate.figure1 import estimate_figure1  # it reads stats' tests: imported late

        sample = estimate_figure1(db, settings, catalog, metric)  # a recorded human sample, if any
        notes = sample.undesigned + (sample.problems if sample.design_id else [])
        for w in notes:
            log.warning(w)
        result.warnings += notes
        estimates = sample.estimates if sample.design_id else None
        stat_rows = stats.stat_rows(fig1, estimates, stats.stat_provenance(records, settings.compute, metric),
                                    sample.refusal if sample.design_id else "")
        per_year = stats.figure3(records)
        packages = stats.package_table(records, catalog, settings.compute)
        totals = stats.package_totals(packages)
        codebases = stats.linked_codebases(records)
        shown = fig1 + [stats.citation_share(totals, settings.export)]  # the report's and Figure 1's statistics
        compare = stats.comparison(shown, prisma_counts, packages, codebases, metric.published)
        flow = prisma.prisma_rows(prisma_counts, metric)

        files: list[Path] = [ds.write_dataset(records, out, fmt, metric)]
        files.append(_write(out / "statistics.csv", ds.csv_text(
            stats.STAT_COLUMNS + (stats.ESTIMATE_COLUMNS if estimates is not None else []) + stats.PROVENANCE_COLUMNS,
            [list(r.values()) for r in stat_rows])))
        files.append(_write(out / "statistics.json", _json(stat_rows)))
        files.append(_write(out / "figure3.csv", ds.csv_text(
            ["year", *stats.CATEGORIES, "total"], [[r["year"], *[r[c] for c in stats.CATEGORIES], r["total"]]
                                                   for r in per_year])))
        files.append(_write(out / "packages.csv", ds.csv_text(list(packages[0]) if packages else
                                                              ["package"], [list(p.values()) for p in packages])))
        files.append(_write(out / "prisma.csv", ds.csv_text(["stage", "box", "count"], flow)))
        files.append(_write(out / "comparison.csv", ds.csv_text(
            ["statistic", "paper_wording", "unit", "published", "this_run"], [list(c.values()) for c in compare])))
        figs = {"figure1": figures.figure1_chart(shown, out / "figure1", metric, estimates),
                "figure3": figures.figure3_chart(per_year, out / "figure3", metric),
                "prisma": figures.prisma_chart(prisma_counts, out / "prisma", metric)}
        for paths in figs.values():
            files += paths
            result.figures += paths

        signature = Signature({  # what made the rows, not the newest stored rule set (`review.provenance`)
            **made.signature(),
            "packages_sha256": catalog.sha256[:12], "schema": schema,
            "bootstrap": settings.export.bootstrap_samples, "seed": settings.export.seed,
        })
        info: dict[str, Any] = {
            "tool": "review", "version": __version__, "time": stamp, "time_source": stamp_source,
            "signature": signature.format(),
            "database": {"dialect": db.dialect, "schema": schema, "counts": counts},
            "provenance": made.as_dict(),
            "human_answers": ds.human_answers(records),
            "rule_sets": rule_sets,
            "metric": {"name": metric.id, "sha256": metric.sha256},
            "packages_catalog": {"path": Path(catalog.path).name, "sha256": catalog.sha256},
            "runs": runs,
            "settings": {"compute": settings.compute.model_dump(),
                         "export": {k: v for k, v in settings.export.model_dump().items() if k != "time"},
                         "format": fmt},
            "warnings": result.warnings,
        }
        if sample.design_id:
            info["sample"] = {"design": sample.design_id, "description": sample.design, "papers": sample.n_sample,
                              "frame": sample.n_frame, "confidence": sample.confidence,
                              "estimator": "prediction-powered (Angelopoulos et al. 2023), human-only, automated-only"}
        measured = _package_results(metric, out, settings, files)
        report_path = out / "report.html"
        _write(report_path, report.build_report(
            stats=shown, comparison=compare, records=records, evidence=evidence, codebases=codebases,
            per_year=per_year, packages=packages, package_totals=totals,
            prisma=flow, manifest=info, figures={k: [p for p in v if p.suffix == ".svg"][0] for k, v in figs.items()},
            files=[f.name for f in files] + ["manifest.json"], disputed=ds.disputed(records), metric=metric,
            human_evaluation=human_eval, sample=sample if sample.design_id else None, measured=measured))
        files.append(report_path)
        info["files"] = {f.name: _sha256(f) for f in files}
        files.append(_write(out / "manifest.json", _json(info)))

        result.files, result.report = files, report_path
        result.dataset = files[0]
        result.papers = len(records)
        result.metric_papers = fig1[0].count  # the papers that compute the metric
        result.reproducible = next(s.count for s in fig1 if s.name == "reproducible")
        run.signature.update({**metric.signature(), **signature.as_dict()})
        run.count("papers", result.papers)
        run.count("files", len(files))
        run.summary = result.summary()
        result.run_id = run.id
    return result
