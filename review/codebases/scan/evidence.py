"""Evidence outside Python code: dependency files, install and set-up lines, links,
README mentions, commands that run a ROUGE tool, vendored copies and commented-out lines.

Each row says what it shows (`source`) and, where the answer does not depend on the code
around it, where it counts (`role`): a requirement or a link to the package's repository
declares it, a README sentence only names it, a commented-out line is an alternative left
behind. Commands that run a tool (`files2rouge ref hyp`, `perl ROUGE-1.5.5.pl`) and copies
of a package's code are anchored to a node of the repository graph; the evaluation-path
analysis decides their role.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from review.codebases.catalog import Catalog
from review.codebases.scan.commands import FENCE
from review.codebases.scan.declared import INSTALL, TIP, dist_of_token
from review.codebases.scan.files import TextFile
from review.codebases.scan.python import notebook_cells
from review.codebases.scan.repo import Node, Repo
from review.codebases.scan.report import COMMENTED, DECLARED, DOCS, Evidence, ScanReport
from review.codebases.scan.words import Prefilter, clip, hint, hit, is_comment, uncomment

INLINE_CODE = re.compile(r"`([^`]+)`")


@dataclass
class Occurrences:
    """Every row found so far (the report shows a capped number per package and role) and,
    for rows whose role the code decides, the graph nodes to walk from."""

    rows: list[Evidence] = field(default_factory=list)
    anchors: dict[int, list[Node]] = field(default_factory=dict)  # id(row) -> nodes

    def add(self, row: Evidence, nodes: list[Node] | None = None) -> Evidence:
        """Add a row, or return the row already recorded for the same line and source."""
        for e in self.rows[-12:]:
            if (e.package, e.file, e.line, e.cell, e.source, e.commented) == (row.package, row.file, row.line, row.cell,
                                                                              row.source, row.commented):
                if nodes:
                    self.anchors.setdefault(id(e), []).extend(n for n in nodes if n not in self.anchors.get(id(e), []))
                return e
        self.rows.append(row)
        if nodes is not None:
            self.anchors[id(row)] = list(nodes)
        return row


class Collector:
    """Reads the non-Python evidence of every file into `occ`."""

    def __init__(self, catalog: Catalog, repo: Repo, report: ScanReport, occ: Occurrences):
        self.catalog = catalog
        self.repo = repo
        self.report = report
        self.occ = occ
        pk = catalog.packages
        self.any_urls = Prefilter([r for p in pk for r in p.urls])
        self.any_shell = Prefilter([r for p in pk for r in p.shell + p.setup])
        self.any_readme = Prefilter([r for p in pk for r in p.readme + p.urls + p.shell + p.setup])
        self.any_calls = Prefilter([r for p in pk for r in p.calls])

    # ------------------------------------------------------------------ per file

    def collect_paths(self, paths: set[str]) -> None:
        """Every path, readable or not (a vendored jar or WordNet database is binary)."""
        for rel in sorted(paths):
            self._by_path(rel)

    def collect(self, t: TextFile) -> None:
        lower = t.content.lower()
        if self.catalog.prelim and self.catalog.prelim in lower:
            self.report.prelim = True
        if t.kind == "notebook":
            self._notebook(t)
        elif t.kind == "deps":
            self._deps(t)
        elif t.kind == "shell":
            self._shell_lines(t.rel, t.content.splitlines(), None, setup_only=False)
        elif t.kind == "readme" and (self.any_readme.may(t.content, lower) or "install" in lower):
            self._readme(t.rel, t.content.splitlines(), None)
        elif t.kind == "python":
            self._commented_lines(t.rel, t.content.splitlines(), None)
        elif t.kind == "code":
            self._code(t)
        if t.kind in ("python", "perl"):
            self._vendored(t.rel, t.content, None)
        if t.kind == "notebook":
            self._vendored_cells(t)

    def _by_path(self, rel: str) -> None:
        if self.catalog.prelim and self.catalog.prelim in rel.lower():
            self.report.prelim = True
        path = "/" + rel
        for p in self.catalog.packages:
            if p.files and any(fnmatch.fnmatchcase(path, "/" + g.lstrip("*/")) or fnmatch.fnmatchcase(path, "*/" + g.lstrip("*/"))
                               for g in p.files):
                self.repo.vendored_files.add(rel)
                self.occ.add(Evidence(p.label, rel, None, rel, "file", identifier="file name"), [(rel, "")])

    # ------------------------------------------------------------------ dependency files

    def _deps(self, t: TextFile) -> None:
        if t.rel.lower().endswith((".sh", ".bash")):  # an install script: everything in it sets up
            self._shell_lines(t.rel, t.content.splitlines(), None, setup_only=True)
            return
        for i, line in enumerate(t.content.splitlines(), 1):
            commented = is_comment(line)
            body = uncomment(line) if commented else line
            found = []
            labels: set[str] = set()  # `install_requires=['pyrouge', 'rouge_papier']`: every package on the line
            for rx, label in self.catalog.requirement_patterns:
                if label not in labels and rx.search(body):
                    labels.add(label)
                    found.append(self._declared(label, t.rel, i, line, "requirements", commented, rx.pattern))
            found += self._urls(t.rel, i, body, None, commented)
            self._supersede(found)

    # ------------------------------------------------------------------ shell

    def _shell_lines(self, rel: str, lines: list[str], cell: int | None, setup_only: bool,
                     node: Node | None = None) -> None:
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            commented = is_comment(line)
            body = uncomment(line) if commented else line
            lower = body.lower()
            found = self._installs(rel, i, body, cell, commented)
            found += self._urls(rel, i, body, cell, commented, git_only=True)
            found += self._setup(rel, i, body, cell, commented, also_shell=setup_only)
            if not setup_only and self.any_shell.may(body, lower):
                for p in self.catalog.packages:
                    m = next((m for r in p.shell if (m := hit(r, body, lower))), None)
                    if m:
                        row = Evidence(p.label, rel, i, clip(line), "shell", cell, commented, identifier=m.group(0).strip())
                        if commented:
                            row.role = COMMENTED
                        found.append(self.occ.add(row, None if commented else [node or (rel, "")]))
            self._supersede(found)

    def _installs(self, rel: str, i: int, line: str, cell: int | None, commented: bool) -> list[Evidence]:
        lower = line.lower()
        if "install" not in lower and " add " not in lower:
            return []
        out = []
        for m in INSTALL.finditer(line):
            for token in m.group(1).split():
                dist = dist_of_token(token)
                for rx, label in self.catalog.requirement_patterns if dist else ():
                    if rx.fullmatch(dist) or rx.fullmatch(token.strip("'\"")):
                        out.append(self._declared(label, rel, i, line, "install", commented, token, cell))
                        break
        return out

    def _setup(self, rel: str, i: int, line: str, cell: int | None, commented: bool, also_shell: bool) -> list[Evidence]:
        lower = line.lower()
        if not self.any_shell.may(line, lower):
            return []
        out = []
        for p in self.catalog.packages:
            pats = p.setup + (p.shell if also_shell else [])
            m = next((m for r in pats if (m := hit(r, line, lower))), None)
            if m:
                out.append(self._declared(p.label, rel, i, line, "setup", commented, m.group(0).strip(), cell))
        return out

    def _urls(self, rel: str, i: int, line: str, cell: int | None, commented: bool, git_only: bool = False,
              source: str = "url") -> list[Evidence]:
        lower = line.lower()
        if not self.any_urls.may(line, lower):
            return []
        if git_only and not any(w in lower for w in ("git", "wget", "curl", "http")):
            return []
        out = []
        for p in self.catalog.packages:
            for r in p.urls:
                m = hit(r, line, lower)
                if m and not TIP.match(_after_repo(line, m.end())):
                    out.append(self._declared(p.label, rel, i, line, source, commented, m.group(0), cell))
                    break
        return out

    def _declared(self, label: str, rel: str, i: int, line: str, source: str, commented: bool, identifier: str,
                  cell: int | None = None) -> Evidence:
        row = Evidence(label, rel, i, clip(line), source, cell, commented, identifier=identifier,
                       role=COMMENTED if commented else DECLARED)
        if not commented:
            row.reason = f"declared ({source})"
        return self.occ.add(row)

    def _supersede(self, rows: list[Evidence]) -> None:
        """On one line, a specific package hides the labels it supersedes (a link to a fork
        says "pyrouge" too)."""
        labels = {r.package for r in rows}
        hidden = {h for lab in labels if (p := self.catalog.package(lab)) for h in p.supersedes} & labels
        for r in rows:
            if r.package in hidden:
                r.superseded = True

    # ------------------------------------------------------------------ READMEs and notebooks

    def _readme(self, rel: str, lines: list[str], cell: int | None) -> None:
        in_fence = False
        for i, line in enumerate(lines, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            lower = line.lower()
            if not self.any_readme.may(line, lower) and "install" not in lower:
                continue
            code = line if in_fence or line.lstrip().startswith("$ ") else " ; ".join(INLINE_CODE.findall(line))
            found: list[Evidence] = []
            found += self._installs(rel, i, line, cell, False)
            found += self._urls(rel, i, line, cell, False, source="url")
            if code:
                found += self._setup(rel, i, code, cell, False, also_shell=False)
                found += self._readme_tools(rel, i, line, code, cell)
            for p in self.catalog.packages:
                m = next((m for r in p.readme if (m := hit(r, line, lower))), None)
                if m:
                    found.append(self.occ.add(Evidence(p.label, rel, i, clip(line), "readme", cell,
                                                       identifier=m.group(0), role=DOCS,
                                                       reason="named in the documentation")))
            self._supersede(found)

    def _readme_tools(self, rel: str, i: int, line: str, code: str, cell: int | None) -> list[Evidence]:
        """A documented command that runs a ROUGE tool: an entry point of its own."""
        lower = code.lower()
        out: list[Evidence] = []
        if not self.any_shell.may(code, lower):
            return out
        for p in self.catalog.packages:
            m = next((m for r in p.shell if (m := hit(r, code, lower))), None)
            if m:
                node = self._command_node(rel, i, code, cell)
                out.append(self.occ.add(Evidence(p.label, rel, i, clip(line), "shell", cell,
                                                 identifier=m.group(0).strip()), [node]))
        return out

    def _command_node(self, rel: str, i: int, code: str, cell: int | None) -> Node:
        return self.repo.command_node(rel, i, code, cell)

    def _notebook(self, t: TextFile) -> None:
        cells = notebook_cells(t.content)
        if cells is None:
            self.report.skipped["bad_notebook"] += 1
            self.report.limits.append(f"{t.rel}: not valid notebook JSON, not read")
            return
        for n, kind, source in cells:
            lines = source.splitlines()
            if kind in ("markdown", "raw"):
                self._readme(t.rel, lines, n)
            elif kind == "code":
                magic = bool(lines) and lines[0].lstrip().startswith(("%%bash", "%%sh", "%%script"))
                shell = [ln.lstrip().lstrip("!%") if (magic or ln.lstrip().startswith(("!", "%"))) else "" for ln in lines]
                self._shell_lines(t.rel, shell, n, setup_only=False)
                self._commented_lines(t.rel, lines, n)

    # ------------------------------------------------------------------ code

    def _commented_lines(self, rel: str, lines: list[str], cell: int | None) -> None:
        """Commented-out imports and calls of a package: alternatives left behind."""
        text = "\n".join(lines)
        if "#" not in text:
            return
        for i, line in enumerate(lines, 1):
            if "#" not in line or not is_comment(line):
                continue
            body = uncomment(line)
            lower = body.lower()
            m = re.match(r"(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", body)
            labels = []
            if m:
                _, pkgs = self.catalog.packages_of_module(m.group(1) or m.group(2))
                labels = [p.label for p in pkgs[:1]]
            if not labels and self.any_calls.may(body, lower):
                labels = [p.label for p in self.catalog.packages if any(hit(r, body, lower) for r in p.calls)]
            for label in labels:
                self.occ.add(Evidence(label, rel, i, clip(line), "call", cell, True, identifier=clip(body)[:60],
                                      role=COMMENTED, reason="commented out"))

    def _code(self, t: TextFile) -> None:
        """Other languages (Lua, C++, ...): tool paths in their strings, and a ROUGE written
        in them, recognised by the file's name."""
        name = t.rel.rsplit("/", 1)[-1]
        ext = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
        if (ext in self.catalog.custom.source_ext and any(r.search(name) for r in self.catalog.custom.names)
                and not self.repo.is_vendored(t.rel)):
            self.occ.add(Evidence("custom", t.rel, None, t.rel, "custom", identifier=name,
                                  reason=f"a {ext} file named after the metric"), [(t.rel, "")])
        lower = t.content.lower()
        if not self.any_calls.may(t.content, lower):
            return
        for i, line in enumerate(t.content.splitlines(), 1):
            ll = line.lower()
            if not self.any_calls.may(line, ll):
                continue
            for p in self.catalog.packages:
                m = next((m for r in p.calls if (m := hit(r, line, ll))), None)
                if m:
                    commented = is_comment(line)
                    row = Evidence(p.label, t.rel, i, clip(line), "call", None, commented, identifier=m.group(0),
                                   role=COMMENTED if commented else "")
                    self.occ.add(row, None if commented else [(t.rel, "")])

    def _vendored(self, rel: str, content: str, cell: int | None) -> None:
        """A copy of a package's code, by its content (at least `vendored_min` signatures)."""
        for p, found in self._signatures(content):
            first = min(found, key=lambda h: h.start())
            line_no = content.count("\n", 0, first.start()) + 1
            self.repo.vendored_files.add(rel)
            self.occ.add(Evidence(p.label, rel, line_no, clip(content.splitlines()[line_no - 1]), "vendored", cell,
                                  identifier=f"{len(found)} signatures of {p.label}"), [(rel, "<copy:0>")])

    def _vendored_cells(self, t: TextFile) -> None:
        """A copy pasted into a notebook, possibly over several cells: the cells holding its
        signatures are the copy."""
        cells = [(n, src) for n, kind, src in notebook_cells(t.content) or [] if kind == "code"]
        text = "\n".join(src for _, src in cells)
        for p, found in self._signatures(text):
            holding = [n for n, src in cells if any(r.search(src) for r in p.vendored)]
            self.repo.vendored_cells.setdefault(t.rel, set()).update(holding)
            n, src = next((n, src) for n, src in cells if n == holding[0])
            m = next(m for r in p.vendored if (m := r.search(src)))
            line_no = src.count("\n", 0, m.start()) + 1
            self.occ.add(Evidence(p.label, t.rel, line_no, clip(src.splitlines()[line_no - 1]), "vendored", n,
                                  identifier=f"{len(found)} signatures of {p.label}"),
                         [(t.rel, f"<copy:{c}>") for c in holding])

    def _signatures(self, content: str) -> list[tuple[object, list[re.Match[str]]]]:
        lower = content.lower()
        out = []
        for p in self.catalog.packages:
            if not p.vendored:
                continue
            found = [m for r in p.vendored if (h := hint(r)) is None or h in lower if (m := r.search(content))]
            if len(found) >= p.vendored_min:
                out.append((p, found))
        return out


def _after_repo(line: str, end: int) -> str:
    """What follows a matched repository name in a URL: `/issues/9` makes it a tip."""
    rest = line[end:]
    m = re.match(r"[\w.-]*", rest)
    return rest[m.end():] if m else rest
