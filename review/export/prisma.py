"""PRISMA 2020 flow counts: from records identified to papers included.

Each box is a plain count over the tables, so the diagram can be checked by hand:
records per source (SourceRecord), duplicates removed (records that became no new paper),
removed/retracted papers, papers without a PDF, without text, awaiting labels, excluded by
the preliminary search for the metric, excluded by screening (P0 = no), and included (P0 = yes).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.db.models import Paper, SourceRecord
from review.export.dataset import Record
from review.metric import Metric, default_metric


def prisma_counts(session: Session, records: list[Record]) -> dict[str, Any]:
    by_source = dict(session.execute(select(SourceRecord.source, func.count()).group_by(SourceRecord.source)
                                     .order_by(SourceRecord.source)).all())
    all_papers = session.scalar(select(func.count()).select_from(Paper)) or 0
    n_records = sum(by_source.values())
    counts: dict[str, Any] = {f"records_{src}": n for src, n in by_source.items()}
    papers = len(records)
    with_pdf = [r for r in records if r.document_ok]
    with_text = [r for r in with_pdf if r.text_ok]
    labeled = [r for r in with_text if r.labeled]
    screened = [r for r in labeled if r.values["paper_metric_prelim"] is True]
    included = [r for r in screened if r.values["paper_metric"] is True]
    counts.update({
        "records": n_records,
        "duplicates_removed": max(n_records - all_papers, 0),
        "removed_or_retracted": all_papers - papers,
        "papers": papers,
        "no_pdf": papers - len(with_pdf),
        "no_text": len(with_pdf) - len(with_text),
        "full_text": len(with_text),
        "not_labeled": len(with_text) - len(labeled),
        "excluded_prelim": len(labeled) - len(screened),
        "screened": len(screened),
        "excluded_screening": len(screened) - len(included),
        "included": len(included),
    })
    return counts


def prisma_rows(counts: dict[str, Any], metric: Metric | None = None) -> list[tuple[str, str, int]]:
    """(stage, box, count) rows in flow order, for the CSV and the report."""
    metric = metric or default_metric()
    rows = [("identification", f"records from {k[len('records_'):]}", v) for k, v in counts.items()
            if k.startswith("records_")]
    rows += [
        ("identification", "records identified", counts["records"]),
        ("identification", "duplicates removed", counts["duplicates_removed"]),
        ("identification", "removed or retracted", counts["removed_or_retracted"]),
        ("screening", "papers", counts["papers"]),
        ("screening", "no PDF retrieved", counts["no_pdf"]),
        ("screening", "no text extracted", counts["no_text"]),
        ("screening", "full-text papers", counts["full_text"]),
        ("screening", "awaiting labels", counts["not_labeled"]),
        ("screening", "excluded by the preliminary search", counts["excluded_prelim"]),
        ("screening", "screened (P0)", counts["screened"]),
        ("screening", "excluded by screening", counts["excluded_screening"]),
        ("included", metric.text("included"), counts["included"]),
    ]
    return rows
