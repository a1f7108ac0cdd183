"""Typed models of what Label Studio sends (tasks, annotations, result items), checked at the boundary.

Why here and not where the values are used: an export with `"annotations": "yes"`,
`"result": {...}`, a bare number as a result item or `"data": "just a string"` used to
fail deep inside the ingest with an AttributeError, and the good tasks of the same
answer were lost with it. Each piece is validated on its own, so a bad one is named
(task id, annotation id, item number) and left out, and everything else still counts.

What a caller must know: a task or annotation left out here has not been read, so its
stored decisions must not be taken for deleted (`Checked.complete` is False then), and
an annotation that lost a result item must not have its other questions withdrawn
(`Checked.partial` holds its id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from review.log import get_logger

log = get_logger("labelstudio")


class ResultItem(BaseModel):
    """One answer inside an annotation: which question (`from_name`) and its `value`."""

    model_config = ConfigDict(extra="allow")
    from_name: str
    value: dict[str, Any]


class Annotation(BaseModel):
    """One reviewer's annotation; `result` is checked item by item (`ResultItem`)."""

    model_config = ConfigDict(extra="allow")
    id: int | str
    result: list[Any] = []
    was_cancelled: bool = False

    @field_validator("result", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class Task(BaseModel):
    """One task of an export or a task listing: its `data` and its annotations (checked one by one)."""

    model_config = ConfigDict(extra="allow")
    id: int | str | None = None
    data: dict[str, Any] = {}
    annotations: list[Any] = []

    @field_validator("data", "annotations", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any, info: Any) -> Any:
        if value is None:
            return {} if info.field_name == "data" else []
        return value


@dataclass
class Checked:
    """What survived the checks, and what a caller needs to stay safe about the rest."""

    problems: list[str] = field(default_factory=list)
    partial: set[str] = field(default_factory=set)  # annotation ids with a result item left out
    unread: set[str] = field(default_factory=set)  # annotation ids left out whole: their rows are kept

    @property
    def complete(self) -> bool:
        """True when nothing was left out: only then may missing annotations count as deleted."""
        return not self.problems

    def note(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")
        log.error("%s: %s; left out, the rest is read", where, problem)


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    place = ".".join(str(p) for p in first.get("loc", ())) or "value"
    return f"{place}: {first.get('msg', 'invalid')}"


def check_task(raw: Any, where: str, checked: Checked) -> dict[str, Any] | None:
    """The task as a plain dict with only well-shaped annotations and result items, or None."""
    if not isinstance(raw, dict):
        checked.note(where, f"a task must be an object, not {type(raw).__name__}")
        return None
    where = f"{where} task {raw.get('id')}" if raw.get("id") is not None else where
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        checked.note(where, f"malformed task ({_why(exc)})")
        return None
    out = dict(raw)
    out["data"] = task.data
    out["annotations"] = check_annotations(task.annotations, where, checked)
    return out


def check_annotations(raw: Any, where: str, checked: Checked) -> list[dict[str, Any]]:
    """The well-shaped annotations of one task, each with only its well-shaped result items."""
    if not isinstance(raw, list):
        checked.note(where, f"annotations must be a list, not {type(raw).__name__}")
        return []
    kept = []
    for n, ann in enumerate(raw, start=1):
        place = f"{where} annotation {ann.get('id') if isinstance(ann, dict) and ann.get('id') is not None else f'#{n}'}"
        try:
            model = Annotation.model_validate(ann)
        except ValidationError as exc:
            if isinstance(ann, dict) and isinstance(ann.get("id"), (int, str)):
                checked.unread.add(str(ann["id"]))
            checked.note(place, f"malformed annotation ({_why(exc)})")
            continue
        result = []
        for i, item in enumerate(model.result, start=1):
            try:
                result.append(ResultItem.model_validate(item).model_dump())
            except ValidationError as exc:
                checked.partial.add(str(model.id))
                checked.note(f"{place} result item {i}", f"malformed answer ({_why(exc)})")
        kept.append({**ann, "result": result})
    return kept


__all__ = ["Annotation", "Checked", "ResultItem", "Task", "check_annotations", "check_task"]
