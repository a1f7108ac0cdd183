"""Paper gold files (../shared/spec/GOLD.md): JSON Lines of human labels, read exactly.

Other teams' gold files arrive in this shape, so the reader accepts everything the format
allows (`#` comment lines, blank lines, extra keys, which are kept and ignored) and
rejects everything it does not, naming the file and line: malformed JSON, a value of the
wrong type, a label outside the vocabulary, a missing file, a duplicate id. Every line is
checked before any paper is labelled, so a bad gold file costs nothing.

A question whose key is absent (or, except for P1, null) was not answered on that item and
is not scored there; `[]` means "none". For P1, null means "no parameters listed".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from review.errors import InputFileError

P2_VOCABULARY = frozenset({"precision", "recall", "f-score"})
P3_VOCABULARY = frozenset({"stemming", "tokenization", "sentence tokenization", "stopword removal", "bootstrapping"})
"""The measure and protocol vocabularies GOLD.md fixes for P2 and P3."""

SOURCE_KEYS = ("text", "pdf", "paper")
TEXT_SUFFIXES = frozenset({".txt", ".md"})
SET_QUESTIONS = ("P2", "P3", "P4", "code_urls")
QUESTIONS = ("P0", "P1", *SET_QUESTIONS)
KNOWN_KEYS = frozenset({"id", *SOURCE_KEYS, *QUESTIONS, "evidence", "notes"})


class GoldFileError(InputFileError):
    """A gold file line the reader cannot accept; `item` is `file:line`."""


@dataclass(frozen=True)
class GoldPaper:
    """One labelled paper: where its text is, and the answers a reviewer gave."""

    id: str
    line: int
    source: str  # text | pdf | paper
    location: str  # an absolute file path, or a paper ident in the database
    answers: dict[str, Any]  # question -> bool (P0) / tuple of str; absent = not answered
    evidence: dict[str, Any] = field(default_factory=dict)
    notes: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys GOLD.md does not define, kept

    @property
    def computes(self) -> bool:
        return bool(self.answers["P0"])


@dataclass(frozen=True)
class GoldFile:
    path: Path
    papers: tuple[GoldPaper, ...]
    code_lines: tuple[int, ...] = ()  # lines holding code entries (GOLD.md "Code"), left to their own scorer


def read_gold(path: str | Path, packages: Iterable[str]) -> GoldFile:
    """Read and check a papers gold file; `packages` is the P4 vocabulary (catalog labels)."""
    path = Path(path)
    if not path.is_file():
        raise GoldFileError("gold file not found" if not path.exists() else "not a file", item=str(path))
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise GoldFileError("not UTF-8 text", item=str(path)) from None
    vocab = {"P2": P2_VOCABULARY, "P3": P3_VOCABULARY, "P4": frozenset(packages)}
    papers: list[GoldPaper] = []
    code_lines: list[int] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{path}:{number}"
        paper = _parse_line(stripped, where, number, path.resolve().parent, vocab)
        if paper is None:
            code_lines.append(number)
            continue
        if paper.id in seen:
            raise GoldFileError(f"duplicate id {paper.id!r} (first on line {seen[paper.id]})", item=where)
        seen[paper.id] = number
        papers.append(paper)
    if not papers:
        what = "only code entries (`repo`)" if code_lines else "every line is blank or a # comment"
        raise GoldFileError(f"no paper entries ({what})", item=str(path))
    return GoldFile(path, tuple(papers), tuple(code_lines))


def _parse_line(text: str, where: str, number: int, folder: Path,
                vocab: dict[str, frozenset[str]]) -> GoldPaper | None:
    """One paper entry, or None for a code entry (GOLD.md allows both kinds of label)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldFileError(f"not valid JSON: {exc.msg} (column {exc.colno})", item=where) from None
    if not isinstance(obj, dict):
        raise GoldFileError("a gold entry must be a JSON object", item=where)
    if "repo" in obj and not any(k in obj for k in SOURCE_KEYS):
        return None
    ident = obj.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or str(ident).strip() == "":
        raise GoldFileError("`id` must be a non-empty string", item=where)
    sources = [k for k in SOURCE_KEYS if k in obj]
    if len(sources) != 1:
        raise GoldFileError(f"exactly one of text, pdf or paper says what was labelled (found: "
                            f"{', '.join(sources) or 'none'})", item=where)
    source = sources[0]
    location = _location(source, obj[source], where, folder)
    answers = _answers(obj, where, vocab)
    evidence = obj.get("evidence", {})
    if evidence is None:
        evidence = {}
    if not isinstance(evidence, dict):
        raise GoldFileError("`evidence` must be an object (question -> snippet)", item=where)
    notes = obj.get("notes")
    if notes is not None and not isinstance(notes, str):
        raise GoldFileError("`notes` must be a string", item=where)
    extra = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    return GoldPaper(str(ident), number, source, location, answers, evidence, notes, extra)


def _location(source: str, value: Any, where: str, folder: Path) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GoldFileError(f"`{source}` must be a non-empty string", item=where)
    if source == "paper":
        return value.strip()
    file = Path(value)
    if not file.is_absolute():
        file = folder / file
    if source == "text" and file.suffix.lower() not in TEXT_SUFFIXES:
        raise GoldFileError(f"`text` names {value!r}, which is not a .txt or .md file", item=where,
                            hint="give PDFs as `pdf`")
    if not file.is_file():
        hint = "fetch the PDFs first (see the gold file's README)" if source == "pdf" else None
        raise GoldFileError(f"{source} file not found: {file}", item=where, hint=hint)
    return str(file)


def _answers(obj: dict[str, Any], where: str, vocab: dict[str, frozenset[str]]) -> dict[str, Any]:
    p0 = obj.get("P0")
    if not isinstance(p0, bool):
        raise GoldFileError(f"`P0` must be true or false, not {json.dumps(p0)}", item=where)
    answers: dict[str, Any] = {"P0": p0}
    if "P1" in obj:
        answers["P1"] = _params(obj["P1"], where)
    for q in SET_QUESTIONS:
        if obj.get(q) is not None:
            answers[q] = _string_set(obj[q], q, where, vocab.get(q))
    if not p0:
        filled = [q for q in QUESTIONS[1:] if answers.get(q)]
        if filled:
            raise GoldFileError(f"P0 is false, so {', '.join(filled)} must be empty (GOLD.md: the other answers "
                                "of a paper that does not compute the metric are empty)", item=where)
    return answers


def _params(value: Any, where: str) -> tuple[str, ...]:
    values = [] if value is None else [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
        raise GoldFileError("`P1` must be a non-empty string, a list of them, or null", item=where)
    return tuple(dict.fromkeys(values))


def _string_set(value: Any, question: str, where: str, allowed: frozenset[str] | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise GoldFileError(f"`{question}` must be a list of strings ([] means none)", item=where)
    if allowed is not None:
        for v in value:
            if v not in allowed:
                raise GoldFileError(f"`{question}` label {v!r} is not in the vocabulary ({', '.join(sorted(allowed))})",
                                    item=where)
    return tuple(dict.fromkeys(value))
