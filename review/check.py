"""`review check`: one paper, for its authors and reviewers: what the rules find and miss.

The input is a PDF, a .txt or a .md file. Text files are read as UTF-8 (invalid bytes
replaced) and whitespace-collapsed like extracted PDF text; PDFs go through the
extraction stage (`review.extract.extract_file`), imported only when a PDF is checked.
The result says which labels the rule file gives, with evidence snippets, what is
missing (package, parameters, measures, protocol, code link) and whether R1/R2 would
hold; it is "irreproducible" when the paper computes the metric and neither holds.
A rule that ran past `label.regex_timeout` on the text is named in `timed_out` (and left
out of the labels), so a stalled pattern shows instead of hanging the check.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review.errors import InputFileError
from review.log import get_logger
from review.rules.engine import DEFAULT_TIMEOUT, Engine
from review.rules.labels import label_scan, reproducibility
from review.rules.model import RuleSet

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text"}

log = get_logger("check")


@dataclass
class Evidence:
    label: str
    rule: str
    kind: str
    start: int
    end: int
    match: str
    snippet: str
    attached: str = ""  # the mention an attached match refers to
    reason: str = ""  # why a rejected match does not count

    def as_dict(self) -> dict[str, Any]:
        out = {"label": self.label, "rule": self.rule, "kind": self.kind, "start": self.start, "end": self.end,
               "match": self.match, "snippet": self.snippet}
        if self.attached:
            out["attached"] = self.attached
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class CheckResult:
    """What `review check` reports; `as_dict()` is the stable `--json` shape."""

    metric: str
    prelim: bool
    computes: bool
    packages: list[str]
    params: list[str]
    protocol: list[str]
    variants: list[str]
    code_urls: list[str]
    r1: bool
    r2: bool
    missing: list[str]
    evidence: list[Evidence] = field(default_factory=list)
    rejected: list[Evidence] = field(default_factory=list)  # matches that did not attach, each with its reason
    rules: str = ""
    rules_sha256: str = ""
    source: str | None = None
    chars: int = 0
    timed_out: list[str] = field(default_factory=list)  # rules cut off by label.regex_timeout
    text_source: str | None = None  # which text the labels came from: "pdf" (extracted here) or "text file"

    @property
    def irreproducible(self) -> bool:
        """Computes the metric, yet neither R1 nor R2 holds from the text alone."""
        return self.computes and not (self.r1 or self.r2)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "text_source": self.text_source, "metric": self.metric, "rules": self.rules,
            "rules_sha256": self.rules_sha256, "chars": self.chars, "prelim": self.prelim, "computes": self.computes,
            "packages": self.packages, "params": self.params, "protocol": self.protocol, "variants": self.variants,
            "code_urls": self.code_urls, "r1": self.r1, "r2": self.r2, "irreproducible": self.irreproducible,
            "missing": self.missing, "evidence": [e.as_dict() for e in self.evidence],
            "rejected": [e.as_dict() for e in self.rejected],
            "timed_out": self.timed_out,
        }


def check_text(text: str, ruleset: RuleSet, *, max_per_rule: int = 5, engine: Engine | None = None,
               regex_timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Run the rules over one text and say what is there and what is missing."""
    engine = engine or Engine(ruleset, timeout=regex_timeout)
    scan = engine.scan(text)
    if scan.timed_out:
        log.warning("%s ran past label.regex_timeout (%g s of CPU) and %s left out of the check",
                    ", ".join(f"'{r}'" for r in scan.timed_out), engine.timeout or 0,
                    "was" if len(scan.timed_out) == 1 else "were")
    labeled = label_scan(scan, ruleset)
    lb = labeled.labels
    r1, r2 = reproducibility(lb, ruleset)
    missing = []
    if lb.computes:
        if not lb.packages:
            missing.append("package")
        if not lb.params:
            missing.append("parameters")
        if not lb.variants:
            missing.append("measures")
        if not lb.protocol:
            missing.append("protocol")
        if not lb.code_urls:
            missing.append("code link")
    shown: dict[str, int] = {}
    evidence = []
    for h in labeled.hits:
        shown[h.rule_id] = shown.get(h.rule_id, 0) + 1
        if shown[h.rule_id] <= max_per_rule:
            evidence.append(Evidence(h.label, h.rule_id, h.kind.value, h.start, h.end, h.value,
                                     h.snippet(text, ruleset.snippet_chars), attached=h.attached))
    rejected = []
    for r in labeled.rejected:
        h = r.hit
        shown[h.rule_id] = shown.get(h.rule_id, 0) + 1
        if shown[h.rule_id] <= max_per_rule:
            rejected.append(Evidence(h.label, h.rule_id, h.kind.value, h.start, h.end, h.value,
                                     h.snippet(text, ruleset.snippet_chars), reason=r.reason))
    return CheckResult(metric=ruleset.metric, prelim=lb.prelim, computes=lb.computes,
                       packages=list(lb.packages), params=list(lb.params), protocol=list(lb.protocol),
                       variants=list(lb.variants), code_urls=list(lb.code_urls), r1=r1, r2=r2, missing=missing,
                       evidence=evidence, rejected=rejected, rules=ruleset.name, rules_sha256=ruleset.sha256, chars=len(text),
                       timed_out=list(scan.timed_out))


def read_paper_text(path: str | Path, *, backend: str | None = None, **extract_options: Any) -> str:
    """The text of a PDF, .txt or .md file, or `InputFileError` saying why there is none."""
    path = Path(path)
    if not path.exists():
        raise InputFileError("file not found", item=str(path))
    if not path.is_file():
        raise InputFileError("not a file", item=str(path))
    suffix = path.suffix.lower()
    if _size(path) == 0:
        raise InputFileError("empty file (0 bytes)", item=str(path),
                             hint="the download or copy may have failed; fetch the paper again")
    if suffix == ".pdf" and not _looks_like_pdf(path):
        raise InputFileError(f"not a PDF ({_what_it_is(path)})", item=str(path),
                             hint="a PDF starts with %PDF-; give the paper's PDF, or a .txt/.md of its text")
    if suffix in TEXT_SUFFIXES:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputFileError(f"cannot read: {exc.strerror}", item=str(path)) from None
        text = _normalize(raw.decode("utf-8", errors="replace"))
    elif suffix == ".pdf" or _looks_like_pdf(path):
        text = _pdf_text(path, backend, extract_options)
    else:
        raise InputFileError(f"unsupported file type '{suffix or '(none)'}'", item=str(path),
                             hint="give a .pdf, .txt or .md file")
    if not text.strip():
        raise InputFileError("the file has no text to check", item=str(path),
                             hint="a scanned PDF needs OCR first; review does not OCR")
    return text


def _normalize(text: str) -> str:
    """The extraction stage's normalization, so a .txt labels like the stored PDF text."""
    try:
        from review.extract.normalize import normalize
    except ImportError:  # the extraction stage is not installed: NFKC plus collapsed whitespace
        return " ".join(unicodedata.normalize("NFKC", text).split())
    return normalize(text)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _what_it_is(path: Path) -> str:
    """A few words on what a file that should be a PDF holds instead, so the message says
    "it is an HTML page" rather than the extractor's "Data format error"."""
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "it is an HTML page, perhaps an error page saved under a .pdf name"
    if lowered.startswith(b"<?xml") or lowered.startswith(b"<"):
        return "it is XML or HTML"
    if head.startswith((b"PK\x03\x04",)):
        return "it is a ZIP archive (a .docx?)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data that does not start with %PDF-"
    return "it is plain text"


def _looks_like_pdf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(5) == b"%PDF-"
    except OSError:
        return False


def _pdf_text(path: Path, backend: str | None, options: dict[str, Any]) -> str:
    try:
        from review.extract import extract_file  # the extraction stage, loaded only for PDFs
    except ImportError:
        raise InputFileError("PDF extraction is not available in this installation", item=str(path),
                             hint="check the .txt of the paper instead") from None
    kwargs: dict[str, Any] = dict(options)
    if backend:
        kwargs["backend"] = backend
    extraction = extract_file(path, **kwargs)
    if getattr(extraction, "outcome", "ok") != "ok":
        reason = getattr(extraction, "reason", None) or "unreadable"
        detail = getattr(extraction, "detail", None)
        raise InputFileError(f"cannot extract text from the PDF ({reason}{': ' + str(detail) if detail else ''})",
                             item=str(path), hint="is the file a complete, unencrypted PDF?")
    return extraction.text or ""


def check_file(path: str | Path, ruleset: RuleSet, *, backend: str | None = None,
               regex_timeout: float = DEFAULT_TIMEOUT, **extract_options: Any) -> CheckResult:
    """Check a PDF, .txt or .md file; `extract_options` (timeout, memory_mb) go to the extractor."""
    result = check_text(read_paper_text(path, backend=backend, **extract_options), ruleset,
                        regex_timeout=regex_timeout)
    result.source = str(path)
    result.text_source = "text file" if Path(path).suffix.lower() in TEXT_SUFFIXES else "pdf"
    return result


@dataclass
class FolderItem:
    """One file of a checked folder: its result, or why it could not be checked."""

    path: Path
    result: CheckResult | None = None
    error: str = ""
    hint: str = ""

    def as_dict(self) -> dict[str, Any]:
        if self.result is not None:
            return self.result.as_dict()
        return {"source": str(self.path), "error": self.error, "hint": self.hint or None}


def folder_pdfs(folder: str | Path) -> list[Path]:
    """The PDFs of a folder (not its subfolders), sorted by name; an error when there are none,
    so an empty or mistyped folder never passes as "nothing irreproducible"."""
    folder = Path(folder)
    pdfs = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")
    if not pdfs:
        others = sum(1 for p in folder.iterdir() if p.is_file())
        raise InputFileError(f"no PDF files in the folder ({others} other file(s))", item=str(folder),
                             hint="give the folder of the papers' PDFs, or one file: review check paper.txt")
    return pdfs


def check_folder(folder: str | Path, ruleset: RuleSet, *, backend: str | None = None,
                 regex_timeout: float = DEFAULT_TIMEOUT, **extract_options: Any) -> list[FolderItem]:
    """Check every PDF of a folder with one engine; a file that cannot be read is reported
    and the others are still checked (one broken download must not hide the rest)."""
    from review.progress import progress

    engine = Engine(ruleset, timeout=regex_timeout)
    pdfs = folder_pdfs(folder)
    items = []
    with progress(len(pdfs), "check") as bar:
        for pdf in pdfs:
            bar.describe(pdf.name)
            items.append(_check_one(pdf, ruleset, engine, backend, extract_options))
            bar.advance()
    return items


def _check_one(pdf: Path, ruleset: RuleSet, engine: Engine, backend: str | None,
               extract_options: dict[str, Any]) -> FolderItem:
    try:
        text = read_paper_text(pdf, backend=backend, **extract_options)
    except InputFileError as exc:
        return FolderItem(pdf, error=exc.message, hint=exc.hint or "")
    result = check_text(text, ruleset, engine=engine)
    result.source, result.text_source = str(pdf), "pdf"
    return FolderItem(pdf, result=result)
