"""Extract one PDF in the current process: backend, normalization, failure mapping.

This is what a worker process runs; callers that want isolation use
`review.extract.isolate` (or `review.extract.extract_file`, which does).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from review.extract.backends import (MIN_LETTERS_PER_PAGE, ExtractFailure, allocation_failure, backend_version,
                                     get_backend)
from review.extract.normalize import NORMALIZER_VERSION, normalize_document


@dataclass
class Extraction:
    """The outcome of extracting one PDF: normalized text, or why there is none."""

    text: str | None
    pages: int | None
    extractor: str
    extractor_version: str
    outcome: str  # ok | failed
    reason: str | None = None  # encrypted, corrupt, no_text, timeout, memory, crash, missing
    detail: str | None = None
    seconds: float = 0.0
    normalizer_version: str = NORMALIZER_VERSION
    # What was left out of `text`, by kind: "outside_crop" (visible characters outside the
    # page's crop box), "cid" ("(cid:NN)" placeholders), "latexit" (hidden LaTeXiT blobs).
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def dropped_note(self) -> str | None:
        """The stored `detail` of an ok text: what was dropped, e.g. "dropped: cid 12, outside_crop 340"."""
        items = [f"{k} {n}" for k, n in sorted(self.dropped.items()) if n]
        return "dropped: " + ", ".join(items) if items else None

    @classmethod
    def failed(cls, backend: str, reason: str, detail: str, seconds: float = 0.0,
               pages: int | None = None) -> "Extraction":
        return cls(text=None, pages=pages, extractor=backend, extractor_version=_version(backend),
                   outcome="failed", reason=reason, detail=detail[:2000], seconds=seconds)


def _version(backend: str) -> str:
    try:
        return backend_version(backend)
    except Exception:  # a broken install must not hide the real failure
        return "unknown"


def letters(text: str) -> int:
    return sum(1 for c in text if c.isalpha())


def extract_in_process(path: str | Path, backend: str = "pypdfium2") -> Extraction:
    """Extract and normalize `path` here and now; never raises for a bad PDF."""
    start = time.perf_counter()
    path = Path(path)
    read = get_backend(backend)  # unknown backend: a ConfigError, a caller's mistake
    if not path.is_file():
        return Extraction.failed(backend, "missing", f"no such file: {path}")
    try:
        raw = read(path)
        normalized = normalize_document(raw.pages)
        text = normalized.text
    except ExtractFailure as exc:
        return Extraction.failed(backend, exc.reason, exc.detail, time.perf_counter() - start)
    except MemoryError:
        return Extraction.failed(backend, "memory", "out of memory (worker memory cap reached)",
                                 time.perf_counter() - start)
    except RecursionError as exc:
        return Extraction.failed(backend, "corrupt", f"RecursionError: {exc}", time.perf_counter() - start)
    except Exception as exc:  # parsers raise anything on a malformed file, or wrap a failed allocation
        reason = "memory" if allocation_failure(exc) else "corrupt"
        return Extraction.failed(backend, reason, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    n = len(raw.pages)
    dropped = dict(raw.dropped + normalized.dropped)
    if n == 0 or letters(text) < MIN_LETTERS_PER_PAGE * n:
        failed = Extraction(text=None, pages=n, extractor=raw.extractor, extractor_version=raw.extractor_version,
                            outcome="failed", reason="no_text", seconds=seconds, dropped=dropped)
        # All (cid:NN) is a font without a Unicode map, not a scan: the note says which.
        failed.detail = "; ".join(filter(None, [f"{letters(text)} letters on {n} pages: no text layer (scanned?)",
                                                failed.dropped_note]))
        return failed
    result = Extraction(text=text, pages=n, extractor=raw.extractor, extractor_version=raw.extractor_version,
                        outcome="ok", seconds=seconds, dropped=dropped)
    result.detail = result.dropped_note
    return result
