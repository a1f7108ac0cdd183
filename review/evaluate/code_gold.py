"""Code gold files (../shared/spec/GOLD.md, "Code"): human labels of repositories, read exactly.

Other teams' gold files arrive in this shape, so the reader accepts everything the format
allows (`#` comment lines, blank lines, extra keys, which are kept and ignored) and rejects
everything it does not, naming the file and line: malformed JSON, a value of the wrong type,
a commit that is not 40 hex digits, a package label outside the vocabulary, a duplicate
repository. Every line is checked before any repository is scanned, so a bad gold file
costs nothing.

A question whose key is absent (`packages_used`, `packages_present`, `eval_reproducible`)
was not answered for that repository and is not scored there; `[]` means "none".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from review.errors import InputFileError

CUSTOM = "custom"  # the label of an implementation of the metric written in the repository itself (CODE_LABELS.md)

SET_QUESTIONS = ("packages_used", "packages_present")
QUESTIONS = (*SET_QUESTIONS, "eval_reproducible")
KNOWN_KEYS = frozenset({"repo", "commit", "path", *QUESTIONS, "note"})
REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")


class CodeGoldError(InputFileError):
    """A code gold file line the reader cannot accept; `item` is `file:line`."""


@dataclass(frozen=True)
class GoldRepo:
    """One labelled repository: which commit, where its checkout may be, the reviewer's answers."""

    repo: str  # owner/name
    commit: str  # 40 hex digits, lower case
    line: int
    path: Path | None  # the checkout named by the file (absolute), or None: the caller supplies a root
    answers: dict[str, Any]  # packages_* -> frozenset[str]; eval_reproducible -> bool; absent = not answered
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys GOLD.md does not define, kept

    @property
    def folder_name(self) -> str:
        """The `owner+name` folder a root of checkouts holds for this repository."""
        return self.repo.replace("/", "+")


@dataclass(frozen=True)
class CodeGoldFile:
    path: Path
    repos: tuple[GoldRepo, ...]


def read_code_gold(path: str | Path, vocabulary: Iterable[str]) -> CodeGoldFile:
    """Read and check a code gold file; `vocabulary` is every package label a reviewer may use.

    The caller passes the catalog labels (code and paper catalogs); `custom` is always allowed.
    """
    path = Path(path)
    if not path.is_file():
        raise CodeGoldError("gold file not found" if not path.exists() else "not a file", item=str(path))
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise CodeGoldError("not UTF-8 text", item=str(path)) from None
    vocab = frozenset(vocabulary) | {CUSTOM}
    repos: list[GoldRepo] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{path}:{number}"
        entry = _parse_line(stripped, where, number, path.parent.resolve(), vocab)
        key = entry.repo.lower()  # GitHub names are case-insensitive
        if key in seen:
            raise CodeGoldError(f"duplicate repo {entry.repo!r} (first on line {seen[key]})", item=where)
        seen[key] = number
        repos.append(entry)
    if not repos:
        raise CodeGoldError("no repositories in the gold file", item=str(path))
    return CodeGoldFile(path=path, repos=tuple(repos))


def _parse_line(text: str, where: str, number: int, base: Path, vocab: frozenset[str]) -> GoldRepo:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CodeGoldError(f"not valid JSON: {exc.msg} (column {exc.colno})", item=where) from None
    if not isinstance(obj, dict):
        raise CodeGoldError("a line must be one JSON object", item=where)
    repo = obj.get("repo")
    if not isinstance(repo, str) or not REPO.match(repo.strip()):
        raise CodeGoldError(f"'repo' must be 'owner/name', not {repo!r}", item=where)
    commit = obj.get("commit")
    if not isinstance(commit, str) or not COMMIT.match(commit.strip()):
        raise CodeGoldError(f"'commit' must be 40 hex digits, not {commit!r}", item=where)
    checkout = obj.get("path")
    if checkout is not None and (not isinstance(checkout, str) or not checkout.strip()):
        raise CodeGoldError(f"'path' must be a folder name relative to the gold file, not {checkout!r}", item=where)
    answers: dict[str, Any] = {}
    for key in SET_QUESTIONS:
        if key in obj:
            answers[key] = _labels(obj[key], key, where, vocab)
    if "eval_reproducible" in obj:
        value = obj["eval_reproducible"]
        if not isinstance(value, bool):
            raise CodeGoldError(f"'eval_reproducible' must be true or false, not {value!r}", item=where)
        answers["eval_reproducible"] = value
    if not answers:
        raise CodeGoldError(f"no answer to score: give at least one of {', '.join(QUESTIONS)}", item=where)
    note = obj.get("note")
    if note is not None and not isinstance(note, str):
        raise CodeGoldError(f"'note' must be a string, not {type(note).__name__}", item=where)
    return GoldRepo(repo=repo.strip(), commit=commit.strip().lower(), line=number,
                    path=(base / checkout.strip()).resolve() if checkout else None, answers=answers, note=note,
                    extra={k: v for k, v in obj.items() if k not in KNOWN_KEYS})


def _labels(value: Any, key: str, where: str, vocab: frozenset[str]) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CodeGoldError(f"'{key}' must be a list of package labels, not {value!r}", item=where)
    unknown = sorted({v for v in value if v not in vocab})
    if unknown:
        known = sorted(vocab - {CUSTOM})
        raise CodeGoldError(f"'{key}': {unknown[0]!r} is not a package label (labels are those of the metric "
                            f"folder's code_packages and packages files, plus {CUSTOM!r})", item=where,
                            hint="labels are case-sensitive, e.g. " + ", ".join(repr(k) for k in known[:3]))
    return frozenset(value)
