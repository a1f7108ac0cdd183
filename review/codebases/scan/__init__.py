"""Which ROUGE packages a checkout uses to produce its reported scores (C1), which others
it merely carries, and whether its evaluation looks reproducible (C2), from its files alone.

Why static reading: the review never runs the papers' code (appendix B is a static
analysis too). The scan works in steps, one module each:

1. `files`: read the checkout without trusting it (caps, symlinks, binary, encodings);
2. `repo`: index it as a graph of code: commands in READMEs, shell scripts and notebooks,
   Python modules (parsed on demand, `python`), who calls or imports what;
3. `evidence`, `uses`: every occurrence of a package, with its file, line and identifier:
   dependency lines, installs, links, README mentions, commands, imports and their uses,
   vendored copies, ROUGE written in the repository (`custom`);
4. `paths`, `classify`: the evaluation-path analysis gives each occurrence a role
   (evaluation, training, unreached, declared, vendored, docs, commented) and each package
   its list, `packages_used` or `packages_present`;
5. `verdict`: the four C2 conditions of CODE_LABELS.md and the appendix B anti-features.

What a package looks like, which words mean training or evaluation and what a hand-written
ROUGE looks like are data (`patterns/code_packages.toml`, see `review.codebases.catalog`).
Nothing is executed.
"""

from __future__ import annotations

from pathlib import Path

from review.codebases.catalog import Catalog
from review.codebases.scan.classify import classify, declared_rows
from review.codebases.scan.declared import Declarations
from review.codebases.scan.evidence import Collector, Occurrences
from review.codebases.scan.files import read_tree
from review.codebases.scan.paths import Walker
from review.codebases.scan.repo import Repo
from review.codebases.scan.report import AntiFeature, Condition, Evidence, ScanReport
from review.codebases.scan.uses import PythonUses
from review.codebases.scan.verdict import judge

SCANNER_VERSION = "2"
MAX_EVIDENCE_PER_ROLE = 40  # rows shown per package and role; all of them count

__all__ = ["AntiFeature", "Condition", "Evidence", "ScanReport", "SCANNER_VERSION", "scan_tree"]


def scan_tree(root: Path, catalog: Catalog, *, max_files: int = 20_000, max_file_bytes: int = 2_000_000,
              target: str | None = None) -> ScanReport:
    """Scan one checkout directory: package lists with evidence, the C2 verdict, anti-features."""
    root = Path(root).resolve()
    report = ScanReport(target=target or str(root))
    report.signature = {"scanner": f"review-code-scan-{SCANNER_VERSION}", **catalog.signature()}
    texts, paths = read_tree(root, report, max_files, max_file_bytes)
    repo = Repo(texts, paths, catalog)
    occ = Occurrences()
    collector = Collector(catalog, repo, report, occ)
    collector.collect_paths(paths)
    for t in texts:
        collector.collect(t)
    uses = PythonUses(catalog, repo, occ, declared_rows(occ.rows))
    for t in texts:
        if t.kind in ("python", "notebook") and uses.may_matter(t.rel):
            uses.collect(t.rel)
    walker = Walker(repo, catalog.roles)
    result = classify(occ, uses, repo, walker, catalog)
    report.packages_used, report.packages_present = result.used, result.present
    judge(report, occ, result, repo, uses, Declarations(texts, catalog), walker, catalog)
    report.evidence = _shown(occ.rows)
    report.entry_points = _entry_points(result, repo)
    report.limits += _limits(repo, walker, report)
    return report


def _shown(rows: list[Evidence]) -> list[Evidence]:
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in rows:
        key = (r.package, r.role)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= MAX_EVIDENCE_PER_ROLE:
            out.append(r)
    return out


def _entry_points(result, repo: Repo) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """The entry points the used and present packages were reached from."""
    out: dict[str, dict[str, object]] = {}
    for path in result.paths.values():
        if not path.path:
            continue
        entry = repo.describe(path.path[-1])
        item = out.setdefault(entry, {"entry": entry, "roles": set()})
        item["roles"].add(path.role)  # type: ignore[union-attr]
    return [{"entry": k, "roles": sorted(v["roles"])} for k, v in sorted(out.items())]  # type: ignore[arg-type]


def _limits(repo: Repo, walker: Walker, report: ScanReport) -> list[str]:
    out = []
    if report.truncated:
        out.append(f"truncated: only the first {report.files_seen} files were read (code.max_files)")
    if report.skipped.get("too_large_file"):
        out.append(f"{report.skipped['too_large_file']} files over code.max_file_kb were not read")
    if repo.parse_failures:
        names = ", ".join(f"{rel} ({why})" for rel, why in sorted(repo.parse_failures.items())[:5])
        more = len(repo.parse_failures) - 5
        out.append(f"{len(repo.parse_failures)} Python files read by the regex fallback (ast cannot parse them): "
                   f"{names}" + (f" and {more} more" if more > 0 else ""))
    if walker.stopped:
        out.append(f"the evaluation-path analysis stopped early {walker.stopped} times (step budget)")
    return out
