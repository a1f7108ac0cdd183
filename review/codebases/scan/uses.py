"""Where Python code (files and notebook cells) uses a package.

An import of a catalogued module binds names; the lines that use those names (and the
names assigned from them: `self.rouge = Rouge()` then `self.rouge.get_scores(...)`) are the
uses, each anchored to the function it sits in. An import of a module that exists in the
repository is the repository's own code (or a vendored copy, followed by the graph), not a
package. When several packages install the module (`rouge`: pltrdy's rouge and py-rouge;
`pyrouge`: bheinzerling's, pltrdy's and andersjo's), the call shapes at the use decide
(`api` in the catalog), then the distribution the repository declares, then the module's
default. Lines that use a package without importing it (`load_metric('rouge')`, a
subprocess running the Perl script) and ROUGE implementations written in the repository
(`custom`) are found here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from review.codebases.catalog import Catalog, Package
from review.codebases.scan.evidence import Occurrences
from review.codebases.scan.python import Binding, ModuleInfo, Ref
from review.codebases.scan.repo import Repo
from review.codebases.scan.report import Evidence
from review.codebases.scan.words import Prefilter, clip, hint, hit

CUSTOM = "custom"
DOWNLOAD = re.compile(r"\b(?:wget|curl|git\s+clone|git\s+submodule|svn\s+(?:co|checkout)|download\w*|cp|mv|unzip|tar)\b")


@dataclass(frozen=True)
class Fetched:
    """A module missing from the tree that a script of the repository downloads."""

    label: str
    script: str
    line: int


class PythonUses:
    def __init__(self, catalog: Catalog, repo: Repo, occ: Occurrences, declared: dict[str, Evidence]):
        self.catalog = catalog
        self.repo = repo
        self.occ = occ
        self.declared = declared  # label -> first declaration row
        self.any_calls = Prefilter([r for p in catalog.packages for r in p.calls])
        self.any_shell = Prefilter([r for p in catalog.packages for r in p.shell])
        tops = {m.split(".")[0].lower() for p in catalog.packages for m in p.imports}
        self.words = tuple(sorted(tops | {catalog.prelim} - {""}))
        self.fetched: dict[tuple[str, int], Fetched] = {}
        self.import_rows: dict[int, list[Evidence]] = {}  # id(import row) -> its use rows

    def may_matter(self, rel: str) -> bool:
        content = self.repo.code_text(rel)
        lower = content.lower()
        return any(w in lower for w in self.words) or self.any_calls.may(content, lower)

    def collect(self, rel: str) -> None:
        info = self.repo.module(rel)
        if info is None:
            return
        lines_used: set[int] = set()
        for b in info.bindings:
            if b.name == "*" and not b.module:
                continue
            lines_used |= self._binding(rel, info, b)
        lines_used |= self._calls(rel, info)
        lines_used |= self._command_strings(rel, info)
        if not self.repo.is_vendored(rel):
            self._custom(rel, info, lines_used)

    # ------------------------------------------------------------------ imports and their uses

    def _binding(self, rel: str, info: ModuleInfo, b: Binding) -> set[int]:
        if self.repo.is_local(rel, b):
            return set()
        module, pkgs = self.catalog.packages_of_module(b.dotted) if b.level == 0 else ("", [])
        fetched = None
        if not pkgs:
            fetched = self._fetched(rel, b)
            if fetched is None or not fetched.label:
                return set()
            pkgs = [p for p in [self.catalog.package(fetched.label)] if p is not None]
            module = b.dotted
        uses = self._uses(info, b)
        groups: dict[str, list[tuple[Ref, bool]]] = {}
        for ref, derived in uses:
            groups.setdefault(ref.scope, []).append((ref, derived))
        use_rows: list[Evidence] = []
        for scope, refs in groups.items():
            pkg, why = self._decide(info, pkgs, module, refs, scope)
            for ref, derived in refs:
                if derived and any(r.stmt == ref.stmt for r, d in refs if not d):
                    continue
                cell, line = info.where(ref.stmt[0])
                row = Evidence(pkg.label, rel, line, clip(info.line(ref.stmt[0])), "call", cell,
                               identifier=b.name if not derived else f"{b.name} (assigned)", scope=scope,
                               parser=info.parser, reason=why)
                use_rows.append(self.occ.add(row, [(rel, scope)]))
        label = use_rows[0].package if use_rows else self._decide(info, pkgs, module, [], b.scope)[0].label
        cell, line = info.where(b.line)
        why = f"fetched by {fetched.script}:{fetched.line}" if fetched else ""
        row = Evidence(label, rel, line, clip(info.line(b.line)), "import", cell, identifier=b.dotted, scope=b.scope,
                       parser=info.parser, reason=why)
        row = self.occ.add(row)
        self.import_rows.setdefault(id(row), []).extend(use_rows)
        return {b.line} | {r.stmt[0] for r, _ in uses}

    def _uses(self, info: ModuleInfo, b: Binding) -> list[tuple[Ref, bool]]:
        """Lines using the bound name (those it is the nearest binding for), then lines
        using names assigned from it (`r = Rouge155()` ... `r.convert_and_evaluate()`)."""
        same = [x for x in info.bindings if x.name == b.name]
        out = [(r, False) for r in info.names.get(b.name, []) if _owner(r, same) is b]
        for ref, _ in list(out):
            for name in info.assigned.get(ref.stmt[0], []):
                for r in info.names.get(name, []) + [a for a in info.attrs.get(name, []) if a.root in ("self", "cls")]:
                    if r.stmt != ref.stmt and r.line > ref.stmt[0] and _visible(ref.scope, r.scope, r.root):
                        out.append((r, True))
        return out

    def _decide(self, info: ModuleInfo, pkgs: list[Package], module: str, refs: list[tuple[Ref, bool]],
                scope: str) -> tuple[Package, str]:
        """Which of the packages installing a module this use is, and why."""
        if len(pkgs) == 1:
            return pkgs[0], ""
        levels = [("the call", {r.stmt for r, d in refs if not d}), ("its later calls", {r.stmt for r, d in refs if d})]
        d = info.definition(scope) if scope else None
        if d is not None:
            levels.append((f"{scope}()", {(d.start, d.end)}))
        for what, spans in levels:
            text = "\n".join(info.text(a, b) for a, b in sorted(spans))
            if not text:
                continue
            scores = {p.label: [m.group(0) for r in p.api if (m := r.search(text))] for p in pkgs}
            best = max(len(v) for v in scores.values())
            if best:
                narrowed = [p for p in pkgs if len(scores[p.label]) == best]
                chosen, why = self._by_declaration(narrowed, module)
                shape = ", ".join(f"`{s}`" for s in scores[chosen.label][:3])
                excluded = [p.label for p in pkgs if p not in narrowed and p.label in self.declared]
                note = f"; the API rules out declared {', '.join(excluded)}" if excluded else ""
                return chosen, f"API of {what}: {shape}{'; ' + why if why else ''}{note}"
        return self._by_declaration(pkgs, module)

    def _by_declaration(self, pkgs: list[Package], module: str) -> tuple[Package, str]:
        declared = [p for p in pkgs if p.label in self.declared]
        if declared:
            hidden = {h for p in declared for h in p.supersedes}
            kept = [p for p in declared if p.label not in hidden] or declared
            row = self.declared[kept[0].label]
            return kept[0], f"declared in {row.file}:{row.line}" if len(pkgs) > 1 else ""
        default = next((p for p in pkgs if module.split(".")[0] in p.default_for or module in p.default_for), None)
        if default is not None and len(pkgs) > 1:
            return default, f"the default package of module `{module.split('.')[0]}`"
        return pkgs[0], ""

    def _fetched(self, rel: str, b: Binding) -> Fetched | None:
        """A module named after the metric, missing from the tree, that a script downloads
        while naming the package it comes from (a documented download step)."""
        term = self.catalog.prelim
        named = next((p for p in b.module.split(".") if p and term and term in p.lower()), None)
        if named is None:
            return None
        key = (rel, b.line)
        if key not in self.fetched:
            self.fetched[key] = self.fetch_of(named)  # type: ignore[assignment]
        return self.fetched[key]

    def fetch_of(self, name: str) -> Fetched | None:
        """The script line that downloads or copies something called `name` into place, with
        the package its URLs name ("" when they name none)."""
        for f in self.repo.files.values():
            if f.kind not in ("shell", "deps", "notebook") or name not in f.content:
                continue
            lines = f.content.splitlines()
            if not any(DOWNLOAD.search(ln) for ln in lines):
                continue
            line = next(i for i, ln in enumerate(lines, 1) if name in ln)
            label = next((e.package for e in self.occ.rows if e.file == f.rel and e.source in ("url", "install")
                          and not e.commented and e.package not in self.catalog.generic), "")
            return Fetched(label, f.rel, line)
        return None

    # ------------------------------------------------------------------ calls without an import

    def _calls(self, rel: str, info: ModuleInfo) -> set[int]:
        used: set[int] = set()
        text = "\n".join(info.lines)
        if not self.any_calls.may(text, text.lower()):
            return used
        for n, line in enumerate(info.lines, 1):
            lower = line.lower()
            if line.lstrip().startswith("#") or not self.any_calls.may(line, lower):
                continue
            for p in self.catalog.packages:
                m = next((m for r in p.calls if (m := hit(r, line, lower))), None)
                if m:
                    scope = info.scope_at(n)
                    cell, ln = info.where(n)
                    self.occ.add(Evidence(p.label, rel, ln, clip(line), "call", cell, identifier=m.group(0),
                                          scope=scope, parser=info.parser), [(rel, scope)])
                    used.add(n)
        return used

    def _command_strings(self, rel: str, info: ModuleInfo) -> set[int]:
        """A tool run from Python: `os.system('files2rouge ref hyp')`, `subprocess.run([...])`."""
        used: set[int] = set()
        for scope, n, value in info.strings:
            lower = value.lower()
            if not self.any_shell.may(value, lower):
                continue
            for p in self.catalog.packages:
                m = next((m for r in p.shell if (m := hit(r, value, lower))), None)
                if m and not any(r.search(info.line(n)) for r in p.calls):
                    cell, ln = info.where(n)
                    self.occ.add(Evidence(p.label, rel, ln, clip(info.line(n)), "call", cell, identifier=m.group(0).strip(),
                                          scope=scope, parser=info.parser, reason="a command run from Python"),
                                 [(rel, scope)])
                    used.add(n)
        return used

    # ------------------------------------------------------------------ ROUGE written in the repository

    def _custom(self, rel: str, info: ModuleInfo, used: set[int]) -> None:
        custom = self.catalog.custom
        if not custom.names or not custom.body:
            return
        copied = self.repo.vendored_cells.get(rel, set())
        found: list[str] = []
        for d in info.defs:
            if d.kind != "function" or not any(r.search(d.name) for r in custom.names):
                continue
            if any(d.qual.startswith(q + ".") for q in found) or any(d.start <= n <= d.end for n in used):
                continue
            if copied and info.where(d.start)[0] in copied:
                continue
            body = info.text(d.start, d.end)
            lower = body.lower()
            signals = [m.group(0) for r in custom.body if ((h := hint(r)) is None or h in lower) and (m := r.search(body))]
            if not signals:
                continue
            found.append(d.qual)
            cell, line = info.where(d.start)
            self.occ.add(Evidence(CUSTOM, rel, line, clip(info.line(d.start)), "custom", cell, identifier=d.qual,
                                  scope=d.qual, parser=info.parser,
                                  reason=f"computes it itself ({', '.join(dict.fromkeys(signals))})"), [(rel, d.qual)])


def _owner(ref: Ref, bindings: list[Binding]) -> Binding | None:
    """The import a use refers to: the nearest visible one before it (else any visible)."""
    visible = [b for b in bindings if b.scope == "" or ref.scope == b.scope or ref.scope.startswith(b.scope + ".")]
    if not visible:
        return None
    before = [b for b in visible if b.line <= ref.line]
    pool = before or visible
    return max(pool, key=lambda b: (b.scope.count(".") + (1 if b.scope else 0), b.line))


def _visible(assigned_in: str, used_in: str, root: str | None) -> bool:
    if root in ("self", "cls"):
        cls = assigned_in.rsplit(".", 1)[0] if "." in assigned_in else assigned_in
        return used_in == cls or used_in.startswith(cls + ".")
    return assigned_in == "" or used_in == assigned_in or used_in.startswith(assigned_in + ".")
