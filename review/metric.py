"""A metric is a folder of data files; this module finds, reads and checks one.

Why: the review method does not depend on the metric, only its knowledge does (which
patterns, which packages and their scoring errors, what code using them looks like, how
reports name it). So a metric is a folder, `patterns/<name>/`, whose `metric.toml` gives
its identity and wording and names its other files; a new metric is a new folder, never
new Python. `label.metric` (a folder name or a path) chooses it, and the rule file, the
package catalog and the code catalog default to its files (explicit settings still win).

Paths of the old flat layout (`patterns/<file>.toml`) still resolve: a path that does not
exist, whose folder holds metric folders with exactly one file of that name, is read from
there with a deprecation warning naming the new path.
"""

from __future__ import annotations

import hashlib
import string
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from review.errors import ConfigError, InputFileError, RuleFileError
from review.log import get_logger

log = get_logger("metric")

METRIC_FILE = "metric.toml"
SCHEMA = 1
FILE_KEYS = ("rules", "precise", "check_rules", "packages", "code_packages", "sample")
RULE_KEYS = ("rules", "precise", "check_rules")  # the keys that name rule files (what `--rules NAME` finds)
REQUIRED_FILES = ("rules", "packages", "code_packages")
TOP_KEYS = frozenset({"schema", "name", "column", "description", "wording", "published", *FILE_KEYS})
PUBLISHED_KEYS = frozenset({"statistic", "wording", "value", "unit", "source"})
UNITS = ("count", "share")

# The words every output uses, as templates. `{metric}` is the metric's name, `{column}`
# the word in its dataset columns, `{term}` its preliminary search term, `{no_config}` the
# no-configuration packages of its catalog. A metric folder overrides any of them in
# `[wording]`; these defaults make a folder without `[wording]` read correctly.
DEFAULT_WORDING: dict[str, str] = {
    "report_title": "{metric} reporting review",
    "published_source": "published",
    "project_papers": "{metric} review: paper review",
    "project_code": "{metric} review: code review",
    "papers": "{metric} papers",
    "figure1_title": "Figure 1: {metric} papers, this run vs published",
    "figure1_title_alone": "Figure 1: {metric} papers",  # when the metric folder has no [[published]] figures
    "figure3_title": "Figure 3: {metric} papers per year",
    "code_evaluation": "code with {metric} evaluation",
    "prisma_screened": "Screened: mention {metric}",
    "prisma_included": "Included: compute {metric}",
    "included": "papers that compute {metric}",
    "no_evidence": "no rule matched beyond the word '{term}'",
    "stat_papers": "papers that compute {metric} (P0)",
    "stat_code": "release code with {metric} evaluation (code_{column}_prelim)",
    "stat_bootstrapping": "perform {metric} significance testing / bootstrapping (P3)",
    "stat_list_parameters": "list {metric} parameters (P1)",
    "stat_cite_package": "cite a {metric} package, incl. unofficial (P4)",
    "stat_r2": "R2: cite a no-configuration package ({no_config})",
    "stat_r3": "R3: codebase with a complete {metric} evaluation (C2)",
    "stat_human_reviewed": "{metric} papers whose labels rest entirely on human decisions",
    "P0": "P0 Does the paper compute {metric} (not only copy scores from other papers)?",
    "P1": "P1 {metric} parameter strings listed (one per line; empty = none)",
    "P2": "P2 Which {metric} measures are referenced?",
    "P3": "P3 Which evaluation decisions are referenced?",
    "P4": "P4 Which {metric} software is cited?",
    "C0": "C0 Does the paper release this code (the paper's own codebase, reachable)?",
    "C0_paper": "C0 Does the paper release code (a link in the paper, its landing page or Papers With Code)?",
    "C1": "C1 Which {metric} package does the code use?",
    "C2": ("C2 Does the evaluation code appear reproducible (package identifiable, imported and called; no missing "
           "modules, ambiguous functions, several packages, commented-out alternatives)?"),
}
PLACEHOLDERS = frozenset({"metric", "column", "term", "no_config"})


@dataclass(frozen=True)
class Published:
    """A figure the metric's reference study published, shown next to this run's."""

    statistic: str  # our statistic's name, "records", "full_text", "codebases" or "package:<label>"
    wording: str
    value: float
    unit: str  # count | share
    source: str = ""


@dataclass(frozen=True)
class Metric:
    """One metric folder, read and checked."""

    id: str  # the folder's name: what settings, signatures and sample folders call it
    name: str  # how texts name the metric
    column: str  # the word in dataset columns and statistic names (paper_<column>, <column>_papers)
    folder: Path
    sha256: str  # of metric.toml
    files: dict[str, Path]
    description: str = ""
    wording: dict[str, str] = field(default_factory=dict)
    published: tuple[Published, ...] = ()

    @property
    def rules(self) -> Path:
        return self.files["rules"]

    @property
    def check_rules(self) -> Path:
        """The rule file `review check` uses by default: the one that holds on papers nobody
        tuned against (`check_rules` in metric.toml), else the faithful rule file. Why a
        separate key: the faithful file reproduces the study; an author checking a paper
        needs the file whose verdicts are right, and which one that is is a fact about the
        metric's data, not about the code."""
        return self.files.get("check_rules", self.files["rules"])

    def rule_files(self) -> dict[str, Path]:
        """The rule files this folder names, by their name without `.toml` (`rouge-precise`)."""
        return {self.files[k].stem: self.files[k] for k in RULE_KEYS if k in self.files}

    @property
    def packages(self) -> Path:
        return self.files["packages"]

    @property
    def code_packages(self) -> Path:
        return self.files["code_packages"]

    @property
    def sample(self) -> Path | None:
        return self.files.get("sample")

    @property
    def term(self) -> str:
        """The preliminary search term of code (GitHub code search, the scan's mention test)."""
        return _code_prelim(str(self.code_packages))

    def signature(self) -> dict[str, Any]:
        return {"metric": self.id, "metric_sha256": self.sha256[:12]}

    def text(self, key: str, **values: Any) -> str:
        """A wording of this metric, with its placeholders filled."""
        template = self.wording.get(key, DEFAULT_WORDING[key])
        fields = {"metric": self.name, "column": self.column, "no_config": "none", **values}
        if "{term}" in template and "term" not in fields:
            fields["term"] = self.term
        return template.format(**fields)

    def column_name(self, internal: str) -> str:
        """A dataset column as this metric names it: `paper_metric` -> `paper_metric`."""
        return "_".join(self.column if part == "metric" else part for part in internal.split("_"))

    def stat_name(self, internal: str) -> str:
        """A statistic's name as this metric names it: `metric_papers` -> `metric_papers`."""
        return self.column_name(internal)


def _code_prelim(path: str) -> str:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    return str(data.get("prelim", data.get("metric", ""))).lower()


# --- where data files live

def pattern_roots() -> list[Path]:
    """Folders that hold the shipped metric folders: patterns/ in a checkout, or the copy in the wheel."""
    import review

    pkg = Path(review.__file__).resolve().parent
    return [p for p in (pkg.parent / "patterns", pkg / "_patterns") if p.is_dir()]


def shipped_metrics() -> list[str]:
    """Names of the metric folders shipped with the tool."""
    names: set[str] = set()
    for root in pattern_roots():
        names.update(d.name for d in root.iterdir() if (d / METRIC_FILE).is_file())
    return sorted(names)


def _candidates(path: str, base: Path | None) -> list[Path]:
    p = Path(path).expanduser()
    if p.is_absolute():
        return [p]
    out = []
    if base is not None:
        out.append((base / p).resolve())
    out.append((Path.cwd() / p).resolve())
    for root in pattern_roots():
        out.append(root.parent / p)  # a checkout: <repo>/patterns/...
        if p.parts and p.parts[0] == "patterns":
            out.append(root / Path(*p.parts[1:]))  # an installed wheel: review/_patterns/...
    return list(dict.fromkeys(out))


def _is_metric_root(folder: Path) -> bool:
    return folder.is_dir() and any((d / METRIC_FILE).is_file() for d in folder.iterdir() if d.is_dir())


_warned: set[str] = set()


def find_data_file(path: str | Path, base: Path | None = None, prefer: Path | None = None) -> Path:
    """A data file named by a setting or option: absolute, relative to `base` (the config
    file's folder), to the working directory, or shipped with the tool; a path of the old
    flat layout is found inside the one metric folder holding a file of that name (the
    `prefer`red folder, the metric under review, when several do)."""
    candidates = _candidates(str(path), base)
    for c in candidates:
        if c.is_file():
            return c
    for c in candidates:
        if not _is_metric_root(c.parent):
            continue
        moved = sorted(d / c.name for d in c.parent.iterdir() if (d / METRIC_FILE).is_file() and (d / c.name).is_file())
        if len(moved) > 1 and prefer is not None:
            moved = [m for m in moved if m.parent.resolve() == prefer.resolve()] or moved
        if len(moved) == 1:
            new = moved[0]
            if str(path) not in _warned:
                _warned.add(str(path))
                shown = Path(str(path)).parent / new.parent.name / new.name
                log.warning("%s: data files now live in one folder per metric; reading %s (write that path, or "
                            "set label.metric, to silence this)", path, shown)
            return new
        if len(moved) > 1:
            raise InputFileError(f"no such file; {len(moved)} metric folders hold a file of that name",
                                 item=str(path), hint="name one: " + ", ".join(str(m) for m in moved))
    raise InputFileError("file not found", item=str(path),
                         hint=f"looked in: {', '.join(str(c) for c in candidates)}")


# --- reading a metric folder

def _folder_of(ref: str, base: Path | None) -> Path:
    if not _looks_like_path(ref):
        for root in pattern_roots():
            if (root / ref / METRIC_FILE).is_file():
                return root / ref
    for c in _candidates(ref, base):
        if c.is_file() and c.name == METRIC_FILE:
            return c.parent
        if (c / METRIC_FILE).is_file():
            return c
    known = ", ".join(shipped_metrics()) or "none"
    raise ConfigError(f"no metric folder {ref!r} (a folder with {METRIC_FILE})", item="label.metric",
                      hint=f"shipped metrics: {known}; or give the path of a metric folder")


def load_metric(ref: str, base: Path | None = None) -> Metric:
    """The metric named `ref` (a shipped folder's name or a folder's path), checked."""
    folder = _folder_of(ref, base)
    return _load(str(folder.resolve()))


@lru_cache(maxsize=16)
def _load(folder_str: str) -> Metric:
    folder = Path(folder_str)
    file = folder / METRIC_FILE
    raw = file.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=str(file)) from None
    where = str(file)
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=where, hint=f"known: {', '.join(sorted(TOP_KEYS))}")
    if data.get("schema") != SCHEMA:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads {SCHEMA})", item=where)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RuleFileError("`name` (how reports name the metric) is missing", item=where)
    column = data.get("column", folder.name)
    if not isinstance(column, str) or not column.isidentifier() or column != column.lower():
        raise RuleFileError(f"`column` must be a lower-case word (it names dataset columns), not {column!r}", item=where)
    files: dict[str, Path] = {}
    for key in FILE_KEYS:
        value = data.get(key)
        if value is None:
            if key in REQUIRED_FILES:
                raise RuleFileError(f"`{key}` (the file name of its {key.replace('_', ' ')}) is missing", item=where)
            continue
        target = (folder / str(value)).resolve()
        if not target.is_file():
            raise RuleFileError(f"`{key}` names {value!r}, which is not a file in the metric folder", item=where)
        files[key] = target
    wording = _wording(data.get("wording", {}), where)
    published = tuple(_published(i, entry, where) for i, entry in enumerate(data.get("published", [])))
    return Metric(id=folder.name, name=name.strip(), column=column, folder=folder,
                  sha256=hashlib.sha256(raw).hexdigest(), files=files, description=str(data.get("description", "")),
                  wording=wording, published=published)


def _wording(table: Any, where: str) -> dict[str, str]:
    if not isinstance(table, dict):
        raise RuleFileError("`wording` must be a table of texts", item=where)
    out = {}
    for key, text in table.items():
        if key not in DEFAULT_WORDING:
            raise RuleFileError(f"wording: unknown key {key!r}", item=where,
                                hint=f"known: {', '.join(DEFAULT_WORDING)}")
        if not isinstance(text, str):
            raise RuleFileError(f"wording.{key} must be text", item=where)
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        except ValueError as exc:
            raise RuleFileError(f"wording.{key}: {exc} (write {{{{ and }}}} for braces)", item=where) from None
        bad = names - PLACEHOLDERS
        if bad:
            raise RuleFileError(f"wording.{key}: unknown placeholder(s) {sorted(bad)}", item=where,
                                hint=f"known: {', '.join(sorted(PLACEHOLDERS))}")
        out[key] = text
    return out


def _published(index: int, entry: Any, where: str) -> Published:
    at = f"{where}: published #{index + 1}"
    if not isinstance(entry, dict):
        raise RuleFileError("must be a table", item=at)
    unknown = set(entry) - PUBLISHED_KEYS
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=at)
    if not isinstance(entry.get("statistic"), str) or not isinstance(entry.get("wording"), str):
        raise RuleFileError("`statistic` and `wording` are required texts", item=at)
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuleFileError(f"`value` must be a number, not {value!r}", item=at)
    unit = entry.get("unit", "count")
    if unit not in UNITS:
        raise RuleFileError(f"`unit` must be one of {', '.join(UNITS)}, not {unit!r}", item=at)
    if unit == "share" and not 0 <= value <= 1:
        raise RuleFileError(f"a share lies between 0 and 1, not {value}", item=at)
    return Published(entry["statistic"], entry["wording"], value, unit, str(entry.get("source", "")))


def metric_holding(path: str | Path | None) -> Metric | None:
    """The metric whose folder holds this file (None for a file outside every metric folder)."""
    if not path:
        return None
    folder = Path(path).resolve().parent
    if not (folder / METRIC_FILE).is_file():
        return None
    try:
        return _load(str(folder))
    except RuleFileError:
        return None


def default_metric() -> Metric:
    """The metric of the default settings (`label.metric`'s default)."""
    from review.settings import LabelSettings

    return load_metric(LabelSettings.model_fields["metric"].default)


def metric_of(settings: Any) -> Metric:
    """The metric the settings choose (`label.metric`)."""
    return load_metric(settings.label.metric, settings.config_dir)


def _looks_like_path(ref: str) -> bool:
    return any(s in ref for s in ("/", "\\")) or ref.startswith((".", "~")) or ref.endswith(".toml")


def find_rule_file(ref: str | Path, settings: Any = None, base: Path | None = None) -> Path:
    """The rule file `--rules` names, the one resolver of every command that takes it: a
    path (as `find_data_file` finds it), or a name as `--metric` takes names: `rouge-precise`
    is the rule file of that name in the chosen metric's folder, else in the one shipped
    metric folder that names it. Why names: the shipped files should be reachable without
    knowing where the package put them. A relative path is looked up under `base` (a
    setting's: the config file's folder) and the working directory."""
    text = str(ref)
    prefer = metric_of(settings) if settings is not None else None
    if _looks_like_path(text) or Path(text).expanduser().is_file():
        return find_data_file(text, base, prefer=prefer.folder if prefer else None)
    if prefer is not None and text in prefer.rule_files():
        return prefer.rule_files()[text]
    found: dict[str, list[Path]] = {}
    for name in shipped_metrics():
        for stem, path in load_metric(name).rule_files().items():
            found.setdefault(stem, []).append(path)
    if len(found.get(text, [])) == 1:
        return found[text][0]
    known = ", ".join(sorted(set(found) | set(prefer.rule_files() if prefer else ()))) or "none"
    raise InputFileError(f"no rule file named {text!r}", item="--rules",
                         hint=f"rule files by name: {known}; or give a rule file's path")


def data_path(settings: Any, explicit: str | Path | None, key: str) -> Path:
    """A data file of the run: the explicit setting when given, else the metric's `key` file."""
    metric = metric_of(settings)
    if explicit:
        return find_data_file(explicit, settings.config_dir, prefer=metric.folder)
    return metric.files[key]
