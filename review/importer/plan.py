"""`review survey --plan`: what is left to do, how long politeness makes it take, and what an
import would save.

For the current database and settings: per stage, how many items remain; for the
download, how many PDFs per host (after the `download.anthology_pdf_base` rewrite) and
the least time the per-host rate allows (`http.per_host_rate`, `http.host_rates`: a
host allowing r requests per second needs at least n / r seconds for n PDFs; hosts run
in parallel, so the download takes at least as long as its slowest host). Nothing is
fetched and nothing is written.

With `pdfs` (a folder or archive) the plan reads only the file names and counts the
PDFs that would come from there instead, per host; with `texts` (ACL OCL parquet or
JSON Lines) only the ids, and counts the papers whose labels would then not wait for a
download and an extraction (when `label.text_source` lets labels use that corpus).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import exists, func, or_, select
from sqlalchemy.orm import Session

from review.db.models import Codebase, Document, Paper, PaperLabel, PaperText
from review.db.session import Database
from review.download.runner import anthology_mirror_url
from review.http import host_key, host_rate
from review.importer import archive, text_source
from review.importer.matcher import Match, Matcher
from review.importer.names import ids_in_name
from review.settings import Settings


@dataclass
class HostPlan:
    host: str
    pdfs: int
    rate: float  # requests per second allowed (0 = no limit)
    seconds: float | None  # at least this long at that rate (None: not rate-bound)
    saved_by_import: int = 0  # of these, found in --pdfs
    seconds_after_import: float | None = None


@dataclass
class SurveyPlan:
    stages: list[dict[str, Any]] = field(default_factory=list)  # {stage, remaining, note}
    hosts: list[HostPlan] = field(default_factory=list)
    download_seconds: float | None = None  # the slowest host's politeness bound
    download_seconds_after_import: float | None = None
    imports: dict[str, Any] = field(default_factory=dict)  # {"pdfs": {...}, "texts": {...}}
    settings: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        text = "plan: " + ", ".join(f"{s['stage']} {s['remaining']}" for s in self.stages)
        if self.download_seconds is not None:
            text += f"; downloads need at least {duration(self.download_seconds)} at the configured per-host rates"
        if self.download_seconds_after_import is not None:
            text += f" ({duration(self.download_seconds_after_import)} after the import)"
        return text


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_survey(db: Database, settings: Settings, *, pdfs: Path | None = None,
                texts: Path | None = None) -> SurveyPlan:
    """The plan (see the module docstring); reads the database, the settings and file names only."""
    base = settings.download.anthology_pdf_base
    order = text_source.parse(settings.label.text_source)
    plan = SurveyPlan(settings={"per_host_rate": settings.http.per_host_rate, "host_rates": settings.http.host_rates,
                                "per_host_concurrency": settings.http.per_host_concurrency,
                                "download_workers": settings.download.workers, "anthology_pdf_base": base,
                                "text_source": text_source.describe(order)})
    with db.session() as s:
        todo = _download_todo(s, base)
        plan.stages.append({"stage": "download", "remaining": len(todo),
                            "note": f"{_failed_downloads(s)} failed earlier (--retry-failed); "
                                    f"{_no_url(s)} papers have no PDF URL"})
        plan.stages.append({"stage": "extract", "remaining": _extract_todo(s), "note": "downloaded PDFs without text"})
        plan.stages.append({"stage": "label", "remaining": _label_todo(s, settings, order),
                            "note": f"texts chosen by label.text_source ({text_source.describe(order)})"})
        plan.stages.append({"stage": "code github", "remaining": _count(s, Codebase.looked_up_at.is_(None)),
                            "note": "codebases not looked up"})
        plan.stages.append({"stage": "code scan", "remaining": _count(s, Codebase.scanned_at.is_(None)),
                            "note": "codebases not scanned"})
        plan.stages.append({"stage": "human", "remaining": _awaiting_review(s),
                            "note": "papers mentioning the metric without a human decision"})
        saved: set[int] = set()
        if pdfs is not None:
            plan.imports["pdfs"], found = _pdf_savings(s, Path(pdfs), todo)
            saved |= found
        if texts is not None:
            plan.imports["texts"] = _text_savings(s, Path(texts), todo, order)
    plan.hosts = _hosts(settings, todo, saved)
    bounds = [h.seconds for h in plan.hosts if h.seconds is not None]
    plan.download_seconds = max(bounds) if bounds else (0.0 if not todo else None)
    if pdfs is not None or texts is not None:
        after = [h.seconds_after_import for h in plan.hosts if h.seconds_after_import is not None]
        plan.download_seconds_after_import = max(after) if after else 0.0
    return plan


def _download_todo(s: Session, base: str) -> dict[int, str]:
    """paper id -> the URL a download would fetch, for papers with a URL and no PDF yet."""
    has_ok = exists().where(Document.paper_id == Paper.id, Document.outcome == "ok")
    tried = exists().where(Document.paper_id == Paper.id, Document.outcome == "failed")
    rows = s.execute(select(Paper.id, Paper.pdf_url).where(Paper.pdf_url.is_not(None), Paper.pdf_url != "",
                                                           Paper.removed.is_(False), ~has_ok, ~tried))
    return {pid: anthology_mirror_url(url, base) for pid, url in rows}


def _failed_downloads(s: Session) -> int:
    return _count(s, Document.outcome == "failed", Document)


def _no_url(s: Session) -> int:
    return _count(s, or_(Paper.pdf_url.is_(None), Paper.pdf_url == ""), Paper)


def _count(s: Session, where: Any, model: Any = Codebase) -> int:
    return s.scalar(select(func.count()).select_from(model).where(where)) or 0


def _extract_todo(s: Session) -> int:
    text = exists().where(PaperText.paper_id == Document.paper_id, PaperText.source == text_source.PDF,
                          PaperText.document_sha256 == Document.sha256)
    return _count(s, (Document.outcome == "ok") & Document.path.is_not(None) & ~text, Document)


def _label_todo(s: Session, settings: Settings, order: list[str]) -> int:
    from review.db.models import RuleSet
    from review.rules.stage import _count_todo, resolve_rules

    ruleset = resolve_rules(settings)
    rs_id = s.scalar(select(RuleSet.id).where(RuleSet.sha256 == ruleset.sha256))
    return _count_todo(s, rs_id, False, order)


def _awaiting_review(s: Session) -> int:
    from review.db.models import HumanDecision

    decided = exists().where(HumanDecision.paper_id == PaperLabel.paper_id)
    return s.scalar(select(func.count(func.distinct(PaperLabel.paper_id)))
                    .where(PaperLabel.prelim.is_(True), ~decided)) or 0


def _hosts(settings: Settings, todo: dict[int, str], saved: set[int]) -> list[HostPlan]:
    per_host: Counter[str] = Counter(host_key(url) for url in todo.values())
    saved_per_host: Counter[str] = Counter(host_key(todo[pid]) for pid in saved if pid in todo)
    out = []
    for host, n in per_host.most_common():
        rate = host_rate(settings.http, host)
        left = n - saved_per_host[host]
        out.append(HostPlan(host, n, rate, n / rate if rate > 0 else None, saved_per_host[host],
                            left / rate if rate > 0 else None))
    return out


def _pdf_savings(s: Session, path: Path, todo: dict[int, str]) -> tuple[dict[str, Any], set[int]]:
    """Which remaining downloads the files of `path` would replace, judged by their names."""
    matcher = Matcher(s)
    files = by_name = unnamed = 0
    papers: set[int] = set()
    for entry in archive.entries(path.expanduser().resolve()):
        if entry.refused:
            continue
        files += 1
        found = matcher.by_name(ids_in_name(entry.name))
        if isinstance(found, Match):
            by_name += 1
            papers.add(found.paper_id)
        else:
            unnamed += 1
    saved = papers & set(todo)
    return ({"path": str(path), "files": files, "matched_by_name": by_name,
             "not_matched_by_name": unnamed, "downloads_saved": len(saved),
             "note": "files matched only by their hashes are found when imported, not counted here"}, saved)


def _text_savings(s: Session, path: Path, todo: dict[int, str], order: list[str]) -> dict[str, Any]:
    """Which papers' labels the corpus would serve: at once (no text now), and for good
    (the corpus ranks above the PDF, so their downloads are not needed for labels).

    `review download` still fetches those PDFs; the host times above count them."""
    from review.importer.texts import OCL, OCL_SOURCE, _paper_ids, format_of

    fmt = format_of(path)
    source = OCL_SOURCE if fmt == OCL else "jsonl"
    rank = {name: i for i, name in enumerate(order)}
    mine = rank.get(source, rank.get(text_source.ANY))
    pdf = rank.get(text_source.PDF, rank.get(text_source.ANY))
    usable = mine is not None
    covered: set[int] = set()
    for chunk in _chunks(_corpus_ids(path, fmt), 1000):
        covered.update(_paper_ids(s, set(chunk)).values())
    with_text = set(s.scalars(select(PaperText.paper_id).where(PaperText.outcome == "ok")))
    above_pdf = usable and (pdf is None or mine < pdf or (mine == pdf and source < text_source.PDF))
    return {"path": str(path), "source": source, "papers_in_corpus": len(covered),
            "labels_without_waiting": len(covered - with_text) if usable else 0,
            "downloads_not_needed_for_labels": len(covered & set(todo)) if above_pdf else 0,
            "usable_by_labels": usable,
            "note": (f"label.text_source ({text_source.describe(order)}) does not use {source}" if not usable else
                     "labels use the PDF's text once it is there; the corpus fills in until then" if not above_pdf
                     else f"labels use {source} over the PDF: those downloads matter only for the PDFs themselves")}


def _corpus_ids(path: Path, fmt: str) -> Iterable[str]:
    if fmt == "ocl":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        for rb in pf.iter_batches(batch_size=10_000, columns=["acl_id"]):
            yield from (str(x) for x in rb.column(0).to_pylist() if x)
        return
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:  # type: ignore[operator]
        for line in fh:
            try:
                yield str(json.loads(line)["ident"])
            except (ValueError, KeyError, TypeError):
                continue


def _chunks(items: Iterable[str], size: int) -> Iterable[list[str]]:
    chunk: list[str] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
