"""The sample corpus, as data: the metric folder's `sample` file, read and checked.

Each paper says what its PDF reports about the metric (package, parameters, protocol),
whether it has code (and what that code uses), and how its PDF fails if it does. The
`truth` fields are what a careful human reviewer would answer; the survey's automated
labels are proposals and may differ (that is why the human pass exists). The keys are
described in docs/metrics.md.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from review.errors import RuleFileError
from review.pdfgen import SampleText

SCHEMA = 1
TOP_KEYS = frozenset({"schema", "booktitle", "typeset", "repos", "papers"})
PAPER_KEYS = frozenset({"number", "year", "title", "method", "table", "pdf", "repo", "truth"})
TYPESET_KEYS = frozenset({"mentions", "other_mentions", "report_sentences", "footnotes", "table", "other_table",
                          "results"})
PDF_KINDS = ("ok", "broken", "missing")


@dataclass(frozen=True)
class SampleRepo:
    owner: str
    name: str
    files: dict[str, str]


@dataclass(frozen=True)
class ResultsTable:
    """The table a sample paper shows after its experimental setup."""

    caption: str
    group: str
    columns: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class SamplePaper:
    number: int
    year: int
    title: str
    method: list[str]  # paragraphs of the experimental-setup section (where the metric is reported)
    table: bool = True  # shows the results table
    pdf: str = "ok"  # ok | broken | missing
    repo: SampleRepo | None = None
    truth: dict[str, object] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.year}.sample-1.{self.number}"


@dataclass(frozen=True)
class Sample:
    path: Path
    sha256: str
    booktitle: str  # "{year}" is the paper's year
    typeset: SampleText
    results: ResultsTable
    papers: list[SamplePaper]


def _strings(value: Any, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleFileError(f"`{key}` must be a list of texts", item=where)
    return list(value)


def _group(value: Any, where: str, key: str) -> tuple[str, tuple[str, ...]]:
    if not isinstance(value, dict) or not isinstance(value.get("group"), str):
        raise RuleFileError(f"`{key}` must be a table with `group` and `columns`", item=where)
    return value["group"], tuple(_strings(value.get("columns"), where, f"{key}.columns"))


def _typeset(data: Any, where: str) -> tuple[SampleText, ResultsTable]:
    if not isinstance(data, dict):
        raise RuleFileError("`[typeset]` is missing", item=where)
    unknown = set(data) - TYPESET_KEYS
    if unknown:
        raise RuleFileError(f"[typeset]: unknown key(s) {sorted(unknown)}", item=where)
    mentions = _strings(data.get("mentions"), where, "typeset.mentions")
    other = _strings(data.get("other_mentions"), where, "typeset.other_mentions")
    if len(mentions) != len(other) or not mentions:
        raise RuleFileError("`mentions` and `other_mentions` need the same, nonzero number of entries", item=where)
    text = SampleText(mentions=tuple(mentions), other_mentions=tuple(other),
                      report_sentences=tuple(_strings(data.get("report_sentences", []), where, "report_sentences")),
                      footnotes=tuple(_strings(data.get("footnotes", []), where, "footnotes")),
                      table=_group(data.get("table"), where, "typeset.table"),
                      other_table=_group(data.get("other_table"), where, "typeset.other_table"))
    res = data.get("results")
    group, columns = _group(res, where, "typeset.results")
    rows = res.get("rows")
    if not isinstance(res.get("caption"), str) or not isinstance(rows, list) or \
            not all(isinstance(r, list) and len(r) == len(columns) + 1 for r in rows):
        raise RuleFileError("`typeset.results` needs a caption and rows of a label plus one value per column",
                            item=where)
    return text, ResultsTable(res["caption"], group, list(columns), [[str(c) for c in r] for r in rows])


def _repo(name: str, data: Any, where: str) -> SampleRepo:
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict) or not data["files"]:
        raise RuleFileError(f"repos.{name} needs `owner`, `name` and a table of `files`", item=where)
    files = data["files"]
    for fname, text in files.items():
        if not isinstance(text, str) or fname.startswith("/") or ".." in Path(fname).parts:
            raise RuleFileError(f"repos.{name}: file {fname!r} needs a relative path and text", item=where)
    return SampleRepo(str(data.get("owner", "sample-org")), str(data.get("name", name)), dict(files))


def _paper(i: int, data: Any, repos: dict[str, SampleRepo], where: str) -> SamplePaper:
    at = f"{where}: papers #{i + 1}"
    if not isinstance(data, dict):
        raise RuleFileError("must be a table", item=at)
    unknown = set(data) - PAPER_KEYS
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=at)
    if not isinstance(data.get("number"), int) or not isinstance(data.get("year"), int) or \
            not isinstance(data.get("title"), str):
        raise RuleFileError("`number`, `year` and `title` are required", item=at)
    pdf = data.get("pdf", "ok")
    if pdf not in PDF_KINDS:
        raise RuleFileError(f"`pdf` must be one of {', '.join(PDF_KINDS)}, not {pdf!r}", item=at)
    repo = data.get("repo")
    if repo is not None and repo not in repos:
        raise RuleFileError(f"`repo` names {repo!r}, which [repos] does not define", item=at)
    return SamplePaper(data["number"], data["year"], data["title"], _strings(data.get("method", []), at, "method"),
                       table=bool(data.get("table", True)), pdf=pdf, repo=repos[repo] if repo else None,
                       truth=dict(data.get("truth", {})))


@lru_cache(maxsize=8)
def load_sample(path: Path) -> Sample:
    """Read a sample file; every problem names the file, the entry and the key."""
    raw = path.read_bytes()
    where = str(path)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=where) from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=where)
    if data.get("schema") != SCHEMA:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads {SCHEMA})", item=where)
    typeset, results = _typeset(data.get("typeset"), where)
    repos = {name: _repo(name, r, where) for name, r in (data.get("repos") or {}).items()}
    papers = [_paper(i, p, repos, where) for i, p in enumerate(data.get("papers") or [])]
    if not papers:
        raise RuleFileError("no [[papers]]", item=where)
    numbers = [p.number for p in papers]
    if len(set(numbers)) != len(numbers):
        raise RuleFileError("two papers share a number", item=where)
    return Sample(path=path, sha256=hashlib.sha256(raw).hexdigest(),
                  booktitle=str(data.get("booktitle", "Proceedings of the {year} Sample Workshop")),
                  typeset=typeset, results=results, papers=papers)


def metric_sample(metric: Any) -> Sample:
    """The sample corpus of a metric folder (its `sample` file)."""
    if metric.sample is None:
        raise RuleFileError("this metric folder has no sample corpus", item=str(metric.folder),
                            hint="add `sample = \"sample.toml\"` to its metric.toml (docs/metrics.md)")
    return load_sample(metric.sample)
