"""The code-package catalog (the metric folder's `code_packages` file) as validated objects.

Why data, not code: what a metric's package looks like in a repository (its distribution
names, import names, call shapes, vendored files) changes as packages come and go, and
another metric needs another catalog. The file is read once, every regex compiled once,
and a mistake is reported with the file, the package and the key.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from review.errors import InputFileError, RuleFileError

LIST_KEYS = ("requirements", "urls", "imports", "calls", "shell", "readme", "files", "vendored", "repos", "supersedes")
PACKAGE_KEYS = frozenset({"label", "vendored_min", "case_sensitive", *LIST_KEYS})
TOP_KEYS = frozenset({"schema", "name", "metric", "version", "prelim", "resolution", "links", "package"})
SUPPORTED_SCHEMA = 1
# literals too frequent in code to make a useful pre-filter when a rarer one is available
COMMON_WORDS = frozenset({"import", "from", "load", "install", "pip", "pip3", "java", "self", "def", "class",
                          "return", "github.com", "python"})


def normalize_dist(name: str) -> str:
    """PEP 503 name: `Rouge_Score` and `rouge-score` are the same distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Package:
    """What one package looks like in code; every list may be empty."""

    label: str
    requirements: list[str] = field(default_factory=list)
    urls: list[re.Pattern[str]] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    calls: list[re.Pattern[str]] = field(default_factory=list)
    shell: list[re.Pattern[str]] = field(default_factory=list)
    readme: list[re.Pattern[str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    vendored: list[re.Pattern[str]] = field(default_factory=list)
    vendored_min: int = 2
    repos: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)

    def matches_file(self, relpath: str) -> bool:
        """Does a path (posix, relative to the checkout) look like a vendored copy?"""
        path = "/" + relpath
        return any(fnmatch.fnmatchcase(path, "/" + pat.lstrip("*/")) or fnmatch.fnmatchcase(path, "*/" + pat.lstrip("*/"))
                   for pat in self.files)


@dataclass
class Catalog:
    name: str
    metric: str
    version: str
    sha256: str
    path: str
    prelim: str
    packages: list[Package]
    generic: list[str]
    ignore_repos: list[str]

    def signature(self) -> dict[str, Any]:
        return {"code_catalog": self.name, "code_catalog_version": self.version,
                "code_catalog_sha256": self.sha256[:12]}

    @cached_property
    def labels(self) -> list[str]:
        return [p.label for p in self.packages]

    @cached_property
    def known_modules(self) -> set[str]:
        """Top-level module names that belong to some catalogued package."""
        names: set[str] = set()
        for p in self.packages:
            names.update(m.split(".")[0].lower() for m in p.imports)
            names.update(normalize_dist(r).replace("-", "_") for r in p.requirements)
        return names

    @cached_property
    def requirement_patterns(self) -> list[tuple[re.Pattern[str], str]]:
        """(regex for a distribution name inside a dependency line, label), longest names first."""
        out: list[tuple[str, str]] = []
        for p in self.packages:
            out.extend((r, p.label) for r in p.requirements)
        out.sort(key=lambda rl: -len(rl[0]))
        compiled = []
        for name, label in out:
            body = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", name))
            spec = r"(?:\s*\[[^\]]*\])?(?:\s*(?:===|==|>=|<=|~=|!=|\^|~|=|<|>)\s*['\"]?[^'\"\s,;#]*)?"
            rx = re.compile(rf"(?:^|(?<=['\"\s:=,(\[]))(?:-\s+)?{body}{spec}\s*(?=['\",;#)\]]|$)", re.I)
            compiled.append((rx, label))
        return compiled

    @cached_property
    def all_ignored_repos(self) -> set[str]:
        repos = {r.lower() for r in self.ignore_repos}
        for p in self.packages:
            repos.update(r.lower() for r in p.repos)
        return repos

    def package(self, label: str) -> Package | None:
        return next((p for p in self.packages if p.label == label), None)


def literal_hint(pattern: str) -> str | None:
    """A lower-case substring every match of `pattern` must contain, or None if unsure.

    Why: a big case-insensitive alternation costs ~50 ms per source file in Python's
    regex engine; a plain substring test first (`hint in line.lower()`) skips almost
    every line. Only the pattern's leading part (before any group, class or top-level
    alternation) is read, so the hint is always a true necessary condition.
    """
    depth = 0
    i = 0
    while i < len(pattern):  # any top-level alternation: no single literal is required
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # skip a character class: its brackets and bars are literal
            j = i + 2 if pattern[i + 1: i + 2] in ("]", "^") else i + 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return None
        i += 1
    runs: list[str] = []
    cur: list[str] = []

    def end() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in ".-_":
                cur.append(nxt)
            else:
                end()
            i += 2
            continue
        if c in "([":
            break
        if c in "?*{":
            if cur:
                cur.pop()
            end()
            if c == "{":
                close = pattern.find("}", i)
                i = close if close > 0 else i
        elif c.isalnum() or c in "-_":
            cur.append(c.lower())
        else:
            end()
        i += 1
    end()
    runs = [r for r in runs if len(r) >= 3]
    rare = [r for r in runs if r not in COMMON_WORDS] or runs
    return max(rare, key=len) if rare else None


def default_catalog_path(settings: Any = None) -> Path:
    """The code catalog of the settings' metric (the default metric without settings)."""
    from review.metric import default_metric, metric_of

    return (metric_of(settings) if settings is not None else default_metric()).code_packages


def load_catalog(path: str | Path | None = None, settings: Any = None) -> Catalog:
    """Read and validate a catalog (`path`, else the metric's); errors name the file, package and key."""
    if path:
        from review.metric import data_path, find_data_file

        try:
            p = data_path(settings, path, "code_packages") if settings is not None else find_data_file(path)
        except InputFileError as exc:
            raise RuleFileError("code package catalog not found", item=str(path), hint=exc.hint) from None
    else:
        p = default_catalog_path(settings)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise RuleFileError(f"cannot read: {exc.strerror}", item=str(p)) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=str(p)) from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise RuleFileError(f"unknown key '{sorted(unknown)[0]}'", item=str(p))
    if data.get("schema") != SUPPORTED_SCHEMA:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads {SUPPORTED_SCHEMA})",
                            item=str(p), hint="update the file or the tool")
    packages = [_package(p, i, entry) for i, entry in enumerate(data.get("package", []))]
    labels = [pk.label for pk in packages]
    dupes = {lab for lab in labels if labels.count(lab) > 1}
    if dupes:
        raise RuleFileError(f"package label defined twice: {sorted(dupes)[0]}", item=str(p))
    generic = list(data.get("resolution", {}).get("generic", []))
    for pk in packages:
        for ref in pk.supersedes:
            if ref not in labels:
                raise RuleFileError(f"package {pk.label!r}: supersedes unknown label {ref!r}", item=str(p))
    for ref in generic:
        if ref not in labels:
            raise RuleFileError(f"[resolution] generic names unknown label {ref!r}", item=str(p))
    return Catalog(name=str(data.get("name", p.stem)), metric=str(data.get("metric", "")),
                   version=str(data.get("version", "")), sha256=hashlib.sha256(raw).hexdigest(), path=str(p),
                   prelim=str(data.get("prelim", data.get("metric", ""))).lower(), packages=packages,
                   generic=generic, ignore_repos=list(data.get("links", {}).get("ignore_repos", [])))


def _package(path: Path, index: int, entry: dict[str, Any]) -> Package:
    where = f"package #{index + 1}"
    if not isinstance(entry, dict) or "label" not in entry:
        raise RuleFileError(f"{where} has no label", item=str(path))
    where = f"package {entry['label']!r}"
    unknown = set(entry) - PACKAGE_KEYS
    if unknown:
        raise RuleFileError(f"{where}: unknown key '{sorted(unknown)[0]}'", item=str(path))
    for key in LIST_KEYS:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RuleFileError(f"{where}: '{key}' must be a list of strings", item=str(path))
    flags = 0 if entry.get("case_sensitive") else re.I

    def rx(key: str) -> list[re.Pattern[str]]:
        out = []
        for pattern in entry.get(key, []):
            try:
                out.append(re.compile(pattern, flags | re.M))
            except re.error as exc:
                raise RuleFileError(f"{where}: bad regex in '{key}': {pattern!r} ({exc})", item=str(path)) from None
        return out

    return Package(label=str(entry["label"]), requirements=[normalize_dist(r) for r in entry.get("requirements", [])],
                   urls=rx("urls"), imports=list(entry.get("imports", [])), calls=rx("calls"), shell=rx("shell"),
                   readme=rx("readme"), files=list(entry.get("files", [])), vendored=rx("vendored"),
                   vendored_min=int(entry.get("vendored_min", 2)), repos=list(entry.get("repos", [])),
                   supersedes=list(entry.get("supersedes", [])))
