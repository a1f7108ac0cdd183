"""Text backends: raw per-page text from a PDF, in reading order, plus a failure taxonomy.

Two backends:
- "pypdfium2" (the fast path): PDFium's text page, which follows the content stream;
  LaTeX and most typesetters write columns in reading order, so two-column papers come
  out column by column.
- "pdfplumber" (the project's named dependency, on pdfminer.six): its `extract_text`
  groups characters into lines across the whole page width, which interleaves two
  columns. `_plumber_page_text` therefore finds the gutter, cuts the page into
  horizontal bands (full-width lines such as the title or a wide table stay whole) and
  reads the left column before the right one in each band.

Both keep only text inside the page's crop box (what a viewer shows): some PDFs draw
text of other pages outside it (Elsevier's Procedia pages repeat neighbouring pages off
to the left), and a backend reads every glyph of the content stream. The number of
visible characters left out is `RawText.dropped["outside_crop"]`.

A backend raises `ExtractFailure(reason, detail)` for a PDF it cannot read; `reason` is
one of the stored words: encrypted, corrupt, no_text, timeout, memory, crash.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REASONS = ("encrypted", "corrupt", "no_text", "timeout", "memory", "crash", "missing")
# A document with fewer letters than this per page on average has no usable text layer.
MIN_LETTERS_PER_PAGE = 20


class ExtractFailure(Exception):
    """A PDF that cannot give text, with the stored reason word."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


# How C libraries and wrappers word a failed allocation when no MemoryError reaches us.
_ALLOCATION = re.compile(r"cannot allocate|unable to allocate|out of memory|bad_alloc|insufficient memory", re.I)


def allocation_failure(exc: BaseException) -> bool:
    """Whether `exc` is, or wraps, a failed allocation (a Flate bomb under the memory cap).

    pdfplumber wraps pdfminer's MemoryError ("Unable to allocate output buffer") in its
    own exception, so the type alone does not tell: the chain and the messages are read.
    """
    todo: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, MemoryError) or _ALLOCATION.search(str(e)):
            return True
        todo += [e.__cause__, e.__context__, *(a for a in e.args if isinstance(a, BaseException))]
    return False


def _unreadable(exc: BaseException, detail: str) -> ExtractFailure:
    return ExtractFailure("memory" if allocation_failure(exc) else "corrupt", detail)


@dataclass
class RawText:
    pages: list[str]
    extractor: str
    extractor_version: str
    dropped: Counter[str] = field(default_factory=Counter)  # what the backend left out, by kind


def _visible(text: str) -> int:
    return sum(1 for c in text if not c.isspace())


def _center_inside(box: tuple[float, float, float, float], x0: float, y0: float, x1: float, y1: float) -> bool:
    left, low, right, high = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return left <= cx <= right and low <= cy <= high


def _pdfium_page_text(page) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """A PDFium page's text inside its crop box, and how many visible characters lay outside.

    The text's rectangles (about one per line) are checked first, so the common page, all
    inside, costs one pass; only a page with text outside is read again, bounded.
    """
    tp = page.get_textpage()
    try:
        full = tp.get_text_range()
        box = tuple(page.get_cropbox())
        if all(_center_inside(box, *tp.get_rect(i)) for i in range(tp.count_rects())):
            return full, 0
        left, low, right, high = box
        far = 1e6  # the four strips around the crop box, which do not overlap
        strips = [(-far, -far, left, far), (right, -far, far, far), (left, -far, right, low), (left, high, right, far)]
        return tp.get_text_bounded(*box), sum(_visible(tp.get_text_bounded(*s)) for s in strips)
    finally:
        tp.close()


def pypdfium2_version() -> str:
    import pypdfium2.version as v

    build = getattr(v.PDFIUM_INFO, "build", None)
    return f"{v.PYPDFIUM_INFO} (pdfium {build})" if build else str(v.PYPDFIUM_INFO)


def pdfplumber_version() -> str:
    import pdfminer
    import pdfplumber

    return f"{pdfplumber.__version__} (pdfminer.six {pdfminer.__version__})"


def read_pypdfium2(path: Path) -> RawText:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc)
        if "password" in msg.lower():
            raise ExtractFailure("encrypted", msg) from None
        raise _unreadable(exc, msg) from None
    pages: list[str] = []
    dropped: Counter[str] = Counter()
    try:
        for i in range(len(doc)):
            page = doc[i]
            try:
                text, outside = _pdfium_page_text(page)
                pages.append(text)
                dropped["outside_crop"] += outside
            except pdfium.PdfiumError as exc:
                raise _unreadable(exc, f"page {i + 1}: {exc}") from None
            finally:
                page.close()
    finally:
        doc.close()
    return RawText(pages, "pypdfium2", pypdfium2_version(), +dropped)


# pdfplumber's default word gap (x_tolerance=3 pt) glues words of tightly justified
# 10 pt lines together ("Sentencepositionisastrong"); a gap relative to the font size
# (0.15 em) separates them in every font size.
_PLUMBER = {"x_tolerance_ratio": 0.15}


def _plumber_inside_crop(page) -> tuple[object, int]:  # type: ignore[no-untyped-def]
    """The page with only the characters whose centre is inside its crop box, and how many
    visible characters were outside (pdfplumber reads the whole content stream)."""
    x0, top, x1, bottom = page.cropbox

    def inside(obj: dict) -> bool:  # type: ignore[type-arg]
        if obj.get("object_type") != "char":
            return True
        return x0 <= (obj["x0"] + obj["x1"]) / 2 <= x1 and top <= (obj["top"] + obj["bottom"]) / 2 <= bottom

    outside = sum(1 for c in page.chars if not inside(c) and not c["text"].isspace())
    if tuple(page.cropbox) != tuple(page.mediabox):
        page = page.crop(page.cropbox, strict=False)  # the layout below works within page.bbox
    return (page.filter(inside), outside) if outside else (page, 0)


def _plumber_page_text(page) -> str:  # type: ignore[no-untyped-def]
    """One pdfplumber page in reading order: bands, left column before right."""
    words = page.extract_words(**_PLUMBER)
    if not words:
        return page.extract_text(**_PLUMBER) or ""
    width = float(page.width)
    x_lo, x_hi = page.bbox[0], page.bbox[2]
    best: tuple[int, float, float] | None = None
    x = x_lo + 0.35 * width
    while x <= x_lo + 0.65 * width:
        crossing = sum(1 for w in words if w["x0"] < x < w["x1"])
        key = (crossing, abs(x - (x_lo + width / 2)), x)
        if best is None or key < best:
            best = key
        x += 2.0
    assert best is not None
    gutter = best[2]
    left = sum(1 for w in words if w["x1"] <= gutter)
    right = sum(1 for w in words if w["x0"] >= gutter)
    if min(left, right) < 0.15 * len(words):
        return page.extract_text(**_PLUMBER) or ""
    # Full-width bands: vertical extents of words that cross the gutter.
    spans = sorted((w["top"], w["bottom"]) for w in words if w["x0"] < gutter < w["x1"])
    bands: list[list[float]] = []
    for top, bottom in spans:
        if bands and top <= bands[-1][1] + 1.0:
            bands[-1][1] = max(bands[-1][1], bottom)
        else:
            bands.append([top, bottom])
    y_top, y_bottom = page.bbox[1], page.bbox[3]
    cuts: list[tuple[float, float, bool]] = []  # (top, bottom, full_width)
    y = y_top
    for top, bottom in bands:
        if top > y:
            cuts.append((y, top, False))
        cuts.append((top, bottom, True))
        y = bottom
    if y < y_bottom:
        cuts.append((y, y_bottom, False))

    def region(t: float, b: float, x0: float, x1: float) -> str:
        def keep(obj: dict) -> bool:  # type: ignore[type-arg]
            if obj.get("object_type") != "char":
                return False
            cy = (obj["top"] + obj["bottom"]) / 2
            cx = (obj["x0"] + obj["x1"]) / 2
            return t <= cy < b and x0 <= cx < x1

        return page.filter(keep).extract_text(**_PLUMBER) or ""

    parts: list[str] = []
    for t, b, full in cuts:
        if full:
            parts.append(region(t, b + 0.01, x_lo, x_hi + 1))
        else:
            parts.append(region(t, b, x_lo, gutter))
            parts.append(region(t, b, gutter, x_hi + 1))
    return "\n".join(p for p in parts if p.strip())


def read_pdfplumber(path: Path) -> RawText:
    import pdfplumber
    from pdfplumber.utils.exceptions import PdfminerException

    try:
        pdf = pdfplumber.open(str(path))
    except PdfminerException as exc:
        inner = exc.args[0] if exc.args else exc
        name = type(inner).__name__
        if "Password" in name or "Encrypt" in name:
            raise ExtractFailure("encrypted", name) from None
        raise _unreadable(exc, f"{name}: {inner}") from None
    pages: list[str] = []
    dropped: Counter[str] = Counter()
    try:
        for i, page in enumerate(pdf.pages):
            try:
                visible, outside = _plumber_inside_crop(page)
                dropped["outside_crop"] += outside
                pages.append(_plumber_page_text(visible))
            except PdfminerException as exc:
                raise _unreadable(exc, f"page {i + 1}: {exc}") from None
            finally:
                page.close()
    finally:
        pdf.close()
    return RawText(pages, "pdfplumber", pdfplumber_version(), +dropped)


# --- Test hooks -----------------------------------------------------------------------
# Documented stand-ins for failures no small PDF can cause quickly: "test:sleep" hangs
# (for the timeout test), "test:hog" allocates memory until the worker's cap stops it
# (for the memory test), "test:spin" burns CPU without end (for the CPU-time limit).
# Only `extract_file(backend=...)` accepts them; settings do not.


def _test_sleep(path: Path) -> RawText:
    time.sleep(3600)
    raise AssertionError("unreachable")


def _test_spin(path: Path) -> RawText:
    while True:  # burns CPU, as a parser looping on a hostile PDF does
        pass


def _test_hog(path: Path) -> RawText:
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))


BACKENDS: dict[str, Callable[[Path], RawText]] = {
    "pypdfium2": read_pypdfium2,
    "pdfplumber": read_pdfplumber,
}
TEST_BACKENDS: dict[str, Callable[[Path], RawText]] = {
    "test:sleep": _test_sleep,
    "test:hog": _test_hog,
    "test:spin": _test_spin,
}


def get_backend(name: str) -> Callable[[Path], RawText]:
    fn = BACKENDS.get(name) or TEST_BACKENDS.get(name)
    if fn is None:
        from review.errors import ConfigError

        raise ConfigError(f"unknown extract backend {name!r}", hint=f"use one of: {', '.join(BACKENDS)}")
    return fn


def backend_version(name: str) -> str:
    if name == "pypdfium2":
        return pypdfium2_version()
    if name == "pdfplumber":
        return pdfplumber_version()
    return "test"
