"""Codebases: link papers to code (C0), look them up on GitHub, infer the metric's packages (C1).

Entry points callable without the CLI (the survey command uses them), also importable
from this package: `run_link` (link.py), `run_github` (github.py), `run_scan` and
`scan_target` (runner.py; the pure directory scanner is `scan.scan_tree`).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {"run_link": "link", "run_github": "github", "run_scan": "runner", "scan_target": "runner",
            "scan_tree": "scan", "load_catalog": "catalog"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import lazily: `review.codebases.urls` must not pull in PyGithub."""
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"review.codebases.{_EXPORTS[name]}"), name)
    raise AttributeError(name)
