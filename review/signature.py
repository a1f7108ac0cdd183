"""Reproducibility signatures: every number carries the recipe that made it.

A signature is a small ordered dict of the settings that affect a result (rule file
hash and version, extractor and its version, schema revision, ...), always ending with
the tool version. Components contribute their own fields through a `signature()` method.
"""

from __future__ import annotations

from typing import Any, Mapping

from review import __version__

ABBREVIATIONS = {
    "rules": "r", "rules_sha256": "rh", "rules_version": "rv", "extractor": "x",
    "schema": "db", "scanner": "s", "version": "v",
}


class Signature:
    def __init__(self, fields: Mapping[str, Any] | None = None, *, finished: bool = True):
        self._fields: dict[str, Any] = dict(fields or {})
        self.finished = finished

    def update(self, fields: Mapping[str, Any]) -> Signature:
        self._fields.update(fields)
        return self

    def as_dict(self) -> dict[str, Any]:
        """Fields without `None`, the tool version last."""
        if not self.finished:
            raise RuntimeError("a signature describes a finished run; this run has not finished")
        out = {k: v for k, v in self._fields.items() if v is not None and k != "version"}
        out["version"] = __version__
        return out

    def format(self, short: bool = False) -> str:
        parts = []
        for key, value in self.as_dict().items():
            if isinstance(value, bool):
                value = "yes" if value else "no"
            name = ABBREVIATIONS.get(key, key) if short else key
            parts.append(f"{name}:{value}")
        return "|".join(parts)
