"""What `review packages test` and `sensitivity` do, below the CLI: run, compare, write."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from review.log import get_logger
from review.packages import results, venvs
from review.packages.harness import Candidate, Harness, compare, reference_variants, reference_venv, run_candidate
from review.packages.sensitivity import run_sensitivity
from review.packages.specimen import Pair, specimen_hash
from review.progress import progress

log = get_logger("packages")


def choose(h: Harness, wanted: Sequence[str], ci_only: bool = False) -> list[Candidate]:
    """The candidates `--package` names (NAME, or NAME==VERSION for another release), else all."""
    if not wanted:
        return [c for c in h.candidates if c.ci or not ci_only]
    out = []
    for w in wanted:
        name, _, version = w.partition("==")
        c = h.candidate(name)
        out.append(c.release(f"{c.spec.split('==')[0]}=={version}") if version else c)
    return out


def run_test(h: Harness, pairs: Sequence[Pair], cache: Path, exports: Path, wanted: Sequence[str] = (),
             ci_only: bool = False) -> dict[str, Any]:
    """Table 2 for the chosen candidates; written to the exports folder, returned as rows."""
    ref_venv = reference_venv(h, cache)
    ref_version = f"{h.reference['version']} ({h.reference['dist']} {venvs.installed_version(ref_venv, h.reference['dist'])})"
    spec_hash = specimen_hash(pairs)
    ref = reference_variants(h, ref_venv, pairs)
    rows = []
    chosen = choose(h, wanted, ci_only)
    with progress(len(chosen), "packages") as bar:
        for c in chosen:
            bar.describe(c.name)
            run = run_candidate(h, c, pairs, cache)
            cmp = None if run.reason else compare(h, ref, run.per_pair)
            if run.reason:
                log.warning("%s: %s", c.name, run.reason)
            rows.append(results.package_row(h, run, cmp, results.signature(h, ref_version, spec_hash, len(pairs), run)))
            bar.advance()
    sig = results.signature(h, ref_version, spec_hash, len(pairs))
    js, csv_path = results.write(exports, h.metric, "test", rows, {"signature": sig.format(), "specimen": spec_hash})
    return {"rows": rows, "signature": sig.format(), "json": str(js), "csv": str(csv_path)}


def run_table1(h: Harness, pairs: Sequence[Pair], cache: Path, exports: Path) -> dict[str, Any]:
    """Table 1 on the reference; written to the exports folder, returned as rows."""
    ref_venv = reference_venv(h, cache)
    ref_version = f"{h.reference['version']} ({h.reference['dist']} {venvs.installed_version(ref_venv, h.reference['dist'])})"
    rows = [r.__dict__ for r in run_sensitivity(h, ref_venv, pairs)]
    sig = results.signature(h, ref_version, specimen_hash(pairs), len(pairs))
    flattering = rogue3(h, rows, exports, specimen_hash(pairs))
    js, csv_path = results.write(exports, h.metric, "sensitivity", rows, {"signature": sig.format(), "rogue3": flattering})
    return {"rows": rows, "signature": sig.format(), "rogue3": flattering, "json": str(js), "csv": str(csv_path)}


def _variant_of(h: Harness, options: Any) -> str:
    """The grid variant a configuration contains (stemmed when its options hold -m), so a package's
    measured difference is added where it was measured, not counted twice."""
    fits = [name for name, extra in h.reference["variants"].items()
            if isinstance(options, list) and isinstance(extra, list) and set(extra) <= set(options)]
    return max(fits, key=lambda n: len(h.reference["variants"][n]), default=next(iter(h.reference["variants"])))


def rogue3(h: Harness, rows: list[dict[str, Any]], exports: Path, spec_hash: str) -> dict[str, Any]:
    """Rogue Scores' "Rogue-3": the same outputs under the most flattering configuration, and on top
    the most flattering package measured on this very specimen (its mean difference in the grid
    variant the configuration contains)."""
    import json

    base = rows[0]["means"]
    out: dict[str, Any] = {}
    tested = results.RESULTS.format(metric=h.metric)
    measured = []
    if (exports / tested).is_file():
        test = json.loads((exports / tested).read_text()).get("test", {})
        if test.get("specimen") == spec_hash:
            measured = [r for r in test.get("rows", []) if r.get("mean_diff")]
    for score in h.scores:
        best = max(rows, key=lambda r: r["means"][score])
        entry = {"baseline": round(base[score], 2), "configuration": best["name"], "score": round(best["means"][score], 2)}
        key = f"{_variant_of(h, best['options'])}/{score}/{h.measures[-1]}"
        pkgs = [(r["mean_diff"][key], r["package"]) for r in measured if key in r["mean_diff"]]
        if pkgs:
            diff, name = max(pkgs)
            entry.update(package=name, with_package=round(best["means"][score] + max(diff, 0.0), 2))
        out[score] = entry
    return out
