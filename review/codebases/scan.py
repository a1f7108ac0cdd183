"""Infer which of the metric's packages a checkout uses, with evidence, from its files alone.

Why static reading: the review never runs the papers' code (appendix B is a static
analysis too). Every file kind a researcher uses to say "this is how we score" is read:
dependency files, Python imports and calls, shell scripts, notebooks (code and markdown
cells), READMEs, and copies of known implementations pasted into the repository. What a
package looks like is data (the metric folder's code_packages file, see `catalog.py`).

Hostile input is contained here: symlinks are never followed (those pointing outside the
checkout are counted separately), binary and oversized files are skipped, non-UTF-8 text
is decoded leniently, and at most `max_files` files are read. Nothing is executed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from review.codebases.catalog import Catalog, Package, literal_hint

SCANNER_VERSION = "1"
MAX_TEXT = 200
MAX_EVIDENCE_PER_PACKAGE = 40
BINARY_SNIFF = 8192

DEP_NAMES = re.compile(r"^(?:requirements[\w.-]*\.(?:txt|in)|setup\.py|setup\.cfg|pyproject\.toml|"
                       r"(?:environment|conda|env)[\w.-]*\.ya?ml|pipfile|pipfile\.lock|install[\w.-]*\.sh)$", re.I)
SHELL_EXT = {".sh", ".bash", ".zsh", ".cmd", ".bat", ".slurm", ".pbs", ".job"}
SHELL_NAMES = re.compile(r"^(?:makefile|dockerfile|gnumakefile|[\w.-]+\.dockerfile|dockerfile[\w.-]*)$", re.I)
README_EXT = {".md", ".rst", ".txt", ".markdown", ".org", ".adoc"}
VENDOR_EXT = {".py", ".pl", ".pm", ".perl"}
INSTALL = re.compile(r"(?:\bpip3?|\bconda|\bmamba|\bpoetry|\buv\s+pip)\s+(?:install|add)\s+([^\n#&|;]+)", re.I)
IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
FROM_IMPORT = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s+\(?\s*([\w\s,*]*)")
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


@dataclass
class Evidence:
    """One line (or file) that shows a package."""

    package: str
    file: str
    line: int | None
    text: str
    source: str  # requirements | install | url | import | call | shell | readme | vendored | file
    cell: int | None = None  # notebook cell (1-based) when the file is a notebook
    commented: bool = False
    superseded: bool = False

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["cell"] is None:
            del d["cell"]
        return d


@dataclass
class AntiFeature:
    """An appendix B anti-feature with where it was seen."""

    feature: str  # several_packages | commented_out_alternative | missing_module
    detail: str
    file: str | None = None
    line: int | None = None
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScanReport:
    target: str
    packages: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    anti_features: list[AntiFeature] = field(default_factory=list)
    prelim: bool = False
    files_seen: int = 0
    files_read: int = 0
    truncated: bool = False
    skipped: Counter[str] = field(default_factory=Counter)
    commit: str | None = None
    signature: dict[str, Any] = field(default_factory=dict)

    @property
    def anti_feature_names(self) -> list[str]:
        return sorted({a.feature for a in self.anti_features})

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "commit": self.commit, "packages": self.packages,
            "prelim": self.prelim, "anti_features": self.anti_feature_names,
            "anti_feature_evidence": [a.as_dict() for a in self.anti_features],
            "evidence": [e.as_dict() for e in self.evidence],
            "files_seen": self.files_seen, "files_read": self.files_read, "truncated": self.truncated,
            "skipped": dict(sorted(self.skipped.items())), "signature": self.signature,
        }


@dataclass
class _Text:
    """A readable text file of the checkout."""

    rel: str
    content: str


def scan_tree(root: Path, catalog: Catalog, *, max_files: int = 20_000, max_file_bytes: int = 2_000_000,
              target: str | None = None) -> ScanReport:
    """Scan one checkout directory and resolve its package list (see the catalog header)."""
    root = root.resolve()
    report = ScanReport(target=target or str(root))
    report.signature = {"scanner": f"review-code-scan-{SCANNER_VERSION}", **catalog.signature()}
    scanner = _Scanner(catalog, report)
    texts: list[_Text] = []
    paths: set[str] = set()
    for rel, path in _walk(root, report, max_files):
        paths.add(rel)
        scanner.on_path(rel)
        text = _read_text(path, report, max_file_bytes)
        if text is None:
            continue
        report.files_read += 1
        texts.append(_Text(rel, text))
    scanner.known_paths = paths
    for t in texts:
        scanner.on_text(t.rel, t.content)
    scanner.resolve()
    return report


# ---------------------------------------------------------------- walking and reading

def _walk(root: Path, report: ScanReport, max_files: int) -> Iterator[tuple[str, Path]]:
    """Regular files under root, sorted, never through a symlink, at most max_files."""
    root_str = str(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        kept = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d == ".git":
                continue
            if os.path.islink(full):
                report.skipped["symlink_outside" if not _inside(full, root_str) else "symlink"] += 1
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                report.skipped["symlink_outside" if not _inside(full, root_str) else "symlink"] += 1
                continue
            if not os.path.isfile(full):
                report.skipped["special_file"] += 1
                continue
            if report.files_seen >= max_files:
                report.truncated = True
                report.skipped["over_file_cap"] += 1
                continue
            report.files_seen += 1
            yield PurePosixPath(Path(full).relative_to(root).as_posix()).as_posix(), Path(full)


def _inside(link: str, root: str) -> bool:
    target = os.path.realpath(link)
    return target == root or target.startswith(root + os.sep)


def _read_text(path: Path, report: ScanReport, max_bytes: int) -> str | None:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            report.skipped["too_large_file"] += 1
            return None
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError:
        report.skipped["unreadable"] += 1
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        report.skipped["binary"] += 1
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        report.skipped["non_utf8_decoded_leniently"] += 1
        return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- reading the files

def _kind(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    ext = os.path.splitext(lower)[1]
    parent = rel.rsplit("/", 2)[-2].lower() if "/" in rel else ""
    if lower.endswith(".ipynb"):
        return "notebook"
    if DEP_NAMES.match(name) or (parent == "requirements" and ext in (".txt", ".in")):
        return "deps"
    if ext == ".py":
        return "python"
    if ext in SHELL_EXT or SHELL_NAMES.match(name):
        return "shell"
    if lower.startswith("readme") or ext in README_EXT:
        return "readme"
    if ext in VENDOR_EXT:
        return "perl"
    return "other"


def _comment(line: str) -> bool:
    s = line.lstrip()
    return s.startswith("#") or s.startswith("//") or s.lower().startswith("rem ")


def _clip(line: str) -> str:
    s = line.strip()
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


class _Scanner:
    def __init__(self, catalog: Catalog, report: ScanReport):
        self.catalog = catalog
        self.report = report
        self.known_paths: set[str] = set()
        self.per_package: Counter[str] = Counter()
        self.declared: set[str] = set()  # normalized distribution names seen in dependency files
        self.imports_seen: list[tuple[str, int, str, str, int | None]] = []
        pk = catalog.packages
        self._any = {
            "calls": _Prefilter([r for p in pk for r in p.calls + p.urls]),
            "shell": _Prefilter([r for p in pk for r in p.shell + p.urls]),
            "readme": _Prefilter([r for p in pk for r in p.readme + p.urls]),
            "urls": _Prefilter([r for p in pk for r in p.urls]),
        }

    # -- evidence bookkeeping
    def add(self, label: str, rel: str, line: int | None, text: str, source: str, *,
            cell: int | None = None, commented: bool = False) -> None:
        key = f"{label}|{'c' if commented else ''}"
        self.per_package[key] += 1
        if self.per_package[key] > MAX_EVIDENCE_PER_PACKAGE:
            return
        if any(e.package == label and e.file == rel and e.line == line and e.cell == cell
               and e.commented == commented for e in self.report.evidence[-20:]):
            return
        self.report.evidence.append(Evidence(label, rel, line, _clip(text), source, cell, commented))

    def on_path(self, rel: str) -> None:
        if self.catalog.prelim and self.catalog.prelim in rel.lower():
            self.report.prelim = True
        for p in self.catalog.packages:
            if p.files and p.matches_file(rel):
                self.add(p.label, rel, None, rel, "file")

    def on_text(self, rel: str, content: str) -> None:
        if self.catalog.prelim and not self.report.prelim and self.catalog.prelim in content.lower():
            self.report.prelim = True
        kind = _kind(rel)
        if kind == "notebook":
            self._notebook(rel, content)
            return
        lines = content.splitlines()
        if kind == "deps":
            self._deps(rel, lines)
            if rel.lower().endswith("setup.py") or rel.lower().endswith(".sh"):
                self._lines(rel, lines, "python" if rel.lower().endswith(".py") else "shell")
        elif kind in ("python", "shell", "readme"):
            self._lines(rel, lines, kind)
        elif kind == "other" and self._any["urls"].may(content, content.lower()):
            for i, line in enumerate(lines, 1):
                self._urls(rel, i, line, None, _comment(line))
        if kind in ("python", "perl"):
            self._vendored(rel, content)

    def _notebook(self, rel: str, content: str) -> None:
        try:
            nb = json.loads(content)
            cells = nb.get("cells") if isinstance(nb, dict) else None
            if cells is None and isinstance(nb, dict):  # nbformat 3
                cells = [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
        except (ValueError, AttributeError):
            self.report.skipped["bad_notebook"] += 1
            return
        for n, cell in enumerate(cells or [], 1):
            if not isinstance(cell, dict):
                continue
            src = cell.get("source", cell.get("input", ""))
            text = "".join(src) if isinstance(src, list) else str(src)
            lines = text.splitlines()
            if cell.get("cell_type") == "code":
                magic_shell = bool(lines) and lines[0].strip().startswith(("%%bash", "%%sh", "%%script"))
                for i, line in enumerate(lines, 1):
                    stripped = line.lstrip()
                    if magic_shell or stripped.startswith(("!", "%")):
                        self._line(rel, i, stripped.lstrip("!%"), "shell", n)
                    else:
                        self._line(rel, i, line, "python", n)
            elif cell.get("cell_type") in ("markdown", "raw"):
                for i, line in enumerate(lines, 1):
                    self._line(rel, i, line, "readme", n)

    def _deps(self, rel: str, lines: list[str]) -> None:
        for i, line in enumerate(lines, 1):
            commented = _comment(line)
            body = line.lstrip().lstrip("#").strip() if commented else line
            for rx, label in self.catalog.requirement_patterns:
                if rx.search(body):
                    if not commented:
                        self.declared.add(label)
                    self.add(label, rel, i, line, "requirements", commented=commented)
                    break
            self._urls(rel, i, line, None, commented)

    def _lines(self, rel: str, lines: list[str], kind: str) -> None:
        patterns = self._any["calls" if kind == "python" else kind]
        content = "\n".join(lines)
        lower = content.lower()
        if not (patterns.may(content, lower) or _installs_possible(lower)):
            if kind == "python" and "import" in content:  # only import lines can still matter
                for i, line in enumerate(lines, 1):
                    if "import" in line:
                        self._line(rel, i, line, kind, None)
            return
        for i, line in enumerate(lines, 1):
            self._line(rel, i, line, kind, None)

    def _line(self, rel: str, i: int, line: str, kind: str, cell: int | None) -> None:
        commented = kind != "readme" and _comment(line)
        body = line.lstrip().lstrip("#/").strip() if commented else line
        packages = self.catalog.packages
        lower = body.lower()
        if kind == "python" and "import" in lower:
            self._imports(rel, i, body, cell, commented)
        if _installs_possible(lower):
            self._installs(rel, i, body, cell, commented, "readme" if kind == "readme" else "install")
        if not self._any["calls" if kind == "python" else kind].may(body, lower):
            return
        if kind == "python":
            for p in packages:
                if any(_hit(r, body, lower) for r in p.calls):
                    self.add(p.label, rel, i, line, "call", cell=cell, commented=commented)
        elif kind == "shell":
            for p in packages:
                if any(_hit(r, body, lower) for r in p.shell):
                    self.add(p.label, rel, i, line, "shell", cell=cell, commented=commented)
        elif kind == "readme":
            for p in packages:
                if any(_hit(r, body, lower) for r in p.readme):
                    self.add(p.label, rel, i, line, "readme", cell=cell)
        if kind != "readme":
            self._urls(rel, i, body, cell, commented)

    def _installs(self, rel: str, i: int, line: str, cell: int | None, commented: bool, source: str) -> None:
        for m in INSTALL.finditer(line):
            for token in m.group(1).split():
                if token.startswith("-"):
                    continue
                for rx, label in self.catalog.requirement_patterns:
                    if rx.fullmatch(token) or rx.fullmatch(token.strip("'\"")):
                        self.add(label, rel, i, line, source, cell=cell, commented=commented)
                        break

    def _urls(self, rel: str, i: int, line: str, cell: int | None, commented: bool) -> None:
        lower = line.lower()
        if not self._any["urls"].may(line, lower):
            return
        for p in self.catalog.packages:
            if any(_hit(r, line, lower) for r in p.urls):
                self.add(p.label, rel, i, line, "url", cell=cell, commented=commented)

    def _imports(self, rel: str, i: int, line: str, cell: int | None, commented: bool) -> None:
        modules: list[str] = []
        m = IMPORT.match(line)
        if m:
            modules = [part.split()[0] for part in m.group(1).split(",") if part.strip()]
        else:
            m = FROM_IMPORT.match(line)
            if m:
                base = m.group(1)
                names = [n.strip() for n in m.group(2).replace("(", " ").split(",") if n.strip() and n.strip() != "*"]
                modules = [base] + [f"{base}.{n.split()[0]}" if not base.endswith(".") else f"{base}{n.split()[0]}"
                                    for n in names]
        if not modules:
            return
        matched = False
        for p in self.catalog.packages:
            if any(_module_matches(mod, name) for mod in modules for name in p.imports):
                self.add(p.label, rel, i, line, "import", cell=cell, commented=commented)
                matched = True
        if not commented and not matched:
            self.imports_seen.append((rel, i, line, modules[0], cell))

    def _vendored(self, rel: str, content: str) -> None:
        for p in self.catalog.packages:
            if not p.vendored:
                continue
            lower = content.lower()
            hits = [r.search(content) if (_hint(r) is None or _hint(r) in lower) else None for r in p.vendored]
            found = [h for h in hits if h]
            if len(found) >= p.vendored_min:
                first = min(found, key=lambda h: h.start())
                line_no = content.count("\n", 0, first.start()) + 1
                self.add(p.label, rel, line_no, content.splitlines()[line_no - 1] if content else "", "vendored")

    # -- resolution and anti-features
    def resolve(self) -> None:
        rep = self.report
        catalog = self.catalog
        found = {e.package for e in rep.evidence if not e.commented}
        dropped: set[str] = set()
        for label in found:
            pkg = catalog.package(label)
            if pkg is not None:
                dropped.update(pkg.supersedes)
        final = found - dropped
        if final - set(catalog.generic):
            final -= set(catalog.generic)
        order = {label: n for n, label in enumerate(catalog.labels)}
        rep.packages = sorted(final, key=lambda lab: order.get(lab, 999))
        for e in rep.evidence:
            e.superseded = not e.commented and e.package not in final
        if len(rep.packages) >= 2:
            rep.anti_features.append(AntiFeature("several_packages", ", ".join(rep.packages)))
        for e in rep.evidence:
            if e.commented:
                rep.anti_features.append(AntiFeature("commented_out_alternative",
                                                     f"commented-out {e.package} ({e.source})", e.file, e.line, e.text))
        self._missing_modules()

    def _missing_modules(self) -> None:
        term = self.catalog.prelim
        if not term:
            return
        known = self.catalog.known_modules
        for rel, i, line, module, cell in self.imports_seen:
            if term not in module.lower():
                continue
            top = module.lstrip(".").split(".")[0]
            if not module.startswith(".") and (top in STDLIB or top.lower() in known
                                               or top.lower().replace("_", "-") in self.declared):
                continue
            if self._resolvable(rel, module):
                continue
            where = f" (cell {cell})" if cell else ""
            self.report.anti_features.append(AntiFeature(
                "missing_module", f"imports {module}, which is not in the release{where}", rel, i, _clip(line)))

    def _resolvable(self, rel: str, module: str) -> bool:
        """Is the module a file or package somewhere Python could find it in the checkout?"""
        parts = rel.split("/")[:-1]
        dots = len(module) - len(module.lstrip("."))
        names = module.lstrip(".").split(".")
        if dots:
            bases = ["/".join(parts[: len(parts) - (dots - 1)])] if dots - 1 <= len(parts) else []
        else:
            bases = ["/".join(parts[:k]) for k in range(len(parts), -1, -1)] + ["src"]
        for base in bases:
            for n in range(len(names), 0, -1):
                stem = "/".join(x for x in (base, *names[:n]) if x)
                if f"{stem}.py" in self.known_paths or any(p.startswith(stem + "/") for p in self.known_paths):
                    return True
        return False


def _module_matches(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


_HINTS: dict[str, str | None] = {}


def _hint(rx: re.Pattern[str]) -> str | None:
    if rx.pattern not in _HINTS:
        _HINTS[rx.pattern] = literal_hint(rx.pattern)
    return _HINTS[rx.pattern]


def _hit(rx: re.Pattern[str], text: str, lower: str) -> bool:
    """rx.search(text), skipped when the pattern's required literal is absent."""
    hint = _hint(rx)
    if hint is not None and hint not in lower:
        return False
    return rx.search(text) is not None


class _Prefilter:
    """Could any of these patterns match? Plain substring tests first, regexes only for the rest."""

    def __init__(self, patterns: list[re.Pattern[str]]):
        self.hints = tuple(sorted({h for rx in patterns if (h := _hint(rx)) is not None}))
        self.unhinted = [rx for rx in patterns if _hint(rx) is None]

    def may(self, text: str, lower: str) -> bool:
        return any(h in lower for h in self.hints) or any(rx.search(text) for rx in self.unhinted)


def _installs_possible(lower: str) -> bool:
    return "install" in lower or " add " in lower


def package_of(catalog: Catalog, label: str) -> Package | None:
    return catalog.package(label)
