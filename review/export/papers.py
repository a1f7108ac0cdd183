"""The evidence behind each paper's automated labels, for the report's per-paper table.

A reader who doubts a figure wants to open one paper and see why the rules said what they
said: the matched text and the page it is on. Findings are read for the rule set compute
used (the one the dataset rests on), a few per paper, the most telling kinds first
(a package name says more than the bare word "rouge"). The page is the number of form
feeds before the match in the extracted PDF text (extraction joins pages with one), counted
in SQL so the texts never leave the database; texts from an imported corpus have no pages.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from review.db.models import Finding, Paper, PaperLabel, PaperText, Reproducibility
from review.importer.text_source import PDF

# The most telling evidence first; kinds not listed come last.
KIND_ORDER = ("package", "params", "variant", "protocol", "code_url", "flag")
PER_PAPER = 2
BATCH = 500


@dataclass(frozen=True)
class Evidence:
    """One rule match: what it says (`kind`/`label`), the text around it, and its page."""

    kind: str
    label: str
    snippet: str
    page: int | None


def _rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def evidence(session: Session, per_paper: int = PER_PAPER) -> dict[str, list[Evidence]]:
    """Paper ident -> its most telling findings under the rule set compute used."""
    R = Reproducibility
    rows = session.execute(
        select(Paper.ident, Finding.id, Finding.kind, Finding.label, Finding.start, Finding.snippet, PaperLabel.extra)
        .join(Paper, Paper.id == Finding.paper_id)
        .join(R, and_(R.paper_id == Finding.paper_id, R.rule_set_id == Finding.rule_set_id))
        .outerjoin(PaperLabel, and_(PaperLabel.paper_id == Finding.paper_id,
                                    PaperLabel.rule_set_id == Finding.rule_set_id)))
    picked: dict[str, list[_Hit]] = defaultdict(list)
    for ident, fid, kind, label, start, snippet, extra in rows:
        from_pdf = (extra or {}).get("text_source") in (None, PDF)
        picked[ident].append(_Hit(_rank(kind), start, fid, kind, label, snippet, from_pdf))
    chosen = {ident: _distinct(sorted(hits))[:per_paper] for ident, hits in picked.items()}
    pages = _pages(session, [h.id for hits in chosen.values() for h in hits if h.from_pdf])
    return {ident: [Evidence(h.kind, h.label, " ".join(h.snippet.split()), pages.get(h.id)) for h in hits]
            for ident, hits in chosen.items()}


class _Hit(NamedTuple):
    rank: int
    start: int
    id: int
    kind: str
    label: str
    snippet: str
    from_pdf: bool


def _distinct(hits: list[_Hit]) -> list[_Hit]:
    """The first match of each label: a second match of the same package adds nothing."""
    seen: set[tuple[str, str]] = set()
    out = []
    for h in hits:
        if (h.kind, h.label) not in seen:
            seen.add((h.kind, h.label))
            out.append(h)
    return out


def _pages(session: Session, finding_ids: list[int]) -> dict[int, int]:
    """Finding id -> 1-based page of its start in the paper's PDF text."""
    out: dict[int, int] = {}
    before = func.substr(PaperText.content, 1, Finding.start)
    page = func.length(before) - func.length(func.replace(before, "\f", "")) + 1
    for i in range(0, len(finding_ids), BATCH):
        ids = finding_ids[i:i + BATCH]
        q = (select(Finding.id, page).join(PaperText, and_(PaperText.paper_id == Finding.paper_id,
                                                            PaperText.source == PDF))
             .where(Finding.id.in_(ids), PaperText.content.is_not(None)))
        out.update({fid: int(p) for fid, p in session.execute(q)})
    return out
