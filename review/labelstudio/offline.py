"""The offline path, for a Label Studio that cannot reach this machine (or vice versa).

`export_tasks` writes the queue as Label Studio import JSON (tasks with predictions);
the team imports it, reviews, and exports the project as JSON; `import_annotations`
reads that export into the same `HumanDecision` rows a pull would write, and resolves
them with the same rule. The origin (`file:<name>`, default the file's stem) identifies
the source: importing a later export under the same origin updates decisions, never
duplicates them, and marks annotations missing from the newer (complete) export as
deleted. Adjudication tasks (`--select disputed --offline`) carry `data.purpose =
"adjudication"`, so their export is registered as an adjudication source, as a pull
registers an adjudication project.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from review.db.models import Codebase, HumanProject, Paper
from review.db.session import Database
from review.errors import InputFileError
from review.http import load_json
from review.labelstudio.adjudication import PURPOSE
from review.labelstudio.decisions import ingest, mark_missing_deleted
from review.labelstudio.pull import PullResult, finish
from review.labelstudio.queue import QueueResult, run_queue
from review.labelstudio.shapes import Checked, check_task
from review.labelstudio.spreadsheet import read_tasks_csv
from review.labelstudio.tasks import label_config, parse_ref
from review.log import get_logger
from review.runs import record_run
from review.settings import Settings

log = get_logger("offline")


def export_tasks(db: Database, settings: Settings, kind: str, path: Path, **options: Any) -> QueueResult:
    """`review queue KIND --offline FILE`: the selection as Label Studio import JSON."""
    return run_queue(db, settings, kind, offline=path, **options)


def _read(path: Path, max_depth: int) -> list[Any]:
    """The export's tasks as sent: the list is checked here, each task later (`check_task`)."""
    try:
        data = load_json(path.read_text(encoding="utf-8"), max_depth=max_depth)
    except FileNotFoundError:
        raise InputFileError("annotations file not found", item=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read the annotations file: {exc}", item=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputFileError(f"not JSON: {exc.msg} at line {exc.lineno}", item=str(path),
                             hint="export the project from Label Studio as JSON") from None
    except ValueError as exc:  # nested too deeply (load_json): refused before anything recurses over it
        raise InputFileError(f"not a usable JSON export: {exc}", item=str(path),
                             hint="export the project from Label Studio as JSON") from None
    if not isinstance(data, list) or (data and not any(isinstance(t, dict) and "data" in t for t in data)):
        raise InputFileError("not a Label Studio JSON export (expected a list of tasks with 'data')",
                             item=str(path), hint="export the project from Label Studio as JSON (not JSON-MIN/CSV)")
    return data


def import_annotations(db: Database, settings: Settings, path: Path, *, origin: str | None = None) -> PullResult:
    """`review pull --from-file FILE`: a Label Studio JSON export, or a task spreadsheet
    (.csv, `review.labelstudio.spreadsheet`), into human decisions."""
    origin = origin or f"file:{path.stem}"
    if not origin.startswith("file:"):
        origin = f"file:{origin}"
    spreadsheet = path.suffix.lower() == ".csv"
    raw_tasks = (read_tasks_csv(path, lambda kind: label_config(kind, settings)) if spreadsheet
                 else _read(path, settings.http.max_json_depth))
    checked = Checked()
    tasks = [t for n, raw in enumerate(raw_tasks, start=1)
             if (t := check_task(raw, f"{path.name} #{n}", checked)) is not None]
    if spreadsheet:
        _check_rows(db, tasks, path)
    result = PullResult(projects=1)
    with record_run(db, "pull --from-file", {"file": str(path), "origin": origin}) as run:
        _register_adjudication(db, tasks, origin, path)
        seen: set[str] = set()
        counts: Counter[str] = Counter()
        with db.session() as s:
            for t in tasks:
                data = t.get("data") or {}
                parsed = parse_ref(data.get("ref"))
                if parsed is None:
                    log.error("%s: task %s has no review ref (data.ref); skipped", path, t.get("id"))
                    counts["skipped"] += 1
                    continue
                kind, item_id = parsed
                row = s.get(Paper if kind == "papers" else Codebase, item_id)
                if row is None or (kind == "papers" and data.get("ident")  # idents before a re-key still name it
                                   and data["ident"] not in (row.ident, *(row.former_idents or []))):
                    log.error("%s: task %s names %s (%s), which this database does not hold; skipped",
                              path, t.get("id"), data.get("ref"), data.get("ident"))
                    counts["skipped"] += 1
                    continue
                ingest(s, origin=origin, kind=kind, item_id=item_id, task_ref=str(t.get("id")),
                       annotations=t.get("annotations") or [], users={}, config=label_config(kind, settings), seen=seen,
                       counts=counts, run_id=run.id, partial=checked.partial)
                result.tasks += 1
        result.add(counts)
        seen |= checked.unread
        if checked.complete:
            with db.session() as s:
                result.deleted = mark_missing_deleted(s, origin, seen, run.id)
        else:  # what could not be read is not known to be gone: nothing is marked deleted
            log.warning("%s: %d malformed part(s) left out; no decision is marked deleted this time",
                        path, len(checked.problems))
        finish(db, settings, result, run.id)
        for key in ("tasks", "new", "updated", "unchanged", "withdrawn", "deleted"):
            run.count(key, getattr(result, key))
        run.count("skipped", counts.get("skipped", 0))
        result.malformed = len(checked.problems)
        run.count("malformed", result.malformed)
        run.summary = result.summary()
    return result


def _check_rows(db: Database, tasks: list[dict[str, Any]], path: Path) -> None:
    """A spreadsheet row naming an item this database does not hold is an error, by row: a
    JSON export is the server's (skip and say so), a spreadsheet is someone's typing."""
    errors = []
    with db.session() as s:
        for t in tasks:
            data = t["data"]
            kind, item_id = parse_ref(data["ref"])  # type: ignore[misc]  # checked when read
            row = s.get(Paper if kind == "papers" else Codebase, item_id)
            if row is None:
                errors.append(f"row {data['row']}: {data['ref']} is not in this database")
            elif kind == "papers" and data.get("ident") and data["ident"] not in (row.ident, *(row.former_idents or [])):
                errors.append(f"row {data['row']}: {data['ref']} is paper {row.ident}, not {data['ident']}")
    if errors:
        raise InputFileError(f"{len(errors)} row(s) cannot be imported, nothing was:\n  " + "\n  ".join(errors[:25]),
                             item=str(path), hint="was the spreadsheet written from this database (`review queue --offline`)?")


def _register_adjudication(db: Database, tasks: list[dict[str, Any]], origin: str, path: Path) -> None:
    """An export of adjudication tasks is an adjudication source (its answers settle only disputes)."""
    kinds = {parsed[0] for t in tasks if (t.get("data") or {}).get("purpose") == PURPOSE
             and (parsed := parse_ref((t.get("data") or {}).get("ref")))}
    if not kinds:
        return
    with db.session() as s:
        row = s.scalar(select(HumanProject).where(HumanProject.origin == origin))
        if row is None:
            s.add(HumanProject(origin=origin, url=None, project_id=None, title=f"file {path.name}",
                               kind=sorted(kinds)[0], purpose=PURPOSE))
        elif row.purpose != PURPOSE:
            raise InputFileError(f"{origin} holds review answers; these are adjudication tasks", item=str(path),
                                 hint="import the adjudication export under its own --origin")
