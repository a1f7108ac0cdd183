"""One text normalization for every backend, so labels never depend on the extractor.

Steps, in order (bump NORMALIZER_VERSION when any of them changes; it is stored per text):

1. Line ends become "\\n"; pages are joined with a form feed so hyphenation across a
   page or column break is still seen. Text that is no text is dropped and counted
   (`Normalized.dropped`): pdfminer's "(cid:NN)" placeholders for glyphs its font cannot
   map to Unicode, and LaTeXiT's invisible "<latexit sha1_base64=...>...</latexit>"
   base64 source of an equation.
2. Detached accents are reattached. PDFs re-saved on macOS (and TeX's accent macros)
   draw the accent as its own spacing glyph: pdfminer gives "Krys´cin´ski" (accent after
   its letter), PDFium gives "Krysci ´ nski" (accent alone between spaces, belonging to
   the next letter). Both become precomposed letters ("Kryściński", "Krysciński": PDFium
   drops the first accent itself, which no normalizer can bring back).
3. Unicode NFKC: ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ) split into letters, full-width and compatibility
   forms folded. Soft hyphens (U+00AD) and Unicode hyphens U+2010/U+2011 are unified.
4. End-of-line hyphenation: PDFium marks a line-end hyphen with U+FFFE and joins the
   lines; pdfminer leaves "-" plus a newline. Both are treated alike: the pieces are
   joined into one word unless the hyphen is real. A hyphen is always kept next to a
   digit ("ROUGE-" / "1.5.5"). Otherwise the document's own spelling decides: "py-rouge"
   elsewhere more often than "pyrouge" keeps it, "METEOR" elsewhere joins "ME-" /
   "TEOR". Without evidence, a capital after the break keeps it ("ROUGE-" / "L"), as do
   two pieces that are words of their own in the document ("cross-" / "lingual");
   everything else is joined ("evalu-" / "ation").
5. A space left before a full stop, comma or semicolon by a superscript footnote mark
   ("stemming1 . Then") is removed, and a URL broken after "." or "/" at a line end
   ("https://github. com/kedz") is rejoined when it continues in lower case with a URL
   part. A URL broken after "_" at a line end ("github.com/guyallard/markov_" /
   "clustering") is rejoined with the next line whatever its case: a sentence never
   ends with an underscore, while after "." or "/" the next line may start a sentence.
   So is a scheme left at a line end ("https:" / "//github.com/...").
6. Whitespace is collapsed: runs inside a page become one space; pages are separated by
   one newline. Control characters, stray U+FFFE, private-use code points (unmapped
   symbol glyphs) and accents left without a letter are dropped.

Reading order is the backend's job (see backends.py); normalization never reorders.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

NORMALIZER_VERSION = "2"

# Spacing accent characters and the combining marks they stand for.
_ACCENTS = {
    "\u00b4": "\u0301",  # ´ acute
    "\u02ca": "\u0301",
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u02c7": "\u030c",  # ˇ caron
    "\u02d8": "\u0306",  # ˘ breve
    "\u02da": "\u030a",  # ˚ ring
    "\u00b8": "\u0327",  # ¸ cedilla
    "\u02dd": "\u030b",  # ˝ double acute
}
_ACC = "".join(_ACCENTS)
_SPACED_ACCENT = re.compile(rf"(?<=[^\W\d_]) ([{_ACC}]) ([^\W\d_])")
_TIGHT_ACCENT = re.compile(rf"([^\W\d_])([{_ACC}])([^\W\d_])")

# A line-end break: PDFium's U+FFFE (lines already joined), a soft hyphen, or "-" + newline.
_MARKER = re.compile(r"(?:\ufffe[ \t]*\n?|\u00ad[ \t]*\n?|-[ \t]*[\n\f])[ \t\n\f]*")
_RIGHT = re.compile(r"[^\W_]+")
_WORD = re.compile(r"\b[^\W\d_][^\W_]*(?:-[^\W_]+)*")
_SPACE_BEFORE_PUNCT = re.compile(r" ([.,;])(?= |\n|$)")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffe\uffff\ue000-\uf8ff\U000f0000-\U0010ffff]")
# The same characters as bytes: ASCII controls to delete, and the UTF-8 lead bytes of every
# code point _CONTROL matches above U+007F (U+E000-U+FFFF: EE, EF; planes 15 and 16: F3, F4).
_CONTROL_ASCII = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F])
_CONTROL_LEADS = (b"\xee", b"\xef", b"\xf3", b"\xf4")
_ORPHAN_ACCENT = re.compile(rf"[{_ACC}]")
# pdfminer's stand-in for a glyph its font cannot map to Unicode (no ToUnicode map).
_CID = re.compile(r"\(cid:\d+\)")
# LaTeXiT keeps an equation's source in the PDF as invisible text: a base64 blob between
# <latexit sha1_base64="..."> and </latexit>. A blob wrapped over lines is taken whole only
# when its closing tag follows; a cut one ends at the first space, so no word is lost.
_B64 = "[A-Za-z0-9+/=]"
_LATEXIT = re.compile(rf"<latexit\b[^>]{{0,200}}>{_B64}*(?:(?:\s{_B64}+){{0,40}}?\s?</latexit>)?")
# The continuation must itself look like a URL part (lower-case start, a "/" or "." inside),
# so a page number after "https://github.com/x." stays apart.
_URL_BREAK = re.compile(r"((?:https?://|www\.)\S*[./]) ([a-z][\w~%#?=&-]*[./][\w./~%#?=&-]*)")
# A URL (scheme, "www." or a dotted host followed by "/") whose last character before a
# line end is "_": an underscore never ends a sentence, so the next line continues it
# ("github.com/guyallard/markov_" / "clustering"). Only a line end inside a page counts;
# the continuation must start with a letter or digit.
_UNDERSCORE_BREAK = re.compile(r"_[ \t]*\n[ \t\n]*(?=[^\W_])")
_URL_START = re.compile(r"https?://|www\.|(?<![\w.-])[\w-]+(?:\.[\w-]+)+/")
# A scheme left at a line end: "https:" / "//github.com/...".
_SCHEME_BREAK = re.compile(r"(?<![\w-])(https?:)[ \t]*\n[ \t\n]*(?=//\w)")
_SCHEME_AT_LINE_END = re.compile(r"https?:[ \t]*\n")  # starts with a literal: a fast first look
_NFKC_PIECE = 128  # characters; measured fastest among 64 to 1024 on GROBID-like text


def nfkc(text: str) -> str:
    """Unicode NFKC of `text`, skipping the pieces that are already in that form (see step 3).

    An ASCII character is a starter (combining class 0), NFKC-stable and never the second
    character of a composition, so the text may be cut before any ASCII character and each
    piece normalized alone. Pieces of about `_NFKC_PIECE` characters that are ASCII, or pass
    Unicode's quick check, are kept as they are: whole-string NFKC decomposed and recomposed
    every character, a quarter of normalization's time on mostly-ASCII papers.
    """
    if text.isascii():
        return text
    out, start, n = [], 0, len(text)
    while start < n:
        end = start + _NFKC_PIECE
        while end < n and text[end] > "\x7f":
            end += 1
        piece = text[start:end]
        out.append(piece if piece.isascii() or unicodedata.is_normalized("NFKC", piece)
                   else unicodedata.normalize("NFKC", piece))
        start = end
    return "".join(out)


def _compose(base: str, mark: str) -> str | None:
    composed = unicodedata.normalize("NFC", base + mark)
    return composed if len(composed) == 1 else None


def reattach_accents(text: str) -> str:
    """Put detached spacing accents back on their letters (see step 2)."""

    def spaced(m: re.Match[str]) -> str:
        c = _compose(m.group(2), _ACCENTS[m.group(1)])
        return c if c else m.group(0)

    def tight(m: re.Match[str]) -> str:
        prev, acc, nxt = m.groups()
        mark = _ACCENTS[acc]
        c = _compose(prev, mark)
        if c:
            return c + nxt
        c = _compose(nxt, mark)
        return prev + c if c else m.group(0)

    if not any(acc in text for acc in _ACCENTS):
        return text  # the common case: ten substring scans, much faster than a character-class regex
    text = _SPACED_ACCENT.sub(spaced, text)
    text = _TIGHT_ACCENT.sub(tight, text)
    return _ORPHAN_ACCENT.sub("", text)  # an accent with no letter to sit on is noise


def _breaks(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, left piece, right piece) of every line-end break between two words.

    Markers are found first and the words around them read afterwards: a regex that
    starts with the word would retry at every letter of the text.
    """
    found = []
    last_end = 0
    for m in _markers(text):
        start = m.start()
        if start < last_end:
            continue
        i, lo = start, max(last_end, start - 80)
        while i > lo and (text[i - 1].isalnum()):
            i -= 1
        right = _RIGHT.match(text, m.end())
        if i == start or right is None:
            continue
        found.append((i, right.end(), text[i:start], right.group()))
        last_end = right.end()
    return found


def _markers(text: str) -> Iterator[re.Match[str]]:
    """What `_MARKER.finditer(text)` yields, trying the regex only where a marker can start.

    A marker starts at U+FFFE, a soft hyphen, or a "-" followed by spaces or tabs and a line
    or page end; what a marker spans after its first character is white space, where none
    can start, so the markers are exactly the matches at those places, in order. Finding
    them with `str.find` is several times faster than the regex's scan, which stops at every
    hyphen of the text.
    """
    starts = [i for mark in "\ufffe\u00ad" for i in _positions(text, mark)]
    for end in (*_positions(text, "\n"), *_positions(text, "\f")):
        i = end
        while i > 0 and text[i - 1] in " \t":
            i -= 1
        if i > 0 and text[i - 1] == "-":
            starts.append(i - 1)
    for start in sorted(starts):
        m = _MARKER.match(text, start)
        if m is not None:
            yield m


def _positions(text: str, char: str) -> Iterator[int]:
    i = text.find(char)
    while i >= 0:
        yield i
        i = text.find(char, i + 1)


def _vocabulary(text: str, breaks: list[tuple[int, int, str, str]]) -> Counter[str]:
    """Word counts of the document outside hyphenation breaks (lower case)."""
    pieces, pos = [], 0
    for start, end, _, _ in breaks:
        pieces.append(text[pos:start])
        pos = end
    pieces.append(text[pos:])
    counts: Counter[str] = Counter(map(str.lower, _WORD.findall(" ".join(pieces))))
    for w, n in list(counts.items()):
        if "-" in w:
            for part in w.split("-"):
                counts["\x00part:" + part] += n
    return counts


def keep_hyphen(left: str, right: str, vocab: Counter[str]) -> bool:
    """True when the line-end hyphen between `left` and `right` is a real one."""
    if right[0].isdigit() or left[-1].isdigit():
        return True  # ROUGE-1, ROUGE-1.5.5, BERT-2 ...
    lw, rw = left.lower(), right.lower()
    joined, hyphenated = vocab[lw + rw], vocab[f"{lw}-{rw}"]
    if joined != hyphenated:
        return hyphenated > joined  # the document's own spelling decides
    if right[0].isupper():
        return True  # ROUGE-L, BERT-Base
    if len(lw) > 1 and len(rw) > 1:
        # Compound of two words the document uses on their own ("cross-" / "lingual").
        return vocab[lw] + vocab["\x00part:" + lw] > 0 and vocab[rw] + vocab["\x00part:" + rw] > 0
    return False


def dehyphenate(text: str) -> str:
    """Join words broken at line ends, keeping real hyphens (see step 4)."""
    for _ in range(2):  # a word broken twice ("a-\nb-\nc") needs a second pass
        breaks = _breaks(text)
        if not breaks:
            break
        vocab = _vocabulary(text, breaks)
        out, pos = [], 0
        for start, end, left, right in breaks:
            out.append(text[pos:start])
            out.append(f"{left}-{right}" if keep_hyphen(left, right, vocab) else left + right)
            pos = end
        out.append(text[pos:])
        text = "".join(out)
    return text


def join_underscore_urls(text: str) -> str:
    """Rejoin URLs broken at a line end after "_" or the scheme's ":" (see step 5).

    Line ends after "_" are found first and the word before each is checked for a URL
    (a regex starting at the URL would be tried at every character of the text); a word
    that starts where the last join ended continues that URL (broken twice).
    """
    if _SCHEME_AT_LINE_END.search(text):
        text = _SCHEME_BREAK.sub(r"\1", text)
    out, pos, joined_end = [], 0, -1
    for m in _UNDERSCORE_BREAK.finditer(text):
        word_start = max(text.rfind(c, 0, m.start()) for c in " \n\f\t") + 1
        if word_start != joined_end and _URL_START.search(text, word_start, m.start()) is None:
            continue
        out.append(text[pos:m.start() + 1])  # up to and with the "_"
        pos = joined_end = m.end()
    out.append(text[pos:])
    return "".join(out)


def join_url_breaks(page: str) -> str:
    """Rejoin URLs broken after "." or "/" (see step 5): `_URL_BREAK.sub` tried only where a URL starts.

    Every match starts at "http" or "www.", which `str.find` locates at memory speed; the
    regex's own scan would try each "h" and "w" of the text. Matches are taken left to right
    and never overlap, exactly as `re.sub` takes them.
    """
    out, pos = [], 0
    nxt = {lit: page.find(lit) for lit in ("http", "www.")}
    while True:
        at = min((i for i in nxt.values() if i >= 0), default=-1)
        if at < 0:
            break
        m = _URL_BREAK.match(page, at)
        if m is not None:
            out += (page[pos:at], m[1], m[2])
            pos = m.end()
        resume = pos if m is not None else at + 1
        for lit, i in nxt.items():
            if 0 <= i < resume:
                nxt[lit] = page.find(lit, resume)
    if not out:
        return page
    out.append(page[pos:])
    return "".join(out)


@dataclass
class Normalized:
    """A document's normalized text and what normalization dropped from it, by kind."""

    text: str
    dropped: Counter[str] = field(default_factory=Counter)


def drop_control(text: str) -> str:
    """`text` without the characters of `_CONTROL` (see step 6).

    Most texts have none, and proving it on the UTF-8 bytes (`bytes.translate` and a few
    substring scans) is several times faster than the regex's character-class scan.
    """
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw.translate(None, _CONTROL_ASCII)) == len(raw) and not any(b in raw for b in _CONTROL_LEADS):
        return text
    return _CONTROL.sub("", text)


def drop_placeholders(text: str) -> tuple[str, Counter[str]]:
    """Remove "(cid:NN)" glyph placeholders and LaTeXiT's hidden source (see step 1)."""
    dropped: Counter[str] = Counter()
    if "(cid:" in text:
        text, dropped["cid"] = _CID.subn("", text)
    if "latexit" in text:
        text, dropped["latexit"] = _LATEXIT.subn(" ", text)
    return text, +dropped


def normalize_document(pages: list[str]) -> Normalized:
    """The normalized text of a document given the raw text of each page, with counts."""
    text = "\f".join(p.replace("\r\n", "\n").replace("\r", "\n") for p in pages)
    text, dropped = drop_placeholders(text)
    text = reattach_accents(text)
    text = nfkc(text)
    text = text.replace("\u2010", "-").replace("\u2011", "-")
    text = dehyphenate(text)
    text = text.replace("\u00ad", "")
    text = drop_control(text)
    text = join_underscore_urls(text)
    out_pages = []
    for page in text.split("\f"):
        page = " ".join(page.split())
        if " ." in page or " ," in page or " ;" in page:
            page = _SPACE_BEFORE_PUNCT.sub(r"\1", page)
        out_pages.append(join_url_breaks(page))
    return Normalized("\n".join(p for p in out_pages if p), dropped)


def normalize_pages(pages: list[str]) -> str:
    """The normalized text of a document given the raw text of each page."""
    return normalize_document(pages).text


def normalize(text: str) -> str:
    """Normalize a single string (form feeds separate pages)."""
    return normalize_pages(text.split("\f"))
