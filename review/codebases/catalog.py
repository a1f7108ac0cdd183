"""The code-package catalog (the metric folder's `code_packages` file) as validated objects.

Why data, not code: what a metric's package looks like in a repository (its distribution
names, import names, call shapes, vendored files, the wrappers and the tools behind them),
which words say that code trains rather than evaluates, and what a hand-written
implementation looks like, change as packages come and go, and another metric needs
another catalog. The file is read once, every regex compiled once, and a mistake is
reported with the file, the package and the key.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from review.errors import InputFileError, RuleFileError

LIST_KEYS = ("requirements", "urls", "imports", "api", "default_for", "calls", "shell", "setup", "readme", "files",
             "vendored", "repos", "supersedes", "implies")
REGEX_KEYS = ("urls", "api", "calls", "shell", "setup", "readme", "vendored")
LABEL_KEYS = ("supersedes", "implies")
PACKAGE_KEYS = frozenset({"label", "vendored_min", "case_sensitive", *LIST_KEYS})
TOP_KEYS = frozenset({"schema", "name", "metric", "version", "prelim", "resolution", "links", "package",
                      "distributions", "roles", "custom"})
ROLE_KEYS = ("evaluation_strong", "evaluation", "training_strong", "training", "entry_files", "requirement_headings",
             "vendored_trees", "unit_test_imports", "phases")
CUSTOM_KEYS = ("names", "body", "source_ext", "neutral_is_evaluation", "secondary_to_packages")
SUPPORTED_SCHEMA = 2
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
    api: list[re.Pattern[str]] = field(default_factory=list)
    default_for: list[str] = field(default_factory=list)
    calls: list[re.Pattern[str]] = field(default_factory=list)
    shell: list[re.Pattern[str]] = field(default_factory=list)
    setup: list[re.Pattern[str]] = field(default_factory=list)
    readme: list[re.Pattern[str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    vendored: list[re.Pattern[str]] = field(default_factory=list)
    vendored_min: int = 2
    repos: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    implies: list[str] = field(default_factory=list)

    def matches_file(self, relpath: str) -> bool:
        """Does a path (posix, relative to the checkout) look like a vendored copy?"""
        path = "/" + relpath
        return any(fnmatch.fnmatchcase(path, "/" + pat.lstrip("*/")) or fnmatch.fnmatchcase(path, "*/" + pat.lstrip("*/"))
                   for pat in self.files)


@dataclass(frozen=True)
class Words:
    """A list of words from the catalog; `stem*` matches every word beginning with stem."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, words: list[str]) -> "Words":
        return cls(frozenset(w.lower() for w in words if not w.endswith("*")),
                   tuple(w[:-1].lower() for w in words if w.endswith("*")))

    def match(self, word: str) -> bool:
        return word in self.exact or word.startswith(self.prefixes)

    def any(self, words: Any) -> bool:
        return any(self.match(w) for w in words)


@dataclass(frozen=True)
class Roles:
    """Words that say what code is for (see the `[roles]` header of the catalog)."""

    evaluation_strong: Words
    evaluation: Words
    training_strong: Words
    training: Words
    entry_files: Words
    requirement_headings: Words
    vendored_trees: Words  # folder names of copied frameworks / third-party code: not the repository's entry points
    unit_test_imports: Words  # modules whose import makes a test_*.py file a unit test, not an evaluation script
    phases: Words  # training_strong words that name a phase (validation), which a test caller overrides


@dataclass(frozen=True)
class Custom:
    """What a ROUGE written in the repository itself looks like."""

    names: list[re.Pattern[str]]
    body: list[re.Pattern[str]]
    source_ext: frozenset[str]
    neutral_is_evaluation: bool = False
    secondary_to_packages: bool = False  # beside a package on the evaluation path, custom code is present


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
    distributions: dict[str, list[str]] = field(default_factory=dict)
    roles: Roles = field(default_factory=lambda: _roles({}, ""))
    custom: Custom = field(default_factory=lambda: Custom([], [], frozenset()))

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
        return [(requirement_regex(name), label) for name, label in out]

    def requirement_regex(self, name: str) -> re.Pattern[str]:
        return requirement_regex(name)

    @cached_property
    def all_ignored_repos(self) -> set[str]:
        repos = {r.lower() for r in self.ignore_repos}
        for p in self.packages:
            repos.update(r.lower() for r in p.repos)
        return repos

    def package(self, label: str) -> Package | None:
        return self._by_label.get(label)

    @cached_property
    def _by_label(self) -> dict[str, Package]:
        return {p.label: p for p in self.packages}

    @cached_property
    def module_packages(self) -> dict[str, list[Package]]:
        """Module name -> the packages installing it, in catalog order."""
        out: dict[str, list[Package]] = {}
        for p in self.packages:
            for m in p.imports:
                out.setdefault(m, []).append(p)
        return out

    def packages_of_module(self, module: str) -> tuple[str, list[Package]]:
        """The longest catalogued module that `module` is or lies inside, and its packages."""
        parts = module.split(".")
        for n in range(len(parts), 0, -1):
            name = ".".join(parts[:n])
            if name in self.module_packages:
                return name, self.module_packages[name]
        return "", []

    def distributions_of(self, module: str) -> list[str]:
        """PEP 503 names of the distributions that install a top-level module (the map, the
        catalogued packages installing it, else the module's own name)."""
        top = module.split(".")[0]
        names = [normalize_dist(d) for d in self.distributions.get(top, [])]
        for p in self.module_packages.get(top, []):
            names.extend(p.requirements)
        return list(dict.fromkeys(names)) or [normalize_dist(top)]


@lru_cache(maxsize=4096)
def requirement_regex(name: str) -> re.Pattern[str]:
    """A distribution name as a dependency line writes it: `rouge_score>=0.1`, `"pyrouge"`,
    `- py-rouge==1.1`, never inside another name (`rouge` is not found in `rouge-score`)."""
    body = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", name))
    spec = r"(?:\s*\[[^\]]*\])?(?:\s*(?:===|==|>=|<=|~=|!=|\^|~|=|<|>)\s*['\"]?[^'\"\s,;#]*)?"
    return re.compile(rf"(?:^|(?<=['\"\s:=,(\[]))(?:-\s+)?{body}{spec}\s*(?=['\",;#)\]]|$)", re.I)


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
        for key in LABEL_KEYS:
            for ref in getattr(pk, key):
                if ref not in labels:
                    raise RuleFileError(f"package {pk.label!r}: {key} names unknown label {ref!r}", item=str(p))
    for ref in generic:
        if ref not in labels:
            raise RuleFileError(f"[resolution] generic names unknown label {ref!r}", item=str(p))
    distributions = data.get("distributions", {})
    if not isinstance(distributions, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in distributions.values()):
        raise RuleFileError("[distributions] maps a module name to a list of distribution names", item=str(p))
    return Catalog(name=str(data.get("name", p.stem)), metric=str(data.get("metric", "")),
                   version=str(data.get("version", "")), sha256=hashlib.sha256(raw).hexdigest(), path=str(p),
                   prelim=str(data.get("prelim", data.get("metric", ""))).lower(), packages=packages,
                   generic=generic, ignore_repos=list(data.get("links", {}).get("ignore_repos", [])),
                   distributions={str(k): list(v) for k, v in distributions.items()},
                   roles=_roles(data.get("roles", {}), str(p)), custom=_custom(data.get("custom", {}), str(p)))


def _string_list(table: dict[str, Any], key: str, where: str, path: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleFileError(f"{where}: '{key}' must be a list of strings", item=path)
    return value


def _roles(table: Any, path: str) -> Roles:
    if not isinstance(table, dict):
        raise RuleFileError("[roles] must be a table", item=path)
    unknown = set(table) - set(ROLE_KEYS)
    if unknown:
        raise RuleFileError(f"[roles]: unknown key '{sorted(unknown)[0]}'", item=path)
    return Roles(**{k: Words.of(_string_list(table, k, "[roles]", path)) for k in ROLE_KEYS})


def _custom(table: Any, path: str) -> Custom:
    if not isinstance(table, dict):
        raise RuleFileError("[custom] must be a table", item=path)
    unknown = set(table) - set(CUSTOM_KEYS)
    if unknown:
        raise RuleFileError(f"[custom]: unknown key '{sorted(unknown)[0]}'", item=path)
    for flag in ("neutral_is_evaluation", "secondary_to_packages"):
        if not isinstance(table.get(flag, False), bool):
            raise RuleFileError(f"[custom]: '{flag}' must be true or false", item=path)
    return Custom(names=[_compile(x, re.I, "[custom]", "names", path) for x in _string_list(table, "names", "[custom]", path)],
                  body=[_compile(x, re.I, "[custom]", "body", path) for x in _string_list(table, "body", "[custom]", path)],
                  source_ext=frozenset(e.lower() for e in _string_list(table, "source_ext", "[custom]", path)),
                  neutral_is_evaluation=bool(table.get("neutral_is_evaluation", False)),
                  secondary_to_packages=bool(table.get("secondary_to_packages", False)))


def _compile(pattern: str, flags: int, where: str, key: str, path: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags | re.M)
    except re.error as exc:
        raise RuleFileError(f"{where}: bad regex in '{key}': {pattern!r} ({exc})", item=path) from None


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
    compiled = {k: [_compile(x, flags, where, k, str(path)) for x in entry.get(k, [])] for k in REGEX_KEYS}
    plain = {k: list(entry.get(k, [])) for k in LIST_KEYS if k not in REGEX_KEYS}
    plain["requirements"] = [normalize_dist(r) for r in plain["requirements"]]
    return Package(label=str(entry["label"]), vendored_min=int(entry.get("vendored_min", 2)), **compiled, **plain)
