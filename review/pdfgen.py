"""Write realistic two-column, paper-like PDFs with known ground-truth text.

Why: a fresh clone has no real papers, yet extraction, rules and the sample survey need
PDFs that fail the way real ones do. This module typesets structured content with
ReportLab (a real typesetting engine: justified lines, pyphen hyphenation, an embedded
TrueType font) and returns the text a perfect extractor would produce.

What the PDFs contain, on purpose:
- a full-width title block, then two justified columns (reading order must survive);
- typographic ligatures (U+FB00 ff, U+FB01 fi, U+FB02 fl) drawn as single glyphs;
- end-of-line hyphenation (pyphen), so words break as "evalu-" / "ation";
- footnotes at the foot of the right column of page 1, where long parameter strings
  such as "-c 95 -r 1000 -n 2 -m" wrap across lines;
- a table whose two-row header puts a metric's name over its columns ("1 2 L");
- numbered references;
- display lines (a paragraph written `like this`) in a small typewriter face, as papers set
  a command line or a tool's signature.

The metric-specific words of the realistic content (the names sprinkled in, the sentences
that report a package and a parameter string, the footnotes, the table header) are data:
`SampleText`, by default the `[typeset]` of the default metric folder's sample file.

Usage::

    from review.pdfgen import PaperSpec, Section, TableSpec, write_paper, sample_spec
    truth = write_paper("paper.pdf", sample_spec(seed=1))

`write_paper` returns the ground truth: the paper's words in reading order (title,
authors, abstract, sections, table, references, with page 1's footnotes after page 1's
text), one block per line, without ligature characters or hyphenation breaks.
Extra switches make the failure cases the extractor must survive: `password`
(encrypted), and `write_scanned_pdf` (pages with an image and no text layer).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_LEFT
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import FrameBreak, NextPageTemplate
from reportlab.platypus.flowables import KeepTogether

FONT_DIRS = [
    Path("/usr/share/fonts/truetype/dejavu"),  # Debian fonts-dejavu-core
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
]
LIGATURES = {"ffi": "\ufb03", "ffl": "\ufb04", "ff": "\ufb00", "fi": "\ufb01", "fl": "\ufb02"}
_FOOTNOTE_REF = re.compile(r"\[fn:(\d+)\]")


@dataclass
class Section:
    heading: str
    paragraphs: list[str]


@dataclass
class TableSpec:
    """A results table: `header` is drawn as "group" over `subheaders` (e.g. a metric / 1 2 L)."""

    caption: str
    group: str = "Score"
    subheaders: list[str] = field(default_factory=lambda: ["1", "2", "L"])
    first_header: str = "Model"
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class PaperSpec:
    """Structured content of one paper.

    A paragraph may cite footnote N with the marker "[fn:N]" right after a word; the
    footnote's text is `footnotes[N-1]`. The table (if any) follows section `table_after`.
    """

    title: str
    authors: list[str]
    abstract: str
    sections: list[Section]
    footnotes: list[str] = field(default_factory=list)
    table: TableSpec | None = None
    table_after: int = 0
    references: list[str] = field(default_factory=list)
    ligatures: bool = True
    hyphenate: bool = True


def _find_fonts() -> tuple[str, str, str]:
    """Register a serif family with ligature glyphs; DejaVu if present, else ReportLab's Vera."""
    if "PaperSerif" in pdfmetrics.getRegisteredFontNames():
        return "PaperSerif", "PaperSerif-Bold", "PaperSerif-Italic"
    names = ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSerif-Italic.ttf")
    for d in FONT_DIRS:
        if all((d / n).exists() for n in names):
            files = [d / n for n in names]
            break
    else:
        import reportlab

        rl = Path(reportlab.__file__).parent / "fonts"
        files = [rl / "Vera.ttf", rl / "VeraBd.ttf", rl / "VeraIt.ttf"]
    for name, path in zip(("PaperSerif", "PaperSerif-Bold", "PaperSerif-Italic"), files):
        pdfmetrics.registerFont(TTFont(name, str(path)))
    return "PaperSerif", "PaperSerif-Bold", "PaperSerif-Italic"


def _has_glyph(font: str, ch: str) -> bool:
    face = getattr(pdfmetrics.getFont(font), "face", None)
    return face is not None and ord(ch) in face.charToGlyph


def _hyphenation_available() -> bool:
    try:
        import pyphen  # noqa: F401
    except ImportError:
        return False
    return True


class _TruthParagraph(Paragraph):
    """A Paragraph that knows its source text, and splits it with itself across frames.

    The first part of a split keeps the lines it was cut with. ReportLab would break its
    text into lines again when it is placed, and that is not the same layout: a word
    hyphenated at a line end comes back whole with its hyphen ("en-coder"), and each
    breaking pass can change the fragments the next one sees. The re-broken part could
    then need a line more than the room it was cut for, and the frame refused it
    ("Splitting error(n==2)" on some specs, whatever the retries).
    """

    _truth: str = ""
    _cut: Any = None  # (width, lines) of a first part, as measured by the split

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:  # noqa: N803
        if self._cut is not None and self._cut[0] == availWidth:
            self.width, self.blPara = availWidth, self._cut[1]
            self.height = len(self.blPara.lines) * self.style.leading
            return self.width, self.height
        return super().wrap(availWidth, availHeight)

    def split(self, availWidth: float, availHeight: float) -> list[Any]:  # noqa: N803
        parts = super().split(availWidth, availHeight)
        if len(parts) == 2:
            parts[0]._cut = (availWidth, self.blPara.clone(lines=self.blPara.lines[:len(parts[0].blPara.lines)]))
            # Hyphenation never adds spaces, so the first part's token count tells where
            # the source text splits; a word broken across frames stays in the first part.
            k = len(parts[0].getPlainText().split())
            words = self._truth.split()
            parts[0]._truth = " ".join(words[:k])
            parts[1]._truth = " ".join(words[k:])
        return parts


class _PaperDoc(BaseDocTemplate):
    """Records the source text of each flowable as it is drawn, to build the ground truth.

    Page 1's footnotes are drawn when its left column ends, so the content stream holds
    them where a reader (and a geometric extractor) meets them: after the left column.
    """

    def __init__(self, *args: Any, **kw: Any):
        self.trace: list[str] = []
        self.footnote_text: str = ""
        self.draw_footnotes: Any = None
        self._footnotes_done = False
        super().__init__(*args, **kw)

    def afterFlowable(self, flowable: Any) -> None:  # noqa: N802 (ReportLab's name)
        truth = getattr(flowable, "_truth", None)
        if truth:
            self.trace.append(truth)

    def _footnotes(self) -> None:
        if self.page == 1 and not self._footnotes_done and self.draw_footnotes is not None:
            self._footnotes_done = True
            self.draw_footnotes(self.canv)
            if self.footnote_text:
                self.trace.append(self.footnote_text)

    def handle_frameEnd(self, resume: int = 0) -> None:  # noqa: N802
        if self.frame is not None and self.frame.id == "left1":
            self._footnotes()
        super().handle_frameEnd(resume)

    def handle_pageEnd(self) -> None:  # noqa: N802
        self._footnotes()
        super().handle_pageEnd()


def _para(text: str, style: ParagraphStyle, *, ligatures: bool) -> _TruthParagraph:
    p = _TruthParagraph(_markup(text, ligatures=ligatures), style)
    p._truth = _FOOTNOTE_REF.sub(lambda m: m.group(1), text)
    return p


def _ligate(text: str) -> str:
    for plain, lig in LIGATURES.items():
        text = text.replace(plain, lig)
    return text


def _markup(text: str, *, ligatures: bool) -> str:
    """Escape for ReportLab's mini-markup, set footnote refs as superscripts, add ligatures."""
    out = escape(text)
    if ligatures:
        out = _ligate(out)
    return _FOOTNOTE_REF.sub(lambda m: f"<super>{m.group(1)}</super>", out)


def write_paper(path: str | Path, spec: PaperSpec, *, password: str | None = None) -> str:
    """Typeset `spec` into a two-column PDF at `path`; return the ground-truth text.

    With `password`, the PDF is encrypted (RC4/AES standard security handler) with that
    user password, as some publishers' PDFs are.
    """
    regular, bold, italic = _find_fonts()
    lig = spec.ligatures and all(_has_glyph(regular, c) for c in "\ufb00\ufb01\ufb02\ufb03\ufb04")
    hyph = "en_US" if spec.hyphenate and _hyphenation_available() else None
    width, height = letter
    margin, gap = 54.0, 18.0
    col_w = (width - 2 * margin - gap) / 2
    title_h = 96.0

    body = ParagraphStyle("body", fontName=regular, fontSize=10, leading=12.2, alignment=TA_JUSTIFY,
                          hyphenationLang=hyph, embeddedHyphenation=1, uriWasteReduce=0.3,
                          spaceAfter=4)
    if hyph is None:
        body.hyphenationLang = ""
    heading = ParagraphStyle("heading", fontName=bold, fontSize=11, leading=14, spaceBefore=6, spaceAfter=3)
    title_st = ParagraphStyle("title", fontName=bold, fontSize=15, leading=19, alignment=TA_CENTER, spaceAfter=8)
    author_st = ParagraphStyle("authors", fontName=regular, fontSize=10.5, leading=13, alignment=TA_CENTER,
                               spaceAfter=10)
    abstract_st = ParagraphStyle("abstract", parent=body, fontSize=9.5, leading=11.5, leftIndent=8, rightIndent=8)
    foot_st = ParagraphStyle("foot", fontName=regular, fontSize=8, leading=9.6, alignment=TA_JUSTIFY,
                             hyphenationLang=hyph or "", embeddedHyphenation=1)
    ref_st = ParagraphStyle("ref", parent=body, fontSize=9, leading=10.8, alignment=TA_LEFT,
                            leftIndent=10, firstLineIndent=-10)
    caption_st = ParagraphStyle("caption", parent=body, fontSize=9, leading=10.8)
    # A paragraph written `like this` is a display line in a small typewriter face, as papers
    # set a command line or a tool's signature: one token too long for a line of body text.
    code_st = ParagraphStyle("code", fontName="Courier", fontSize=6.5, leading=8, alignment=TA_LEFT,
                             spaceBefore=1, spaceAfter=4, hyphenationLang="", splitLongWords=1)

    # Footnotes of page 1 sit at the foot of the left column, which is shortened for them.
    foot_paras = [Paragraph(f"<super>{i}</super>{_markup(t, ligatures=lig)}", foot_st)
                  for i, t in enumerate(spec.footnotes, 1)]
    foot_h = sum(p.wrap(col_w, height)[1] + 2 for p in foot_paras) + (10 if foot_paras else 0)
    col_h1 = height - 2 * margin - title_h
    x_left, x_right = margin, margin + col_w + gap

    def draw_footnotes(canv: Any) -> None:
        if not foot_paras:
            return
        y = margin + foot_h - 6
        canv.saveState()
        canv.setStrokeColor(colors.black)
        canv.setLineWidth(0.4)
        canv.line(x_left, y, x_left + col_w * 0.4, y)
        y -= 4
        for p in foot_paras:
            _, h = p.wrap(col_w, height)
            p.drawOn(canv, x_left, y - h)
            y -= h + 2
        canv.restoreState()

    def frame(x: float, y: float, w: float, h: float, fid: str) -> Frame:
        return Frame(x, y, w, h, id=fid, leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)

    first = PageTemplate("first", frames=[
        frame(margin, height - margin - title_h, width - 2 * margin, title_h, "title"),
        frame(x_left, margin + foot_h, col_w, col_h1 - foot_h, "left1"),
        frame(x_right, margin, col_w, col_h1, "right1"),
    ])
    later = PageTemplate("later", frames=[
        frame(x_left, margin, col_w, height - 2 * margin, "left"),
        frame(x_right, margin, col_w, height - 2 * margin, "right"),
    ])
    kw: dict[str, Any] = {}
    if password is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption

        kw["encrypt"] = StandardEncryption(password, ownerPassword=password + "-owner", strength=128)
    doc = _PaperDoc(str(path), pagesize=letter, pageTemplates=[first, later], title=spec.title,
                    author=", ".join(spec.authors), creator="review.pdfgen", invariant=1, **kw)
    doc.draw_footnotes = draw_footnotes
    doc.footnote_text = "\n".join(f"{i}{t}" for i, t in enumerate(spec.footnotes, 1))

    story: list[Any] = [NextPageTemplate("later")]
    story.append(_para(spec.title, title_st, ligatures=lig))
    story.append(_para(", ".join(spec.authors), author_st, ligatures=lig))
    story.append(FrameBreak())
    story.append(_para("Abstract", ParagraphStyle("abs_h", parent=heading, alignment=TA_CENTER), ligatures=lig))
    story.append(_para(spec.abstract, abstract_st, ligatures=lig))
    for n, sec in enumerate(spec.sections, 1):
        story.append(_para(f"{n} {sec.heading}", heading, ligatures=lig))
        for para in sec.paragraphs:
            if len(para) > 2 and para.startswith("`") and para.endswith("`"):
                story.append(_para(para[1:-1], code_st, ligatures=False))
            else:
                story.append(_para(para, body, ligatures=lig))
        if spec.table is not None and n == spec.table_after:
            story.append(_table(spec.table, regular, bold, caption_st, col_w, lig))
    if spec.references:
        story.append(_para("References", heading, ligatures=lig))
        for ref in spec.references:
            story.append(_para(ref, ref_st, ligatures=lig))
    doc.build(story)
    return _ground_truth(doc.trace)


def _table(t: TableSpec, regular: str, bold: str, caption_st: ParagraphStyle, col_w: float, lig: bool) -> Any:
    ncols = 1 + len(t.subheaders)
    data = [[t.first_header, t.group] + [""] * (len(t.subheaders) - 1), [""] + list(t.subheaders)]
    data += [list(r) for r in t.rows]
    first_w = col_w * 0.4
    table = Table(data, colWidths=[first_w] + [(col_w * 0.9 - first_w) / (ncols - 1)] * (ncols - 1))
    table.setStyle(TableStyle([
        ("FONTNAME", (0, 0), (-1, 1), bold),
        ("FONTNAME", (0, 2), (-1, -1), regular),
        ("FONTSIZE", (0, 0), (-1, -1), 9),
        ("SPAN", (1, 0), (-1, 0)),
        ("SPAN", (0, 0), (0, 1)),
        ("ALIGN", (1, 0), (-1, -1), "CENTER"),
        ("VALIGN", (0, 0), (0, 1), "MIDDLE"),
        ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
        ("LINEBELOW", (0, 1), (-1, 1), 0.5, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
    ]))
    truth_lines = [f"{t.first_header} {t.group}", " ".join(t.subheaders)] + [" ".join(r) for r in t.rows]
    table._truth = "\n".join(truth_lines)  # type: ignore[attr-defined]
    caption = _para(t.caption, caption_st, ligatures=lig)
    block = KeepTogether([Spacer(1, 4), table, Spacer(1, 3), caption])
    return block


def _ground_truth(trace: list[str]) -> str:
    lines = [re.sub(r"\s+", " ", t).strip() for t in trace]
    return "\n".join(line for line in lines if line) + "\n"


def write_scanned_pdf(path: str | Path, pages: int = 1) -> None:
    """A PDF whose pages are only raster images (a "scan"): no text layer at all."""
    from io import BytesIO

    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    width, height = letter
    canv = Canvas(str(path), pagesize=letter, invariant=1)
    rng = random.Random(7)
    for _ in range(pages):
        img = Image.new("L", (850, 1100), 255)
        draw = ImageDraw.Draw(img)
        for col in (0, 1):
            for line in range(70):
                x0 = 75 + col * 370
                w = rng.randint(250, 330)
                draw.rectangle([x0, 90 + line * 13, x0 + w, 90 + line * 13 + 6], fill=rng.randint(30, 90))
        buf = BytesIO()
        img.save(buf, format="PNG")
        buf.seek(0)
        canv.drawImage(ImageReader(buf), 0, 0, width, height)
        canv.showPage()
    canv.save()


# --- Realistic sample content -------------------------------------------------------

_WORDS = (
    "summarization evaluation abstractive extractive coefficient significant effective "
    "different benchmark reflection fluency baseline configuration identification workflow "
    "efficient sufficient official artificial classification overflow affinity traffic "
    "reference candidate correlation annotator agreement hypothesis document sentence "
    "dataset corpus encoder decoder attention transformer pretraining finetuning model "
    "human judgment metric overlap measure score system output article "
    "news headline highlight reproducibility implementation package parameter setting "
    "preprocessing lowercasing truncation length limit variance "
    "resampling comparison improvement state-of-the-art "
    "well-known fine-grained multi-document cross-lingual long-form"
).split()
# No rule terms (stemming, tokenization, stopwords, bootstrap, confidence interval, precision,
# recall, F-score) in the filler: a sample paper's protocol labels must come from the
# sentences written on purpose, or the sample's expected statistics mean nothing.


@dataclass(frozen=True)
class SampleText:
    """The metric's words in generated papers (a metric folder's sample `[typeset]`)."""

    mentions: tuple[str, ...]  # names sprinkled into filler when the paper reports the metric
    other_mentions: tuple[str, ...]  # the names used instead when it does not (same length)
    report_sentences: tuple[str, ...]  # said by a reporting paper; "[fn:{n}]" cites a footnote
    footnotes: tuple[str, ...]
    table: tuple[str, tuple[str, ...]]  # (group, columns) of a reporting paper's results table
    other_table: tuple[str, tuple[str, ...]]


def default_text() -> SampleText:
    """The default metric's words (its sample file's `[typeset]`)."""
    from review.metric import default_metric
    from review.sample.papers import metric_sample

    return metric_sample(default_metric()).typeset


_SURNAMES = ["Kryściński", "Grenander", "Xiao", "Carenini", "Hardy", "Papalampidi", "Antognini",
             "Faltings", "Zhu", "Mao", "Koyama", "Nguyen", "Okafor", "Lindqvist"]
_GIVEN = ["Wojciech", "Matt", "Wen", "Giuseppe", "Rachel", "Pinelopi", "Diego", "Boi", "Junnan",
          "Yuning", "Aomi", "Linh", "Chidi", "Astrid"]


def _sentence(rng: random.Random, mentions: tuple[str, ...]) -> str:
    n = rng.randint(9, 20)
    words = [rng.choice(_WORDS) for _ in range(n)]
    words[0] = words[0].capitalize()
    if rng.random() < 0.3:
        metric = rng.choice(mentions)
        words.insert(rng.randint(1, n - 1), metric)
    return " ".join(words) + "."


def sample_spec(seed: int = 0, *, sections: int = 5, paragraphs: int = 4, report: bool = True,
                text: SampleText | None = None) -> PaperSpec:
    """A deterministic, realistic paper (about 3-4 pages with the defaults).

    With `report` the text reports the metric with a package name and a parameter string
    (in the body and broken across lines in a footnote); without, it never mentions it.
    `text` holds the metric's words (default: the default metric's).
    """
    text = text or default_text()
    mentions = text.mentions if report else text.other_mentions
    rng = random.Random(seed)
    paras_needed = sections * paragraphs
    special = list(text.report_sentences) if report else []
    secs = []
    heads = ["Introduction", "Related Work", "Method", "Experimental Setup", "Results", "Analysis",
             "Discussion", "Conclusion"]
    fn_used = False
    for s in range(sections):
        paras = []
        for _ in range(paragraphs):
            sents = [_sentence(rng, mentions) for _ in range(rng.randint(4, 7))]
            if special and (rng.random() < 0.25 or len(special) * 2 >= paras_needed - len(secs) * paragraphs):
                sent = special.pop(0)
                if "[fn:{n}]" in sent:
                    sent = sent.replace("{n}", "1")
                    fn_used = True
                sents.insert(rng.randint(0, len(sents)), sent)
            paras.append(" ".join(sents))
        secs.append(Section(heads[s % len(heads)], paras))
    footnotes = list(text.footnotes) if (report and fn_used) else []
    if footnotes:
        # The footnote is cited on page 1: attach its marker to the first paragraph too.
        secs[0].paragraphs[0] = secs[0].paragraphs[0].replace(".", "[fn:2].", 1)
    authors = [f"{rng.choice(_GIVEN)} {rng.choice(_SURNAMES)}" for _ in range(rng.randint(2, 4))]
    group, columns = text.table if report else text.other_table
    table = TableSpec(caption=f"Table 1: {group} scores of the baselines and our systems on the test set.",
                      group=group, subheaders=list(columns),
                      rows=[["Lead-3", "40.34", "17.70", "36.57"], ["PointerGen", "39.53", "17.28", "36.38"],
                            ["Ours", "41.12", "18.45", "37.90"]])
    refs = [f"{rng.choice(_SURNAMES)} et al. {2015 + i}. A study of {rng.choice(_WORDS)} and "
            f"{rng.choice(_WORDS)} for summarization. In Proceedings of ACL." for i in range(6)]
    title = "Effective and Efficient " + rng.choice(["Summarization", "Evaluation", "Classification"]) + \
        " with Fine-grained " + rng.choice(["Reflection", "Affinity", "Configuration"])
    abstract = " ".join(_sentence(rng, mentions) for _ in range(5))
    return PaperSpec(title=title, authors=authors, abstract=abstract, sections=secs, footnotes=footnotes,
                     table=table, table_after=min(3, sections), references=refs)


# --- Text that is no text: the cases normalization must drop -----------------------------


@dataclass(frozen=True)
class HiddenTextCase:
    """What `write_hidden_text_pdf` drew: the lines a reader sees, and what must be dropped.

    Lines are drawn one under another, so a line ending in "_" continues on the next one
    exactly as a URL broken by the typesetter does.
    """

    visible: tuple[str, ...]  # page 1 lines, in the Base-14 Helvetica (mapped to Unicode)
    outside: tuple[str, ...]  # drawn off the page (x < 0) on page 1, in the margin cut by page 2's crop box
    unmapped_glyphs: int  # glyphs of a Type 3 font without a Unicode map: pdfminer gives "(cid:NN)"
    latexit: str  # an invisible (render mode 3) LaTeXiT blob; "" for none


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def write_hidden_text_pdf(path: str | Path, case: HiddenTextCase) -> None:
    """A two-page PDF, written by hand, with the hidden text real PDFs carry (see HiddenTextCase).

    ReportLab always writes a Unicode map and clips nothing, so the objects are written
    directly: page 1 has the visible lines, a Type 3 font whose glyph names mean nothing
    (no ToUnicode), an invisible LaTeXiT blob and lines drawn left of the page (as Elsevier
    pages repeat their neighbours); page 2 has a crop box smaller than its media box, the
    visible lines inside it and the `outside` lines in the cut-off bottom margin.
    """
    def text_block(lines: tuple[str, ...], x: float, y: float, extra: str = "") -> str:
        body = " ".join(f"{_pdf_string(line)} Tj 0 -14 Td" for line in lines)
        return f"BT {extra}/F1 10 Tf {x} {y} Td {body} ET\n"

    glyphs = "".join(f"\\{1 + i % 2:03o}" for i in range(case.unmapped_glyphs))
    page1 = text_block(case.visible, 72, 700) + text_block(case.outside, -400, 700)
    if case.unmapped_glyphs:
        page1 += f"BT /F2 10 Tf 72 420 Td ({glyphs}) Tj ET\n"
    if case.latexit:
        page1 += text_block((case.latexit,), 72, 380, extra="3 Tr ")
    page2 = text_block(case.visible, 72, 700) + text_block(case.outside, 72, 20)
    glyph = b"600 0 0 0 500 700 d1 0 0 500 700 re f"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 7 0 R /Contents 5 0 R >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /CropBox [36 72 576 756] "
        b"/Resources 7 0 R /Contents 6 0 R >>",
        _pdf_stream(page1.encode("latin-1")),
        _pdf_stream(page2.encode("latin-1")),
        b"<< /Font << /F1 8 0 R /F2 9 0 R >> >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 600 700] /FontMatrix [0.001 0 0 0.001 0 0] "
        b"/CharProcs << /g7 10 0 R /g9 11 0 R >> /Encoding << /Type /Encoding /Differences [1 /g7 /g9] >> "
        b"/FirstChar 1 /LastChar 2 /Widths [600 600] /Resources << >> >>",
        _pdf_stream(glyph),
        _pdf_stream(glyph),
    ]
    write_raw_pdf(path, objects)


def write_raw_pdf(path: str | Path, objects: list[bytes]) -> None:
    """Objects 1..n (object 1 the catalog) with their cross-reference table: for test PDFs
    ReportLab will not write (hidden text, bombs)."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    Path(path).write_bytes(bytes(out))


def _pdf_stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
