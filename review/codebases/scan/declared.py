"""What a repository declares it needs: distributions in dependency files, `pip install`
lines, cloned or linked repositories, and packages listed in a README's requirements.

C2 asks two questions of it: is each package in `packages_used` identified outside the
code (condition 1), and is every third-party module the evaluation imports declared
(condition 3)? Both are answered here, with the line that declares it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from review.codebases.catalog import Catalog, normalize_dist
from review.codebases.scan.commands import readme_headings
from review.codebases.scan.files import TextFile
from review.codebases.scan.python import notebook_cells
from review.codebases.scan.words import clip, is_comment, words

INSTALL = re.compile(r"(?:\bpip3?|\bpython3?\s+-m\s+pip|\bconda|\bmamba|\bpoetry|\buv\s+pip)\s+(?:install|add)\s+"
                     r"([^\n#&|;`]+)", re.I)
REPO_URL = re.compile(r"(?:github\.com|gitlab\.com|bitbucket\.org)[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?(?=$|[/\s#@'\")\]]|\.git)",
                      re.I)
PYPI_URL = re.compile(r"pypi\.(?:python\.)?org/(?:project|pypi)/([\w.-]+)", re.I)
REQUIREMENT_LINE = re.compile(r"^\s*(?:[-*+|]|\d+[.)]\s|[\w.-]+\s*(?:[=<>~!]=?\s*[\w.*]+)?\s*$)")
TIP = re.compile(r"^/(?:issues|pull|discussions|wiki|commit)\b", re.I)


@dataclass(frozen=True)
class Declaration:
    """A line that declares a distribution."""

    dist: str  # PEP 503 name
    file: str
    line: int
    text: str
    how: str  # requirements | install | url | readme
    cell: int | None = None

    def as_row(self) -> dict[str, object]:
        row: dict[str, object] = {"file": self.file, "line": self.line, "text": self.text, "source": self.how,
                                  "identifier": self.dist}
        if self.cell is not None:
            row["cell"] = self.cell
        return row


class Declarations:
    """Every distribution the repository declares, found once and looked up by name."""

    def __init__(self, texts: list[TextFile], catalog: Catalog):
        self.catalog = catalog
        self.by_dist: dict[str, list[Declaration]] = {}
        self._dep_lines: list[tuple[TextFile, int, str]] = []
        self._readme_req: list[tuple[str, int, str]] = []
        for t in texts:
            self._read(t)

    def _add(self, dist: str, decl: Declaration) -> None:
        self.by_dist.setdefault(normalize_dist(dist), []).append(decl)

    def _read(self, t: TextFile) -> None:
        if t.kind not in ("deps", "readme") and not _installs_something(t.content):
            return
        if t.kind == "notebook":
            for n, kind, source in notebook_cells(t.content) or []:
                if kind == "code":
                    for i, line in enumerate(source.splitlines(), 1):
                        self._line(t.rel, i, line, "install", n)
            return
        lines = t.content.splitlines()
        if t.kind == "deps":
            for i, line in enumerate(lines, 1):
                if not is_comment(line):
                    self._dep_lines.append((t, i, line))
                    for m in REPO_URL.finditer(line):
                        self._add(m.group(2), Declaration(normalize_dist(m.group(2)), t.rel, i, clip(line), "url"))
        if t.kind == "readme":
            self._requirement_sections(t, lines)
        if t.kind not in ("deps", "shell", "readme", "python"):
            return
        for i, line in enumerate(lines, 1):
            lower = line.lower()
            if any(w in lower for w in ("install", "git", "pypi", " add ")) and (t.kind == "readme" or not is_comment(line)):
                self._line(t.rel, i, line, "install" if t.kind != "readme" else "readme", None)

    def _requirement_sections(self, t: TextFile, lines: list[str]) -> None:
        """List items, table rows, code and bare `name==version` lines under a README heading
        such as "Requirements" or "Installation" (prose there, "download the datasets", is not
        a requirement)."""
        wanted = self.catalog.roles.requirement_headings
        headings = readme_headings(t.content)
        for i, line in enumerate(lines, 1):
            h = headings[i - 1]
            if h and line.strip() and h != line.strip().lstrip("#").strip() and wanted.any(words(h)) and (
                    REQUIREMENT_LINE.match(line) or "`" in line):
                self._readme_req.append((t.rel, i, line))

    def _line(self, rel: str, i: int, line: str, how: str, cell: int | None) -> None:
        lower = line.lower()
        if "install" in lower or " add " in lower:
            for m in INSTALL.finditer(line):
                for token in m.group(1).split():
                    dist = dist_of_token(token)
                    if dist:
                        self._add(dist, Declaration(dist, rel, i, clip(line), "install", cell))
        if "git" in lower and ("clone" in lower or "git+" in lower or "submodule" in lower):
            for m in REPO_URL.finditer(line):
                self._add(m.group(2), Declaration(normalize_dist(m.group(2)), rel, i, clip(line), "url", cell))
        if how == "readme" and ("github" in lower or "pypi" in lower):
            for m in PYPI_URL.finditer(line):
                self._add(m.group(1), Declaration(normalize_dist(m.group(1)), rel, i, clip(line), "readme", cell))
            for m in REPO_URL.finditer(line):
                if not TIP.match(line[m.end():]):
                    self._add(m.group(2), Declaration(normalize_dist(m.group(2)), rel, i, clip(line), "readme", cell))

    def find(self, dist: str) -> Declaration | None:
        """The first line declaring a distribution, if any."""
        key = normalize_dist(dist)
        if key in self.by_dist:
            return self.by_dist[key][0]
        rx = self.catalog.requirement_regex(key)
        for t, i, line in self._dep_lines:
            if rx.search(line):
                decl = Declaration(key, t.rel, i, clip(line), "requirements")
                self.by_dist[key] = [decl]
                return decl
        word = re.compile(r"(?<![\w./-])" + "[-_.]".join(re.escape(p) for p in key.split("-")) + r"(?![\w/-])", re.I)
        for rel, i, line in self._readme_req:
            if word.search(line):
                decl = Declaration(key, rel, i, clip(line), "readme")
                self.by_dist[key] = [decl]
                return decl
        return None


def _installs_something(text: str) -> bool:
    lower = text.lower()
    return "install" in lower or "git" in lower


def dist_of_token(token: str) -> str | None:
    """The distribution an install argument names: `rouge-score==0.1.2`, `'pyrouge'`,
    `git+https://github.com/pltrdy/files2rouge.git` (its repository name); None for options
    and files."""
    t = token.strip("'\"")
    if not t or t.startswith("-") or t.startswith(".") or t.endswith((".txt", ".in", ".whl", ".tar.gz", ".zip")):
        return None
    m = REPO_URL.search(t)
    if m:
        return normalize_dist(m.group(2))
    if "://" in t or "/" in t:
        return None
    m = re.match(r"([A-Za-z0-9][\w.-]*)", t)
    return normalize_dist(m.group(1)) if m else None
