"""C2, "does the evaluation code appear reproducible?", checked condition by condition
(CODE_LABELS.md), and the appendix B anti-features.

1. identifiable: every package in `packages_used` is named outside the code (a dependency
   file, an install or set-up script, a submodule, a `!pip install` cell, the README), is
   a copy in the release, is the Perl script a used wrapper drives, or (having no
   distribution, like the Perl script) is named by the command that runs it;
2. called: something on the evaluation path calls it (else the release computes no ROUGE);
3. nothing missing: no module or script the evaluation path imports or runs is missing
   from the release (unless a documented script downloads it), and every metric module it
   imports is declared (the catalog's modules and `[distributions]`);
4. no conflict: no two packages installing the same module are both used or both required.

True when all four hold, false when one fails (each failure names its evidence), unknown
when the scan was truncated by its caps.
"""

from __future__ import annotations

import fnmatch
import sys
from typing import Any

from review.codebases.catalog import Catalog
from review.codebases.scan.classify import Classification
from review.codebases.scan.declared import Declarations
from review.codebases.scan.evidence import Occurrences
from review.codebases.scan.paths import Walker
from review.codebases.scan.repo import Node, Repo
from review.codebases.scan.report import (COMMENTED, DECLARED, DOCS, EVALUATION, AntiFeature, Condition, Evidence,
                                          ScanReport)
from review.codebases.scan.uses import PythonUses

STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))
MAX_ROWS = 4


def judge(report: ScanReport, occ: Occurrences, cls: Classification, repo: Repo, uses: PythonUses,
          decls: Declarations, walker: Walker, catalog: Catalog) -> None:
    rows = [r for r in occ.rows if not r.superseded]
    eval_nodes = cls.eval_nodes()
    missing = _missing(repo, eval_nodes, uses, catalog)
    undeclared = _undeclared(repo, eval_nodes, decls, rows, catalog)
    report.conditions = [
        _identifiable(cls, rows, decls, uses, catalog),
        _called(cls, rows),
        _nothing_missing(missing, undeclared),
        _no_conflict(cls, rows, catalog),
    ]
    _anti_features(report, cls, rows, missing + _missing_elsewhere(repo, eval_nodes, uses, catalog), catalog)
    failed = [c for c in report.conditions if c.holds is False]
    if report.truncated:
        report.eval_reproducible = None
        report.eval_reproducible_reason = [f"unknown: truncated: the scan stopped at {report.files_seen} files "
                                           "(code.max_files); the evaluation may lie in files not read"]
    elif not cls.used and walker.stopped:
        report.eval_reproducible = None
        report.eval_reproducible_reason = ["unknown: the evaluation-path analysis ran out of budget before "
                                           "reaching an entry point"]
    else:
        report.eval_reproducible = not failed
        report.eval_reproducible_reason = (
            [f"condition {c.number} ({c.name}) fails: {'; '.join(c.reasons)}" for c in failed]
            or [f"all four conditions hold: {', '.join(cls.used)} identified, called on the evaluation path, "
                "nothing missing, no conflict"])


# ------------------------------------------------------------------ the conditions

def _identifiable(cls: Classification, rows: list[Evidence], decls: Declarations, uses: PythonUses,
                  catalog: Catalog) -> Condition:
    cond = Condition(1, "identifiable", True)
    for label in cls.used:
        found = _identified_by(label, cls, rows, decls, uses, catalog)
        if found is not None:
            cond.evidence.append(found)
            continue
        cond.holds = False
        use = next((r for r in rows if r.package == label and r.role == EVALUATION), None)
        where = f" (used at {use.file}:{use.line})" if use else ""
        rivals = _rivals(label, rows, catalog)
        note = (f"; the install instructions name {', '.join(sorted({r.package for r in rivals}))} "
                f"({rivals[0].file}:{rivals[0].line}) instead") if rivals else ""
        cond.reasons.append(f"{label}{where} is named in no dependency file, install script or README{note}")
        cond.evidence.extend(_row(r) for r in ([use] if use else []) + rivals[:1])
    return cond


def _identified_by(label: str, cls: Classification, rows: list[Evidence], decls: Declarations, uses: PythonUses,
                   catalog: Catalog) -> dict[str, Any] | None:
    own = [r for r in rows if r.package == label and not r.commented]
    for role in (DECLARED, DOCS):
        hit = next((r for r in own if r.role == role), None)
        if hit is not None:
            return _row(hit, f"{label} is {'declared' if role == DECLARED else 'named in the README'}")
    pkg = catalog.package(label)
    copy = next((r for r in own if r.source in ("vendored", "file") and r.role == EVALUATION), None)
    if copy is not None:
        return _row(copy, f"{label} is a copy in the release, and it is called")
    for r in own:
        if r.source == "import" and r.role == EVALUATION:
            fetched = r.reason.startswith("fetched by") or "fetched by" in r.reason
            if fetched:
                return _row(r, f"{label} is downloaded by a documented script")
            top = r.identifier.split(".")[0]
            for dist in catalog.distributions.get(top, []):  # reached through a toolkit (compare_mt)
                d = decls.find(dist)
                if d is not None:
                    return dict(d.as_row(), reason=f"{label} comes with {dist}, which is declared")
    if label in cls.implied and cls.implied[label] in cls.used:
        return {"reason": f"{label} is the Perl script that {cls.implied[label]} drives"}
    if pkg is not None and not pkg.requirements:
        named = next((r for r in own if r.role == EVALUATION and r.source in ("shell", "call")), None)
        if named is not None:
            return _row(named, f"{label} has no distribution: the command names it")
    if label == "custom":
        return {"reason": "written in the repository itself"}
    return None


def _rivals(label: str, rows: list[Evidence], catalog: Catalog) -> list[Evidence]:
    """Declarations of other packages installing the same module as `label`."""
    pkg = catalog.package(label)
    siblings = {p.label for m in (pkg.imports if pkg else []) for p in catalog.module_packages.get(m, [])} - {label}
    return [r for r in rows if r.package in siblings and r.role == DECLARED]


def _called(cls: Classification, rows: list[Evidence]) -> Condition:
    if cls.used:
        calls = [next(r for r in rows if r.package == label and r.role == EVALUATION)
                 for label in cls.used if label not in cls.implied]
        return Condition(2, "called", True, evidence=[_row(r) for r in calls[:MAX_ROWS]])
    cond = Condition(2, "called", False, ["nothing on the evaluation path computes the metric"])
    others = [r for r in rows if r.role not in (DOCS, COMMENTED)]
    if others:
        kinds = sorted({r.role for r in others})
        cond.reasons[0] += f" (it appears only as {', '.join(kinds)} code or declarations)"
        cond.evidence = [_row(r) for r in others[:MAX_ROWS]]
    return cond


def _nothing_missing(missing: list[dict[str, Any]], undeclared: list[dict[str, Any]]) -> Condition:
    cond = Condition(3, "nothing_missing", not missing and not undeclared)
    for m in missing:
        cond.reasons.append(f"{m['file']}:{m['line']} {m['what']} {m['name']}, which is not in the release")
    for u in undeclared:
        cond.reasons.append(f"{u['file']}:{u['line']} imports {u['name']}, whose distribution "
                            f"({' or '.join(u['dists'])}) is declared nowhere")
    cond.evidence = [{k: v for k, v in x.items() if k in ("file", "line", "text", "identifier")} for x in missing + undeclared]
    return cond


def _no_conflict(cls: Classification, rows: list[Evidence], catalog: Catalog) -> Condition:
    cond = Condition(4, "no_conflict", True)
    for module, pkgs in catalog.module_packages.items():
        labels = [p.label for p in pkgs]
        both_used = [lab for lab in labels if lab in cls.used]
        required = [lab for lab in labels if any(r.package == lab and r.role == DECLARED
                                                 and r.source in ("requirements", "install") for r in rows)]
        for kind, found in (("used", both_used), ("required", required)):
            if len(found) >= 2:
                cond.holds = False
                cond.reasons.append(f"{' and '.join(found)} are both {kind} and install the same module `{module}`")
                role = EVALUATION if kind == "used" else DECLARED
                for lab in found[:2]:
                    r = next((x for x in rows if x.package == lab and x.role == role), None)
                    if r is not None:
                        cond.evidence.append(_row(r))
                break
    return cond


# ------------------------------------------------------------------ what the evaluation path imports and runs

def _path_scopes(repo: Repo, eval_nodes: set[Node]) -> dict[str, set[str]]:
    by_file: dict[str, set[str]] = {}
    for rel, qual in eval_nodes:
        if qual.startswith(("cmd:", "<")):
            continue
        by_file.setdefault(rel, set()).add(qual)
    return by_file


def _in_scopes(scope: str, scopes: set[str]) -> bool:
    return scope == "" or any(scope == s or scope.startswith(s + ".") for s in scopes)


def _missing(repo: Repo, eval_nodes: set[Node], uses: PythonUses, catalog: Catalog,
             metric_only: bool = False) -> list[dict[str, Any]]:
    term = catalog.prelim
    out: list[dict[str, Any]] = []
    for rel, scopes in sorted(_path_scopes(repo, eval_nodes).items()):
        info = repo.module(rel)
        for b in info.bindings if info else ():
            if not (metric_only or _in_scopes(b.scope, scopes)) or repo.is_local(rel, b):
                continue
            named = term and term in b.module.lower()
            if not (named or (b.level and not metric_only)) or (not b.level and catalog.packages_of_module(b.dotted)[1]):
                continue
            missing_part = next((p for p in b.module.split(".") if p and not repo.has_name(p)), "")
            if missing_part and uses.fetch_of(missing_part) is not None:
                continue
            cell, line = info.where(b.line)
            out.append({"file": rel, "line": line, "what": "imports", "name": "." * b.level + b.module,
                        "text": info.line(b.line).strip(), "identifier": b.dotted})
        strings = [] if metric_only else repo.unresolved_strings(rel, "") + [
            x for s in scopes if s for x in repo.unresolved_strings(rel, s)]
        for line, token in strings:
            if term and term in token.lower() and not _known_file(token, catalog):
                out.append({"file": rel, "line": line, "what": "runs", "name": token, "text": token, "identifier": token})
    for (rel, qual), line, token in [] if metric_only else repo.unresolved_scripts:
        if (rel, qual) in eval_nodes and term and term in token.lower() and not _known_file(token, catalog):
            out.append({"file": rel, "line": line, "what": "runs", "name": token, "text": token, "identifier": token})
    return out


def _missing_elsewhere(repo: Repo, eval_nodes: set[Node], uses: PythonUses, catalog: Catalog) -> list[dict[str, Any]]:
    """Imports named after the metric that nothing in the release (or a download script)
    provides, off the evaluation path: an anti-feature, not a failed condition."""
    on_path = {rel for rel, _ in eval_nodes}
    out = []
    for rel in sorted(repo.parsed()):
        if rel in on_path:
            continue
        out.extend(_missing(repo, {(rel, "")}, uses, catalog, metric_only=True))
    return out


def _known_file(token: str, catalog: Catalog) -> bool:
    """A package's own file (the Perl script), which a user installs: not missing code."""
    path = "/" + token.lstrip("./")
    return any(r.search(token) for p in catalog.packages for r in p.calls + p.shell) or any(
        fnmatch.fnmatchcase(path, "*/" + g.lstrip("*/")) for p in catalog.packages for g in p.files)


def _undeclared(repo: Repo, eval_nodes: set[Node], decls: Declarations, rows: list[Evidence],
                catalog: Catalog) -> list[dict[str, Any]]:
    metric_modules = {m.split(".")[0] for m in catalog.module_packages} | set(catalog.distributions)
    named = {r.package for r in rows if r.role in (DECLARED, DOCS) and not r.commented}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for rel, scopes in sorted(_path_scopes(repo, eval_nodes).items()):
        info = repo.module(rel)
        for b in info.bindings if info else ():
            top = b.module.split(".")[0]
            if (b.level or top not in metric_modules or top in STDLIB or top in seen
                    or not _in_scopes(b.scope, scopes) or repo.is_local(rel, b)):
                continue
            dists = catalog.distributions_of(b.module)
            labels = {p.label for p in catalog.packages_of_module(b.dotted)[1]}
            if any(decls.find(d) for d in dists) or labels & named:
                continue
            seen.add(top)
            cell, line = info.where(b.line)
            out.append({"file": rel, "line": line, "name": top, "dists": dists, "text": info.line(b.line).strip(),
                        "identifier": b.dotted})
    return out


# ------------------------------------------------------------------ anti-features

def _anti_features(report: ScanReport, cls: Classification, rows: list[Evidence], missing: list[dict[str, Any]],
                   catalog: Catalog) -> None:
    distinct = [lab for lab in cls.used if lab not in cls.implied]
    if len(distinct) >= 2:
        report.anti_features.append(AntiFeature("several_packages", ", ".join(distinct)))
    for r in rows:
        if r.commented and r.package not in catalog.generic:
            report.anti_features.append(AntiFeature("commented_out_alternative",
                                                    f"commented-out {r.package} ({r.source})", r.file, r.line, r.text))
    for m in missing:
        report.anti_features.append(AntiFeature("missing_module", f"{m['what']} {m['name']}, which is not in the release",
                                                m["file"], m["line"], m["text"]))


def _row(r: Evidence, reason: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"package": r.package, "file": r.file, "line": r.line, "text": r.text, "source": r.source,
                           "role": r.role, "reason": reason or r.reason}
    if r.cell is not None:
        out["cell"] = r.cell
    return out
