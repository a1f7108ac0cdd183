"""The human pass in a spreadsheet: tasks out as CSV, answers back in.

For a team without a Label Studio at all. `review queue papers --offline tasks.csv` writes
one row per task: what identifies it (`ref`, `ident`, `title`), where to read it (`pdf`,
`links`), the automated proposal and evidence (read-only columns, ignored on import), then
`annotator` and one empty column per question of the form. The reviewer fills the
question columns; `review pull --from-file tasks.csv` reads the rows back.

Answer columns start empty on purpose: a row nobody touched must not count as a person
confirming the rules. A row with no answer is skipped; a row with answers needs an
annotator. Several choices go in one cell separated by ";", as do several P1 parameter
strings; choices are matched to the form's values ignoring case. Every row is checked
before anything is imported, and all bad rows are reported together by row number (as a
spreadsheet shows it, the header being row 1) and reason, so one pass fixes the file.

Rows become the tasks of a Label Studio JSON export (each row one annotation with the id
`csv:<ref>:<annotator>`, its time the `answered_at` column or else the file's modification
time), so importing takes the same path as a JSON export and a corrected file imported
again under the same origin updates its decisions instead of adding to them.
"""

from __future__ import annotations

import csv
import html
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from review.errors import InputFileError
from review.labelstudio.tasks import LabelConfig, QuestionSpec, answers_of, parse_ref

SEPARATOR = ";"
FIXED = ["ref", "ident", "title", "pdf", "links", "proposed", "evidence"]
ANSWER_META = ["annotator", "answered_at"]
MAX_REPORTED = 25
SHOWN_CHOICES = 6  # a catalog has dozens of packages: the error shows the first few
_TAG = re.compile(r"<[^>]+>")
_HREF = re.compile(r'href="([^"]+)"')


def columns(config: LabelConfig) -> list[str]:
    """The header of a task spreadsheet for this form."""
    return FIXED + ANSWER_META + list(config.questions)


def _links(data: dict[str, Any]) -> str:
    """The task's links as plain URLs (a spreadsheet shows no HTML)."""
    return " ".join(html.unescape(u) for u in _HREF.findall(data.get("links") or ""))


def _proposed(task: dict[str, Any], config: LabelConfig) -> str:
    preds = task.get("predictions") or [{}]
    answers = answers_of(preds[0].get("result") or [], config)
    return "; ".join(f"{q}={_cell(a)}" for q, a in answers.items())


def _cell(answer: Any) -> str:
    if isinstance(answer, list):
        return f"{SEPARATOR} ".join(answer) or "(none)"
    return str(answer)


def write_tasks_csv(tasks: list[dict[str, Any]], config: LabelConfig, path: Path) -> None:
    """The tasks as a spreadsheet with empty answer columns (see the module docstring)."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns(config))
        for t in tasks:
            d = t["data"]
            title = d.get("title") or d.get("repository") or ""
            evidence = "\n".join(x for x in (d.get("dispute"), _TAG.sub("", d.get("evidence") or "")) if x)
            writer.writerow([d.get("ref"), d.get("ident"), title, d.get("pdf_path") or "", _links(d),
                             _proposed(t, config), evidence] + [""] * (len(ANSWER_META) + len(config.questions)))


def _choices(spec: QuestionSpec, cell: str) -> tuple[list[str], list[str]]:
    """(values as the form spells them, values the form does not offer)."""
    by_lower = {c.lower(): c for c in spec.choices}
    given = [v.strip() for v in cell.split(SEPARATOR)] if spec.multiple else [cell.strip()]
    given = [v for v in given if v]
    return [by_lower[v.lower()] for v in given if v.lower() in by_lower], [v for v in given if v.lower() not in by_lower]


def _result(config: LabelConfig, row: dict[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """A row's answers as an annotation result, and what is wrong with them."""
    result, problems = [], []
    for name, spec in config.questions.items():
        cell = (row.get(name) or "").strip()
        if not cell:
            continue
        if spec.tag == "choices":
            good, bad = _choices(spec, cell)
            if bad:
                offered = ", ".join(spec.choices[:SHOWN_CHOICES]) + (", ..." if len(spec.choices) > SHOWN_CHOICES else "")
                problems.append(f"{name}: {', '.join(repr(b) for b in bad)} is not a choice of the form ({offered})")
                continue
            result.append({"from_name": name, "to_name": "evidence", "type": "choices", "value": {"choices": good}})
        else:
            texts = [cell] if name == "note" else [v.strip() for v in cell.split(SEPARATOR) if v.strip()]
            result.append({"from_name": name, "to_name": "evidence", "type": "textarea", "value": {"text": texts}})
    return result, problems


def _time(cell: str) -> tuple[str | None, str | None]:
    if not cell.strip():
        return None, None
    try:
        when = datetime.fromisoformat(cell.strip().replace("Z", "+00:00"))
    except ValueError:
        return None, f"answered_at {cell.strip()!r} is not a date and time (e.g. 2026-12-07T14:30:00Z)"
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).isoformat(), None


def read_tasks_csv(path: Path, config_of: Callable[[str], LabelConfig]) -> list[dict[str, Any]]:
    """The answered rows of a task spreadsheet as Label Studio export tasks; raises one
    InputFileError naming every bad row when any is bad. `config_of(kind)` gives the form."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputFileError("annotations file not found", item=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read the spreadsheet: {exc}", item=str(path),
                             hint="save it as CSV in UTF-8") from None
    reader = csv.DictReader(text.splitlines(keepends=True))
    header = reader.fieldnames or []
    missing = [c for c in ("ref", "annotator") if c not in header]
    if missing:
        raise InputFileError(f"not a task spreadsheet: no column {', '.join(missing)}", item=str(path),
                             hint="write one with `review queue papers --offline tasks.csv` and fill its answer columns")
    stamp = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat()
    tasks, errors = [], []
    first: dict[tuple[str, str], int] = {}
    for number, row in enumerate(reader, start=2):
        task, problems = _task(row, config_of, stamp, number)
        if task is not None:
            key = (task["data"]["ref"], task["annotations"][0]["completed_by"])
            if key in first:
                problems = [f"a second answer by {key[1]} to {key[0]} (the first is row {first[key]})"]
            first.setdefault(key, number)
        if problems:
            errors.append(f"row {number} ({row.get('ident') or row.get('ref') or 'no ref'}): {'; '.join(problems)}")
        elif task is not None:
            tasks.append(task)
    if errors:
        shown = errors[:MAX_REPORTED] + ([f"... and {len(errors) - MAX_REPORTED} more"]
                                         if len(errors) > MAX_REPORTED else [])
        raise InputFileError(f"{len(errors)} row(s) cannot be imported, nothing was:\n  " + "\n  ".join(shown),
                             item=str(path), hint="correct these rows and import the file again")
    return tasks


def _task(row: dict[str, str], config_of: Callable[[str], LabelConfig], stamp: str,
          number: int) -> tuple[dict[str, Any] | None, list[str]]:
    """One row as a task with one annotation; (None, []) for a row nobody answered."""
    ref = (row.get("ref") or "").strip()
    parsed = parse_ref(ref)
    if parsed is None:
        return None, [f"ref {ref!r} is not a task reference (paper:N or codebase:N, as written by review queue)"]
    config = config_of(parsed[0])
    asked = [q for q in config.questions if (row.get(q) or "").strip()]
    if not asked:
        return None, []
    result, problems = _result(config, row)
    who = (row.get("annotator") or "").strip()
    if not who:
        problems.append("answers without an annotator (fill the annotator column: a name or e-mail)")
    when, bad_time = _time(row.get("answered_at") or "")
    if bad_time:
        problems.append(bad_time)
    if problems:
        return None, problems
    data = {"ref": ref, "row": number, **({"ident": row["ident"].strip()} if (row.get("ident") or "").strip() else {})}
    annotation = {"id": f"csv:{ref}:{who}", "completed_by": who, "result": result,
                  "created_at": when or stamp, "updated_at": when or stamp}
    return {"id": f"row {number}", "data": data, "annotations": [annotation]}, []
