"""The dataset: the released Rogue Scores columns (§6) in their order, then ours.

Four released columns name the metric (`paper_<column>`, `paper_<column>_prelim`,
`code_<column>`, `code_<column>_prelim`); rows hold them as `paper_metric` ... and the
writers name them with the metric folder's `column` word, so the ROUGE review writes
exactly the released names and another metric its own.

Rows are read with one joined query and sorted by `paper_ident`, and every value has one
fixed text form, so the same database always gives the same bytes. Lists stay lists in
JSONL and Parquet and are JSON text in CSV; booleans are `true`/`false`, unknown is empty
(CSV) or null. `software_error` is a nullable boolean: null means unknown (no package, or
only packages whose correctness was never tested). `label_sources` says per question
whether the value is a human answer, automated, mixed (several codebases), or disputed:
reviewers left it undecided (a tie, or "can't tell"), so the automated answer stands
until an adjudicator settles it; `label_source` is disputed when any question is.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from review import provenance
from review.compute import json_text, parse_json
from review.db.models import Document, Paper, PaperLabel, PaperText, Reproducibility
from review.importer.text_source import PDF, label_of
from review.metric import Metric, default_metric
from review.redact import RedactingWriter, redact_value

RELEASED_COLUMNS = [
    "paper_ident", "paper_url", "paper_author", "paper_title", "paper_venue", "paper_year", "paper_month",
    "paper_booktitle", "paper_address", "paper_publisher", "paper_pages", "paper_metric", "paper_metric_prelim",
    "paper_params", "paper_protocol", "paper_packages", "paper_variants", "code_url", "code_metric",
    "code_metric_prelim", "code_packages", "packages", "software_error", "reproducible", "error_download",
    "error_extract",
]
EXTRA_COLUMNS = [
    "paper_source", "paper_doi", "paper_pdf_url", "paper_param_strings", "has_code", "code_urls", "r1", "r2", "r3",
    "figure3_category", "label_source", "label_sources", "rule_set", "rule_set_sha256", "text_source", "extractor",
    "code_scan",
]
COLUMNS = RELEASED_COLUMNS + EXTRA_COLUMNS

LIST_COLUMNS = {"paper_author", "paper_protocol", "paper_packages", "paper_variants", "code_packages", "packages",
                "paper_param_strings", "code_urls"}
BOOL_COLUMNS = {"paper_metric", "paper_metric_prelim", "paper_params", "code_metric", "code_metric_prelim",
                "software_error", "reproducible", "has_code", "r1", "r2", "r3"}
INT_COLUMNS = {"paper_year"}
JSON_COLUMNS = {"label_sources"}

FORMATS = ("csv", "jsonl", "parquet")


@dataclass
class Record:
    """One dataset row plus what the statistics need but the file does not show."""

    values: dict[str, Any]
    document_ok: bool
    text_ok: bool
    labeled: bool
    computed: bool
    provenance: provenance.RowProvenance | None = None  # what made the row (`review.provenance`)


def _tri(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get(value or "")


def read_records(session: Session) -> list[Record]:
    """Every paper that was not removed or retracted, joined with its derived labels; the
    rule set, extractor and code scan of each row come from `review.provenance`."""
    R = Reproducibility
    J = json_text
    q = (
        select(Paper.ident, Paper.url, J(Paper.authors), Paper.title, Paper.venue, Paper.year, Paper.month,
               Paper.booktitle, Paper.address, Paper.publisher, Paper.pages, Paper.source, Paper.doi, Paper.pdf_url,
               R.paper_metric, R.paper_metric_prelim, R.paper_params, J(R.protocol), J(R.paper_packages), J(R.variants),
               R.code_url, R.code_metric, R.code_metric_prelim, J(R.code_packages), J(R.packages), R.software_error,
               R.reproducible, J(R.params), R.has_code, J(R.code_urls), R.r1, R.r2, R.r3, R.category, R.label_source,
               J(R.sources), Paper.id, R.id,
               Document.outcome, Document.reason, PaperText.outcome, PaperText.reason, PaperLabel.extra)
        .select_from(Paper)
        .outerjoin(R, R.paper_id == Paper.id)
        .outerjoin(Document, Document.paper_id == Paper.id)
        .outerjoin(PaperText, and_(PaperText.paper_id == Paper.id, PaperText.source == PDF))
        .outerjoin(PaperLabel, and_(PaperLabel.paper_id == Paper.id, PaperLabel.rule_set_id == R.rule_set_id))
        .where(and_(Paper.removed.is_(False), Paper.retracted.is_(False)))
        .order_by(Paper.ident)
    )
    out: list[Record] = []
    P = parse_json
    made = provenance.per_paper(session)
    for row in session.execute(q):
        (ident, url, authors, title, venue, year, month, booktitle, address, publisher, pages, source, doi, pdf_url,
         computes, prelim, params, protocol, ppk, variants, code_url, code_metric, code_prelim, code_pk, packages,
         sw_error, reproducible, param_strings, has_code, code_urls, r1, r2, r3, category, label_source, sources,
         paper_id, rid, doc_outcome, doc_reason, text_outcome, text_reason, label_extra) = row
        used = label_of((label_extra or {}).get("text_source"), (label_extra or {}).get("text_version"))
        imported = used is not None and used != PDF  # full text from a corpus: retrieved, without a PDF
        authors, protocol, ppk, variants, code_pk, packages, param_strings, code_urls, sources = (
            P(authors), P(protocol), P(ppk), P(variants), P(code_pk), P(packages), P(param_strings), P(code_urls),
            P(sources))
        prov = made.get(paper_id)
        values = {
            "paper_ident": ident, "paper_url": url, "paper_author": list(authors or []), "paper_title": title,
            "paper_venue": venue, "paper_year": year, "paper_month": month, "paper_booktitle": booktitle,
            "paper_address": address, "paper_publisher": publisher, "paper_pages": pages,
            "paper_metric": computes, "paper_metric_prelim": prelim, "paper_params": params,
            "paper_protocol": list(protocol or []), "paper_packages": list(ppk or []),
            "paper_variants": list(variants or []), "code_url": code_url, "code_metric": code_metric,
            "code_metric_prelim": code_prelim, "code_packages": list(code_pk or []), "packages": list(packages or []),
            "software_error": _tri(sw_error), "reproducible": reproducible,
            "error_download": (doc_reason or "failed") if doc_outcome == "failed" else None,
            "error_extract": (text_reason or "failed") if text_outcome == "failed" else None,
            "paper_source": source, "paper_doi": doi, "paper_pdf_url": pdf_url,
            "paper_param_strings": list(param_strings or []), "has_code": has_code, "code_urls": list(code_urls or []),
            "r1": r1, "r2": r2, "r3": r3, "figure3_category": category, "label_source": label_source,
            "label_sources": dict(sources) if sources else None,
            "rule_set": prov.rule_set if prov else None, "rule_set_sha256": prov.rule_set_sha256 if prov else None,
            "text_source": used, "extractor": prov.extractor if prov else None,
            "code_scan": prov.code_scan if prov else None,
        }
        out.append(Record(values, document_ok=doc_outcome == "ok" or imported, text_ok=text_outcome == "ok" or imported,
                          labeled=prelim is not None, computed=rid is not None, provenance=prov))
    return out


def provenance_of(records: Iterable[Record]) -> provenance.Provenance:
    """What made these rows (computed ones), for a file's header or a statistic's note."""
    return provenance.Provenance.of(r.provenance for r in records if r.provenance is not None)


def human_answers(records: Iterable[Record]) -> dict[str, int]:
    """Per review question, the rows whose answer to it is a person's (`label_sources`):
    counted per question, because a paper reviewed on its form may still rest on automated
    answers to questions that form never asks (C0 of a paper without a linked codebase)."""
    from review.answers import QUESTIONS

    out = dict.fromkeys(QUESTIONS, 0)
    for rec in records:
        for q, source in (rec.values["label_sources"] or {}).items():
            if source == "human" and q in out:
                out[q] += 1
    return out


def disputed(records: Iterable[Record]) -> list[tuple[str, list[str]]]:
    """(paper ident, its disputed questions) for every paper with any, in ident order."""
    out = []
    for rec in records:
        questions = sorted(q for q, s in (rec.values["label_sources"] or {}).items() if s == "disputed")
        if questions:
            out.append((rec.values["paper_ident"], questions))
    return out


def _csv_value(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column in BOOL_COLUMNS:
        return "true" if value else "false"
    if column in LIST_COLUMNS or column in JSON_COLUMNS:
        if not value:
            return "[]" if isinstance(value, list) else "{}"
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def headers(metric: Metric) -> list[str]:
    """The column names written: ours, with the metric's word where they name the metric."""
    return [metric.column_name(c) for c in COLUMNS]


def write_csv(records: Iterable[Record], path: Path, metric: Metric) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(RedactingWriter(fh), lineterminator="\n")  # type: ignore[arg-type]
        writer.writerow(headers(metric))
        for rec in records:
            writer.writerow([_csv_value(c, rec.values[c]) for c in COLUMNS])


def write_jsonl(records: Iterable[Record], path: Path, metric: Metric) -> None:
    names = dict(zip(COLUMNS, headers(metric)))
    with path.open("w", encoding="utf-8", newline="\n") as raw:
        fh = RedactingWriter(raw)
        for rec in records:
            fh.write(json.dumps({names[c]: rec.values[c] for c in COLUMNS}, ensure_ascii=False, sort_keys=False,
                                separators=(",", ":")) + "\n")


def write_parquet(records: list[Record], path: Path, metric: Metric) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = dict(zip(COLUMNS, headers(metric)))
    fields = []
    for c in COLUMNS:
        if c in LIST_COLUMNS:
            typ = pa.list_(pa.string())
        elif c in BOOL_COLUMNS:
            typ = pa.bool_()
        elif c in INT_COLUMNS:
            typ = pa.int64()
        else:
            typ = pa.string()
        fields.append(pa.field(names[c], typ))
    schema = pa.schema(fields)
    columns = {}
    for c in COLUMNS:
        if c in JSON_COLUMNS:
            values = [None if r.values[c] is None else json.dumps(r.values[c], sort_keys=True) for r in records]
        else:
            values = [r.values[c] for r in records]
        columns[names[c]] = values if c in BOOL_COLUMNS or c in INT_COLUMNS else redact_value(values)
    table = pa.table(columns, schema=schema)
    pq.write_table(table, path, compression="zstd")


def write_dataset(records: list[Record], out_dir: Path, fmt: str, metric: Metric | None = None) -> Path:
    """Write `dataset.<fmt>` and return its path."""
    path = out_dir / f"dataset.{fmt}"
    {"csv": write_csv, "jsonl": write_jsonl, "parquet": write_parquet}[fmt](records, path, metric or default_metric())
    return path


def csv_text(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    """A small CSV table as text (statistics, package table, PRISMA counts)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else ("true" if v is True else "false" if v is False else v) for v in row])
    return buf.getvalue()
