"""The manifest: what an export was made from, so every file traces back to its data.

It lists the tool version, what made the exported rows (`provenance`: rule set, extractor
and code scan with row counts, "mixed" in the signature when rows disagree; from
`review.provenance`), every stored rule file (name, version, sha256, rows it made) and the
package catalog hash, row counts of the data tables, the runs whose rows are in the data (found through
the `run_id` the rows carry, so they are exactly the runs that made this data), the
settings that shape the numbers, and the sha256 of every exported file.

The time written is, in order: the `--time` argument, the `export.time` setting, or the
end of the newest run among those that made the data. It is never "now", so exporting the
same database twice gives the same bytes.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.provenance import Provenance
from review.db.models import (Codebase, CodebaseLink, CodeFinding, Document, Finding, HumanDecision, Paper,
                              PaperLabel, PaperText, Reproducibility, Run, RuleSet, SourceRecord)

DATA_TABLES = [Paper, SourceRecord, Document, PaperText, RuleSet, Finding, PaperLabel, Codebase, CodebaseLink,
               CodeFinding, HumanDecision, Reproducibility]
# Tables whose rows remember the run that wrote them.
RUN_CARRIERS = [SourceRecord, Document, PaperText, Finding, PaperLabel, CodebaseLink, CodeFinding, HumanDecision,
                Reproducibility]


def table_counts(session: Session) -> dict[str, int]:
    return {m.__tablename__: session.scalar(select(func.count()).select_from(m)) or 0 for m in DATA_TABLES}


def data_runs(session: Session) -> list[dict[str, Any]]:
    """The runs referenced by data rows, oldest first."""
    ids: set[int] = set()
    for model in RUN_CARRIERS:
        ids.update(i for (i,) in session.execute(select(model.run_id).distinct()) if i is not None)
    if not ids:
        return []
    runs = session.scalars(select(Run).where(Run.id.in_(sorted(ids))).order_by(Run.id))
    return [{"id": r.id, "command": r.command, "status": r.status, "tool_version": r.tool_version,
             "rules_sha256": r.rules_sha256,
             "finished_at": _iso(r.finished_at)} for r in runs]


def _iso(when: datetime | None) -> str | None:
    """ISO 8601 in UTC (SQLite hands back naive datetimes that were stored as UTC)."""
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat()


def rule_sets(session: Session, made: Provenance | None = None) -> list[dict[str, Any]]:
    """Every stored rule set, with how many exported rows it made (`rows`: 0 for one only
    stored, e.g. by `review label --rules X --diff`)."""
    used = made.values.get("rule_set_sha256", {}) if made else {}
    return [{"name": r.name, "metric": r.metric, "version": r.version, "sha256": r.sha256, "path": r.path,
             "rows": used.get(r.sha256, 0)}
            for r in session.scalars(select(RuleSet).order_by(RuleSet.id))]


def manifest_time(explicit: str | None, runs: list[dict[str, Any]]) -> tuple[str | None, str]:
    if explicit:
        return explicit, "given"
    finished = [r["finished_at"] for r in runs if r["finished_at"]]
    if finished:
        return max(finished), "end of the newest run that made the data"
    return None, "no runs made this data"
