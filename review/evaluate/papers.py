"""`review evaluate papers`: a rule file's labels measured against a papers gold file.

Each gold item is read the way `review check` reads a paper (`review.check.read_paper_text`
for text and PDF entries, the stored extracted text for `paper` entries) and labelled by
`review.check.check_text`, the same rule path `review check` and `review label` run, so the
scores describe exactly what a reviewer would be shown. Texts are read once and can be
labelled by several rule files (`texts` argument), which is what the benchmark does.

Nothing is written anywhere: `paper` entries read the database in a transaction that is
rolled back, and an SQLite file that does not exist is never created.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from review.check import check_text, read_paper_text
from review.errors import DatabaseError, InputFileError
from review.evaluate.gold import GoldFile, GoldFileError, GoldPaper
from review.evaluate.score import (KIND_QUESTION, NORMALIZE, Pair, RuleScore, Scores, rule_precision,
                                   score_pairs)
from review.progress import progress
from review.rules.engine import Engine
from review.rules.model import RuleSet

EVIDENCE_PER_ANSWER = 5
"""Matches shown behind one disagreeing answer (the rest are counted in per-rule precision)."""


@dataclass
class ItemResult:
    """One gold item labelled: the proposal and every match behind it."""

    gold: GoldPaper
    proposed: dict[str, Any]
    matches: list[dict[str, Any]]
    rejected: list[dict[str, Any]] = field(default_factory=list)  # matches that did not attach, with the reason


@dataclass
class PapersEvaluation:
    """What `review evaluate papers` reports for one rule file."""

    gold: str
    rules: str
    rules_sha256: str
    options: tuple[str, ...]
    scores: Scores
    rule_scores: list[RuleScore]
    items: list[ItemResult] = field(default_factory=list)

    def metrics(self) -> dict[str, float | None]:
        return self.scores.metrics()

    def as_dict(self) -> dict[str, Any]:
        return {"gold": self.gold, "rules": self.rules, "rules_sha256": self.rules_sha256,
                "options": list(self.options), "scores": self.scores.as_dict(),
                "disagreements": [d.as_dict() for d in self.scores.disagreements],
                "rules_precision": [r.as_dict() for r in self.rule_scores]}


def read_texts(gold: GoldFile, *, backend: str | None = None, extract_options: Mapping[str, Any] | None = None,
               open_database: Callable[[], Any] | None = None) -> dict[str, str]:
    """The text of every gold item, by id; an unreadable item stops with its line.

    `open_database` returns a `review.db.session.Database` and is called only when the gold
    file has `paper` entries.
    """
    texts: dict[str, str] = {}
    files = [p for p in gold.papers if p.source != "paper"]
    with progress(len(files), "read gold texts") as bar:
        for p in files:
            try:
                texts[p.id] = read_paper_text(p.location, backend=backend, **dict(extract_options or {}))
            except InputFileError as exc:
                raise GoldFileError(f"{p.source} {p.location}: {exc.message}", item=f"{gold.path}:{p.line}",
                                    hint=exc.hint) from None
            bar.advance()
    stored = [p for p in gold.papers if p.source == "paper"]
    if stored:
        if open_database is None:
            raise GoldFileError("`paper` entries need the survey database", item=f"{gold.path}:{stored[0].line}")
        texts.update(stored_texts(open_database(), stored, gold.path))
    return texts


def stored_texts(db: Any, papers: list[GoldPaper], gold_path: Path) -> dict[str, str]:
    """Extracted texts of `paper` entries, read in a transaction that is rolled back."""
    from sqlalchemy import select

    from review.db.models import Paper, PaperText

    idents = sorted({p.location for p in papers})
    with db.sessions() as s:
        try:
            rows = dict(s.execute(select(Paper.ident, PaperText.content).join(PaperText, PaperText.paper_id == Paper.id)
                                  .where(Paper.ident.in_(idents), PaperText.outcome == "ok")).all())
            known = set(s.scalars(select(Paper.ident).where(Paper.ident.in_(idents))))
        finally:
            s.rollback()
    out = {}
    for p in papers:
        where = f"{gold_path}:{p.line}"
        if p.location not in known:
            raise GoldFileError(f"paper {p.location!r} is not in the database", item=where,
                                hint="harvest it, or give the gold entry a `text` or `pdf` file")
        if not (rows.get(p.location) or "").strip():
            raise GoldFileError(f"paper {p.location!r} has no extracted text", item=where,
                                hint="run `review download` and `review extract` first")
        out[p.id] = rows[p.location]
    return out


def label_items(gold: GoldFile, texts: Mapping[str, str], ruleset: RuleSet) -> list[ItemResult]:
    """Label every gold item with one rule file, through `review.check.check_text`."""
    engine = Engine(ruleset)
    out = []
    for p in gold.papers:
        result = check_text(texts[p.id], ruleset, max_per_rule=sys.maxsize, engine=engine)
        proposed = {"P0": result.computes, "P1": list(result.params), "P2": list(result.variants),
                    "P3": list(result.protocol), "P4": list(result.packages), "code_urls": list(result.code_urls)}
        matches = [{"rule": e.rule, "kind": e.kind, "label": e.label, "match": e.match, "start": e.start,
                    "snippet": e.snippet, **({"attached": e.attached} if e.attached else {})} for e in result.evidence]
        rejected = [{"rule": e.rule, "kind": e.kind, "label": e.label, "match": e.match, "start": e.start,
                     "snippet": e.snippet, "reason": e.reason} for e in result.rejected]
        out.append(ItemResult(p, proposed, matches, rejected))
    return out


def evaluate(gold: GoldFile, texts: Mapping[str, str], ruleset: RuleSet) -> PapersEvaluation:
    """Score one rule file on a gold file whose texts are already read."""
    items = label_items(gold, texts, ruleset)
    scores = score_pairs(Pair(i.gold.id, i.gold.answers, i.proposed) for i in items)
    by_id = {i.gold.id: i for i in items}
    for d in scores.disagreements:
        item = by_id[d.item]
        d.evidence = _evidence(d.question, d.extra, d.proposed, item.matches)
        d.evidence += _evidence(d.question, d.missing, d.proposed, item.rejected)  # why an expected label was turned down
        d.expected_evidence = item.gold.evidence.get(d.question)
    rule_scores = rule_precision((i.gold.answers, i.matches) for i in items)
    return PapersEvaluation(str(gold.path), ruleset.name, ruleset.sha256, tuple(ruleset.options), scores,
                            rule_scores, items)


def _evidence(question: str, extra: list[str], proposed: Any, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The matches behind a disagreeing answer: behind each wrong label, or behind the P0 flag."""
    kinds = {k for k, q in KIND_QUESTION.items() if q == question}
    relevant = [m for m in matches if m["kind"] in kinds]
    if question == "P0":
        shown, seen = [], set()
        for m in relevant:  # one match per flag label: what the computed flag rested on
            if m["label"] not in seen:
                seen.add(m["label"])
                shown.append(m)
        return shown
    norm = NORMALIZE.get(question)
    out = []
    for label in extra:
        hits = [m for m in relevant if (norm(m["match"]) if norm else m["label"]) == label]
        out.extend(hits[:EVIDENCE_PER_ANSWER])
    return out


def check_database_exists(db_url: str) -> None:
    """Refuse to open an SQLite database file that does not exist (opening would create it)."""
    from sqlalchemy import make_url

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:") \
            and not Path(url.database).is_file():
        raise DatabaseError(f"no database at {url.database}", item="--db",
                            hint="`paper` entries name papers already harvested and extracted")
