"""Full-text extraction: PDFs to normalized text in the database.

Public API for other areas:
- `extract_file(path, backend="pypdfium2", *, timeout=120, memory_mb=2048)` returns an
  `Extraction` (text, pages, extractor, extractor_version, outcome, reason, detail,
  seconds) and never raises for a bad PDF: encrypted, corrupt or truncated files, no
  text layer, timeouts and memory blow-ups come back as `outcome="failed"` with `reason`.
- `run_extract(db, settings, *, run=None, limit=None, workers=None, backend=None)` runs
  the `review extract` stage over the work queue (resumable, parallel, multi-process safe).
- `normalize_pages(pages)` / `NORMALIZER_VERSION`: the one normalization (normalize.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from review.extract.core import Extraction, extract_in_process
from review.extract.normalize import NORMALIZER_VERSION, normalize, normalize_pages

if TYPE_CHECKING:
    from review.extract.stage import ExtractReport

__all__ = ["Extraction", "extract_file", "run_extract", "normalize", "normalize_pages", "NORMALIZER_VERSION",
           "extract_in_process"]


def extract_file(path: str | Path, backend: str = "pypdfium2", *, timeout: float = 120.0,
                 memory_mb: int = 2048, isolate: bool = True) -> Extraction:
    """Extract one PDF into normalized text; never raises for a bad PDF.

    With `isolate` (the default) the work runs in a child process under `timeout`
    seconds and a `memory_mb` address-space cap; `isolate=False` runs in this process
    (faster for trusted files, but a hang would hang the caller). An unknown backend
    name raises `review.errors.ConfigError`.
    """
    if not isolate:
        return extract_in_process(path, backend)
    from review.extract.isolate import extract_isolated

    return extract_isolated(path, backend, timeout=timeout, memory_mb=memory_mb)


def run_extract(db: Any, settings: Any, **kw: Any) -> "ExtractReport":
    """The `review extract` stage (keywords: run, limit, workers, backend, retry_failed,
    redo, timeout, memory_mb); returns counts by outcome, pages and a summary line.
    See review.extract.stage.run_extract."""
    from review.extract.stage import run_extract as _run

    return _run(db, settings, **kw)
