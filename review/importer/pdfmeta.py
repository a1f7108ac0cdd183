"""Title, authors and year of a PDF nobody harvested: from its metadata, else its first page.

Why both, and why cross-checked: the metadata (Title, Author, CreationDate) is exact when
the authors set it, but templates leave stale values behind ("Instructions for ACL 2020
Proceedings", "Microsoft Word - paper.docx"). A metadata value is used only when the first
page confirms it (the title's words are on the page, the first author's surname too);
otherwise the first page is read: the title is the largest type near the top, the
authors are the name-like lines between it and the abstract, the year comes from the
proceedings header or copyright line, an arXiv stamp, or the creation date. Each value
says where it came from, and the created record keeps that (`derived_from`).

Reading runs in a forked child with a time limit (PDF parsers can hang on hostile
files): `read_meta()` never raises and never blocks longer than `timeout`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import statistics
import sys
import unicodedata
from typing import Any

from review.procs import die_with_parent

FROM_METADATA = "pdf_metadata"
FROM_FIRST_PAGE = "first_page"
FROM_CREATION_DATE = "creation_date"

_JUNK_TITLE = re.compile(r"^(untitled|title|paper|document|anonymous|none|slides?)\b|microsoft word|"
                         r"\.(docx?|tex|dvi|pdf|ps)$|^instructions for|^acl ?\d{4}|^template|^proceedings",
                         re.IGNORECASE)
_JUNK_AUTHOR = re.compile(r"^(anonymous|author|authors|user|admin|unknown|none|owner)\b", re.IGNORECASE)
_ORG_WORDS = re.compile(
    r"\b(universit\w*|institut\w*|department|dept|laborator\w*|lab|labs|research|school|college|faculty|"
    r"inc|ltd|llc|corp\w*|company|center|centre|academy|sciences?|technolog\w*|engineering|informatics|"
    r"computing|computer|street|road|avenue|google|microsoft|amazon|facebook|meta|ibm|salesforce|"
    r"deepmind|openai|china|usa|germany|japan|france|canada|india|korea|italy|spain|uk|kingdom|emirates|arab\w*|"
    r"saudi|kong|singapore|australia|netherlands|switzerland|israel|taiwan|brazil|russia|sweden|denmark|norway|"
    r"finland|belgium|austria|poland|portugal|greece|turkey|iran|egypt|qatar|mexico|africa|zealand|ireland|"
    r"abstract|introduction|proceedings|conference|workshop|association|linguistics)\b", re.IGNORECASE)
_PARTICLES = {"de", "van", "von", "der", "den", "la", "le", "di", "da", "du", "del", "dos", "das", "al", "el", "bin", "ter"}
_NAME_SPLIT = re.compile(r"[\d∗*†‡§¶♠♣♥♦⋆★,;|{}()]+|\s+and\s+|\s{2,}|&")
_COPYRIGHT = re.compile(r"(?:©|\(c\)|^c|copyright)\s*((?:19|20)\d{2})\b", re.IGNORECASE)
_VENUE_LINE = re.compile(r"proceedings|conference|workshop|symposium|journal", re.IGNORECASE)
_LONE_YEAR = re.compile(r"(?<![\d–-])((?:19|20)\d{2})(?![\d–-])")
_ARXIV_STAMP = re.compile(r"arXiv:(\d{2})(\d{2})\.\d{4,5}")
_DATE = re.compile(r"D:((?:19|20)\d{2})")
_LETTERS = re.compile(r"[a-z]+")
# Publisher banners and running heads that can be set larger than the title.
_BANNER = re.compile(r"sciencedirect|elsevier|springer|available online|contents lists|journal homepage|"
                     r"www\.|https?://|doi:|arxiv:|issn|vol\.|volume \d|published|preprint|under review",
                     re.IGNORECASE)
_ABSTRACT = re.compile(r"^\s*(abstract|a b s t r a c t)\b", re.IGNORECASE)


def read_meta_in_process(path: str) -> dict[str, Any]:
    """Title, authors, year (each with its origin) and the first page's text, read here."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(path)
    try:
        meta = {k: (v or "").strip() for k, v in doc.get_metadata_dict().items()}
        lines = _first_page_lines(doc) if len(doc) else []
    finally:
        doc.close()
    return describe(meta, lines)


def describe(meta: dict[str, str], lines: list[tuple[float, str]]) -> dict[str, Any]:
    """The record fields from metadata and the first page's (height, text) lines."""
    from review.extract.normalize import normalize

    lines = [(h, normalize(t)) for h, t in lines]
    lines = [(h, t) for h, t in lines if t]
    page = "\n".join(t for _, t in lines)
    page_words = words(page)
    out: dict[str, Any] = {"derived_from": {}, "first_page": page[:4000]}
    title = _meta_title(meta.get("Title", ""), page_words)
    if title:
        out["title"], out["derived_from"]["title"] = title, FROM_METADATA
    title_at = _title_lines(lines)
    if not title and title_at:
        out["title"] = " ".join(t for _, t in lines[title_at[0]:title_at[1]])
        out["derived_from"]["title"] = FROM_FIRST_PAGE
    authors = _meta_authors(meta.get("Author", ""), page_words)
    if authors:
        out["authors"], out["derived_from"]["authors"] = authors, FROM_METADATA
    elif title_at:
        authors = _page_authors(lines[title_at[1]:title_at[1] + 12])
        if authors:
            out["authors"], out["derived_from"]["authors"] = authors, FROM_FIRST_PAGE
    year, origin = _year(page, meta)
    if year:
        out["year"], out["derived_from"]["year"] = year, origin
    return out


def read_meta(path: str, *, timeout: float = 30.0) -> dict[str, Any]:
    """`read_meta_in_process` in a forked child; {"error": ...} when it fails or takes too long."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, path, os.getpid()), daemon=True, name="review-import-meta")
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout):
            return {"error": f"reading the PDF took longer than {timeout:g} s"}
        try:
            return parent.recv()
        except EOFError:
            return {"error": "the PDF reader died"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()


def _child(conn: Any, path: str, parent_pid: int) -> None:
    die_with_parent(parent_pid)  # a PDF that hangs the reader must not outlive a killed import
    sys.stdout = sys.stderr = open(os.devnull, "w")
    try:
        result = read_meta_in_process(path)
    except BaseException as exc:  # any parser failure is an answer, not a crash
        result = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    try:
        conn.send(result)
    finally:
        os._exit(0)


def _first_page_lines(doc: Any) -> list[tuple[float, str]]:
    """(type height, text) per line of page 1; height from the glyph boxes, so it is right
    even where the font size is 1 and a text matrix scales it (Quartz PDFs)."""
    page = doc[0]
    textpage = page.get_textpage()
    try:
        n = textpage.count_chars()
        text = textpage.get_text_range(0, n)
        lines: list[tuple[float, str]] = []
        current, heights = [], []
        for i, ch in enumerate(text[:n]):
            if ch in "\r\n":
                _close_line(lines, current, heights)
                current, heights = [], []
                continue
            current.append(ch)
            if ch.isalpha():
                left, bottom, right, top = textpage.get_charbox(i, loose=True)
                heights.append(top - bottom)
        _close_line(lines, current, heights)
        return lines[:80]
    finally:
        textpage.close()
        page.close()


def _close_line(lines: list[tuple[float, str]], chars: list[str], heights: list[float]) -> None:
    text = "".join(chars).strip()
    if text:
        lines.append((round(statistics.median(heights), 1) if heights else 0.0, text))


def words(text: str) -> set[str]:
    """The lower-case, accent-free letter runs of a text."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    return set(_LETTERS.findall(folded))


def confirmed(value: str, page_words: set[str], share: float = 0.8) -> bool:
    """Whether most words of `value` (a title) occur on the page."""
    mine = [w for w in words(value) if len(w) > 2]
    return bool(mine) and sum(w in page_words for w in mine) >= share * len(mine)


def _meta_title(value: str, page_words: set[str]) -> str | None:
    value = " ".join(value.split())
    if len(value) < 8 or " " not in value or _JUNK_TITLE.search(value):
        return None
    return value if confirmed(value, page_words) else None


def _meta_authors(value: str, page_words: set[str]) -> list[str]:
    parts = [" ".join(p.split()) for p in re.split(r";|,|\band\b", value) if p.strip()]
    names = [p for p in parts if not _JUNK_AUTHOR.search(p) and _name_like(p)]
    if not names:
        return []
    surname = words(names[0].split()[-1])
    return names if surname and surname <= page_words else []


def _title_lines(lines: list[tuple[float, str]]) -> tuple[int, int] | None:
    """[start, end) of the title: the first run of lines in the largest type near the top,
    above the abstract, leaving out page numbers and running headers."""
    top: list[tuple[int, float]] = []
    for i, (h, t) in enumerate(lines[:30]):
        if _ABSTRACT.match(t):
            break
        if sum(c.isalpha() for c in t) >= 4 and not _BANNER.search(t):
            top.append((i, h))
    if not top:
        return None
    biggest = max(h for _, h in top)
    start = next(i for i, h in top if h >= biggest * 0.95)
    end = start
    while (end < len(lines) and lines[end][0] >= biggest * 0.95 and not _ABSTRACT.match(lines[end][1])
           and not _BANNER.search(lines[end][1])):
        end += 1
    return start, end


def _page_authors(lines: list[tuple[float, str]]) -> list[str]:
    names: list[str] = []
    for n, (_, text) in enumerate(lines):
        if _ABSTRACT.match(text):
            break
        if "@" in text or _ORG_WORDS.search(text):
            continue
        for piece in _NAME_SPLIT.split(text):
            piece = " ".join(piece.replace("/", " ").split()).strip(" .-")
            if _name_like(piece, single_ok=n == 0) and piece not in names:
                names.append(piece)
    return names


def _name_like(text: str, single_ok: bool = False) -> bool:
    words = text.split()
    if not 1 <= len(words) <= 5 or (len(words) == 1 and not single_ok):
        return False
    if _ORG_WORDS.search(text) or any(ch.isdigit() or ch == "@" for ch in text):
        return False
    for w in words:
        if w.lower() in _PARTICLES:
            continue
        if not (w[0].isupper() and (len(w) > 1 or w.endswith("."))) and not re.fullmatch(r"[A-Z]\.(?:-?[A-Z]\.)*", w):
            return False
    return sum(c.isalpha() for c in text) >= 2


def _year(page: str, meta: dict[str, str]) -> tuple[int | None, str | None]:
    head = page.splitlines()[:12]
    for line in head:
        m = _COPYRIGHT.search(line)
        if m:
            return int(m.group(1)), FROM_FIRST_PAGE
    for n, line in enumerate(head):
        if _VENUE_LINE.search(line):  # the header's date may be on the line after the venue
            m = _LONE_YEAR.search(line) or (_LONE_YEAR.search(head[n + 1]) if n + 1 < len(head) else None)
            if m:
                return int(m.group(1)), FROM_FIRST_PAGE
    m = _ARXIV_STAMP.search(page)
    if m:
        return 2000 + int(m.group(1)), FROM_FIRST_PAGE
    for key in ("CreationDate", "ModDate"):
        m = _DATE.match(meta.get(key, ""))
        if m:
            return int(m.group(1)), FROM_CREATION_DATE
    return None, None
