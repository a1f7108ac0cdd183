"""Each occurrence gets its role, then each package its list (CODE_LABELS.md).

A package is in `packages_used` when one of its occurrences is on the evaluation path; in
`packages_present` when it only shows up in training, reward, oracle or validation code,
in code nothing calls, in a dependency list or install line, in a vendored copy nobody
calls, or as a link to its repository; named only in documentation or only in
commented-out lines it is in neither. A wrapper of the Perl script brings `ROUGE-1.5.5`
into its list (`implies`); generic labels ("unknown pyrouge") are never an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from review.codebases.catalog import Catalog
from review.codebases.scan.evidence import Occurrences
from review.codebases.scan.paths import PathResult, Walker
from review.codebases.scan.repo import Node, Repo
from review.codebases.scan.report import (DECLARED, DOCS, EVALUATION, PRESENT_ROLES, ROLES, TRAINING, UNREACHED,
                                          VENDORED, Evidence)
from review.codebases.scan.uses import CUSTOM, PythonUses

RANK = {role: n for n, role in enumerate(ROLES)}  # lower is stronger


@dataclass
class Classification:
    used: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    paths: dict[int, PathResult] = field(default_factory=dict)  # id(row) -> the path behind its role
    implied: dict[str, str] = field(default_factory=dict)  # label -> the wrapper that brought it

    def eval_nodes(self) -> set[Node]:
        return {n for p in self.paths.values() if p.role == EVALUATION for n in p.path}


def classify(occ: Occurrences, uses: PythonUses, repo: Repo, walker: Walker, catalog: Catalog) -> Classification:
    out = Classification()
    for row in occ.rows:
        nodes = occ.anchors.get(id(row))
        if row.role or nodes is None:
            continue
        nodes = _expand(repo, nodes)
        strict = row.source == CUSTOM and not catalog.custom.neutral_is_evaluation
        result = walker.role_of(nodes, require_word=strict) if nodes else PathResult(UNREACHED)
        out.paths[id(row)] = result
        row.role = result.role
        copy = row.source in ("vendored", "file")
        if copy and result.role == UNREACHED:
            row.role, row.reason = VENDORED, "a copy of the package's code that nothing calls"
        else:
            row.reason = _reason(row, result, repo)
    for row in occ.rows:
        if row.source == "import" and not row.role:
            _import_role(row, uses.import_rows.get(id(row), []), out, repo)
        if row.superseded and row.role != DOCS:
            row.reason = "another package on the same line is the specific one"
    _lists(occ.rows, catalog, out)
    return out


def _expand(repo: Repo, nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    for rel, qual in nodes:
        if qual.startswith("<copy:"):
            out.extend(repo.copy_nodes(rel, int(qual[len("<copy:"):-1])))
        else:
            out.append((rel, qual))
    return list(dict.fromkeys(out))


def _reason(row: Evidence, result: PathResult, repo: Repo) -> str:
    prefix = f"{row.reason}; " if row.reason else ""
    if result.role == EVALUATION:
        return f"{prefix}evaluation path: {result.explain(repo)}"
    if result.role == TRAINING:
        return f"{prefix}only training/validation/data code reaches it: {result.explain(repo)}"
    if result.neutral:
        return (f"{prefix}reached only through code no word marks as evaluation (a hand-written implementation counts as "
                f"used only from evaluation code): {result.explain(repo)}")
    return f"{prefix}{'defined' if row.source == CUSTOM else 'used'} where no entry point leads" + (
        " (analysis budget ran out)" if result.stopped else "")


def _import_role(row: Evidence, use_rows: list[Evidence], out: Classification, repo: Repo) -> None:
    roles = [u.role for u in use_rows if u.role]
    if not roles:
        row.role, row.reason = UNREACHED, "imported, never used"
        return
    best = min(roles, key=lambda r: RANK[r])
    row.role = best
    first = next(u for u in use_rows if u.role == best)
    row.reason = f"as used at {first.file}:{first.line}" + (f"; {row.reason}" if row.reason else "")
    if id(first) in out.paths:
        out.paths[id(row)] = out.paths[id(first)]


def _lists(rows: list[Evidence], catalog: Catalog, out: Classification) -> None:
    generic = set(catalog.generic)
    used: set[str] = set()
    present: set[str] = set()
    for r in rows:
        if r.superseded or r.commented or r.package in generic:
            continue
        if r.role == EVALUATION:
            used.add(r.package)
        elif r.role in PRESENT_ROLES:
            present.add(r.package)
    if catalog.custom.secondary_to_packages and CUSTOM in used and used - {CUSTOM}:
        used.discard(CUSTOM)  # a package produces the scores; the hand-written one is a helper (oracle, reward, check)
        present.add(CUSTOM)
        _demote(rows, CUSTOM, "a package on the evaluation path produces the scores; this implementation is a helper")
    for source, target in ((used, used), (present, present)):
        for label in sorted(source):
            p = catalog.package(label)
            for implied in p.implies if p else ():
                if implied not in used:
                    target.add(implied)
                    out.implied.setdefault(implied, label)
    present -= used
    _implied_rows(rows, out, used | present)
    order = {label: n for n, label in enumerate(catalog.labels)}
    key = lambda lab: (order.get(lab, len(order)), lab)  # noqa: E731  (custom and unknown labels last)
    out.used = sorted(used, key=key)
    out.present = sorted(present, key=key)


def _demote(rows: list[Evidence], label: str, why: str) -> None:
    for r in rows:
        if r.package == label and r.role == EVALUATION:
            r.role, r.reason = UNREACHED, f"{why}; {r.reason}" if r.reason else why


def _implied_rows(rows: list[Evidence], out: Classification, listed: set[str]) -> None:
    """Evidence for a label a wrapper brings (the Perl script): the wrapper's strongest row."""
    for implied, wrapper in out.implied.items():
        if implied not in listed:
            continue
        candidates = [r for r in rows if r.package == wrapper and not r.superseded and not r.commented and r.role]
        if not candidates:
            continue
        best = min(candidates, key=lambda r: RANK[r.role])
        rows.append(Evidence(implied, best.file, best.line, best.text, "implied", best.cell, identifier=wrapper,
                             role=best.role, reason=f"the Perl script that {wrapper} drives ({best.role} there)",
                             scope=best.scope, parser=best.parser))


def declared_rows(rows: list[Evidence]) -> dict[str, Evidence]:
    """The first line declaring each package (requirements, install, set-up or link)."""
    out: dict[str, Evidence] = {}
    for r in rows:
        if r.role == DECLARED and not r.superseded and not r.commented:
            out.setdefault(r.package, r)
    return out
