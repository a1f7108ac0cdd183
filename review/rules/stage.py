"""`review label`: run a rule file over every stored text and keep the evidence.

For each paper whose text was extracted (`texts.outcome = 'ok'`) this writes its
`PaperLabel` row and the `Finding` rows behind it, keyed by the rule set (one row per
rule-file version, identified by its sha256 and stored with its content). Labels from two
versions of a rule file live side by side, which is what `--diff` compares. A rerun with
the same rule set labels only papers that are new or whose text changed since (or all,
with `relabel`), replacing that rule set's automated rows and nothing else: human
decisions live in another table that this module never touches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from sqlalchemy import and_, delete, func, insert, or_, select
from sqlalchemy.orm import Session

from review.db.base import utcnow
from review.db.insert import insert_or_get
from review.db.models import Finding, Paper, PaperLabel, PaperText
from review.db.models import RuleSet as RuleSetRow
from review.db.session import Database
from review.names import paper_name_of
from review.errors import InputFileError, ReviewError, RuleFileError
from review.importer import text_source
from review.log import get_logger
from review.progress import progress
from review.rules.engine import Engine
from review.rules.labels import Labeled, label_scan, reproducibility
from review.rules.model import RuleSet, load_ruleset
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("label")

LABEL_FIELDS = ("prelim", "computes", "packages", "params", "protocol", "variants", "code_urls")


@dataclass
class LabelResult:
    """What one `review label` run did."""

    rule_set_id: int | None
    rule_set: str
    sha256: str
    candidates: int = 0  # texts that needed labeling
    labeled: int = 0
    failed: int = 0
    prelim: int = 0
    computes: int = 0
    findings: int = 0
    dry_run: bool = False
    timed_out: dict[str, int] = field(default_factory=dict)  # rule id -> papers it ran past label.regex_timeout on
    timed_out_papers: int = 0
    text_sources: dict[str, int] = field(default_factory=dict)  # which text each labeled paper's labels came from

    def summary(self) -> str:
        verb = "would label" if self.dry_run else "labeled"
        n = self.candidates if self.dry_run else self.labeled
        text = (f"{verb} {n} papers with {self.rule_set} ({self.sha256[:12]})")
        if not self.dry_run:
            text += (f": {self.prelim} mention the metric, {self.computes} compute it, "
                     f"{self.findings} findings, {self.failed} failed")
            if self.timed_out_papers:
                rules = ", ".join(f"{rid}: {n}" for rid, n in sorted(self.timed_out.items()))
                text += f"; {self.timed_out_papers} with a rule cut off by label.regex_timeout ({rules})"
            if set(self.text_sources) - {text_source.PDF}:
                text += "; texts: " + ", ".join(f"{k} {n}" for k, n in sorted(self.text_sources.items()))
        return text

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("rule_set_id", "rule_set", "sha256", "candidates", "labeled",
                                              "failed", "prelim", "computes", "findings", "dry_run",
                                              "timed_out", "timed_out_papers", "text_sources")}


def resolve_rules(settings: Settings, rules_path: str | Path | None = None,
                  options: Iterable[str] = (), *, default: str = "rules") -> RuleSet:
    """The rule set a command runs: `--rules` (a path or a rule file's name, see
    `review.metric.find_rule_file`), else `label.rules`, else the metric's `default` file
    (`rules`, the faithful file; `review check` asks for `check_rules`)."""
    from review.metric import find_rule_file, metric_of

    try:
        if rules_path:
            path = find_rule_file(rules_path, settings)
        elif settings.label.rules:
            path = find_rule_file(settings.label.rules, settings, base=settings.config_dir)
        else:
            metric = metric_of(settings)
            path = metric.check_rules if default == "check_rules" else metric.files[default]
    except InputFileError as exc:
        raise RuleFileError("rule file not found", item=str(rules_path or settings.label.rules),
                            hint=exc.hint) from None
    return load_ruleset(path, tuple(options) or tuple(settings.label.options))


def ensure_rule_set(session: Session, ruleset: RuleSet) -> RuleSetRow:
    """The database row of this exact rule-set version, created on first use.

    Two label runs started at once both get the one row (`insert_or_get`), never a
    unique-key error on `rule_sets.sha256`.
    """
    return insert_or_get(session, RuleSetRow, {"sha256": ruleset.sha256},
                         {"name": ruleset.name, "metric": ruleset.metric, "version": ruleset.version or None,
                          "path": ruleset.path, "content": ruleset.content})


def _lock_rule_set(s: Session, rs_id: int) -> None:
    """On PostgreSQL, hold the rule set's row while its labels are replaced: a second label
    run storing the same papers waits for this commit and then sees its rows (without the
    lock both would insert the same paper's label and one would fail on the unique key).
    SQLite needs nothing: the first statement of a store is a write, which takes the lock."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(RuleSetRow.id).where(RuleSetRow.id == rs_id).with_for_update())


def run_label(db: Database, settings: Settings, *, rules_path: str | Path | None = None,
              options: Iterable[str] = (), ruleset: RuleSet | None = None, run: RunRecorder | None = None,
              limit: int | None = None, relabel: bool = False, dry_run: bool = False,
              batch: int | None = None) -> LabelResult:
    """Label every stored text that has no current labels under this rule set.

    The rule file is loaded and checked before any text is read, so a bad file stops the
    run with its name and reason and changes nothing.
    """
    ruleset = ruleset or resolve_rules(settings, rules_path, options)
    order = text_source.parse(settings.label.text_source)
    engine = Engine(ruleset, timeout=settings.label.regex_timeout)
    batch = batch or settings.label.batch
    max_hits = settings.label.max_findings_per_rule
    if dry_run:
        with db.session() as s:
            existing = s.scalar(select(RuleSetRow.id).where(RuleSetRow.sha256 == ruleset.sha256))
            total = _count_todo(s, existing, relabel, order)
        result = LabelResult(existing, ruleset.name, ruleset.sha256, candidates=min(total, limit or total),
                             dry_run=True)
        return result
    with db.session() as s:
        rs_id = ensure_rule_set(s, ruleset).id
        total = _count_todo(s, rs_id, relabel, order)
    if limit is not None:
        total = min(total, limit)
    result = LabelResult(rs_id, ruleset.name, ruleset.sha256, candidates=total)
    if run is not None:
        from review.metric import metric_holding

        run.rules_sha256 = ruleset.sha256
        held = metric_holding(ruleset.path)
        run.signature.update({**(held.signature() if held else {"metric": ruleset.metric}), **ruleset.signature()})
    after = 0
    with progress(total, f"label {ruleset.name}") as bar:
        while result.labeled + result.failed < total:
            want = min(batch, total - result.labeled - result.failed)
            with db.session() as s:
                rows = s.execute(_todo_query(rs_id, relabel, order).where(PaperText.paper_id > after)
                                 .order_by(PaperText.paper_id).limit(want)).all()
            if not rows:
                break
            after = rows[-1][0]
            labeled: list[tuple[int, Labeled, str, list[str]]] = []
            origins = {pid: {"text_id": tid, "text_source": src,
                             "text_version": ver if src != text_source.PDF else None}
                       for pid, _, tid, src, ver in rows}
            for paper_id, content, *_ in rows:
                try:
                    text = content or ""
                    scan = engine.scan(text)
                    labeled.append((paper_id, label_scan(scan, ruleset), text, scan.timed_out))
                    if scan.timed_out:
                        _note_timeout(result, paper_name_of(db, paper_id), scan.timed_out, settings.label.regex_timeout, run)
                except Exception as exc:  # one bad text must not stop the run
                    result.failed += 1
                    log.error("label: %s failed: %s: %s", paper_name_of(db, paper_id), type(exc).__name__, exc)
                    if run is not None:
                        run.count("failed")
            with db.session() as s:
                result.findings += _store(s, rs_id, ruleset, labeled, run.id if run else None, max_hits, origins)
            for pid, lab, _, _ in labeled:
                name = text_source.label_of(origins[pid]["text_source"], origins[pid]["text_version"]) or ""
                result.text_sources[name] = result.text_sources.get(name, 0) + 1
                result.labeled += 1
                result.prelim += lab.labels.prelim
                result.computes += lab.labels.computes
            bar.advance(len(rows))
            if run is not None:
                run.counts.update({"labeled": result.labeled, "prelim": result.prelim,
                                   "computes": result.computes, "findings": result.findings})
                run.checkpoint()
    if run is not None:
        run.summary = result.summary()
    return result


def _note_timeout(result: LabelResult, paper: str, rules: list[str], seconds: float,
                  run: RunRecorder | None) -> None:
    """A rule that ran past its time on a paper: counted, logged, and stored with the paper's labels."""
    result.timed_out_papers += 1
    for rid in rules:
        result.timed_out[rid] = result.timed_out.get(rid, 0) + 1
    log.warning("label: %s: %s ran past label.regex_timeout (%g s of CPU) and %s left out for this paper",
                paper, ", ".join(f"'{r}'" for r in rules), seconds, "was" if len(rules) == 1 else "were")
    if run is not None:
        run.count("timed_out")


def _todo_query(rs_id: int | None, relabel: bool, order: list[str]):  # type: ignore[no-untyped-def]
    """Texts to label: each paper's chosen text (`label.text_source`) without labels of this
    rule set, with an older label, or with a label made from another of its texts."""
    q = select(PaperText.paper_id, PaperText.content, PaperText.id, PaperText.source,
               PaperText.extractor_version).where(text_source.chosen(order))
    if relabel or rs_id is None:
        return q
    return q.outerjoin(PaperLabel, and_(PaperLabel.paper_id == PaperText.paper_id,
                                        PaperLabel.rule_set_id == rs_id)).where(
        or_(PaperLabel.id.is_(None), PaperLabel.labeled_at < PaperText.extracted_at,
            PaperLabel.extra["text_id"].as_integer() != PaperText.id))


def _count_todo(s: Session, rs_id: int | None, relabel: bool, order: list[str]) -> int:
    q = _todo_query(rs_id, relabel, order).with_only_columns(func.count())
    return s.scalar(q) or 0


def _store(s: Session, rs_id: int, ruleset: RuleSet, labeled: Sequence[tuple[int, Labeled, str, list[str]]],
           run_id: int | None, max_hits: int, origins: dict[int, dict[str, Any]] | None = None) -> int:
    """Replace this rule set's rows for these papers (and only those rows).

    A rule that timed out on a paper is listed in its label's `extra["timed_out"]`.
    """
    ids = [pid for pid, _, _, _ in labeled]
    if not ids:
        return 0
    _lock_rule_set(s, rs_id)
    s.execute(delete(Finding).where(Finding.rule_set_id == rs_id, Finding.paper_id.in_(ids)))
    existing = {pl.paper_id: pl for pl in s.scalars(
        select(PaperLabel).where(PaperLabel.rule_set_id == rs_id, PaperLabel.paper_id.in_(ids)))}
    rows: list[dict[str, Any]] = []
    for pid, lab, text, timed_out in labeled:
        lb = lab.labels
        r1, r2 = reproducibility(lb, ruleset)
        per_rule: dict[str, int] = {}
        for h in lab.hits:
            per_rule[h.rule_id] = per_rule.get(h.rule_id, 0) + 1
            if per_rule[h.rule_id] > max_hits:
                continue
            rows.append({"paper_id": pid, "rule_set_id": rs_id, "rule_id": h.rule_id, "kind": h.kind.value,
                         "label": h.label, "start": h.start, "end": h.end, "match": h.value,
                         "snippet": h.snippet(text, ruleset.snippet_chars), "run_id": run_id})
        extra = {"flags": list(lb.flags), "hits": per_rule, "suppressed": len(lab.suppressed),
                 "r1": r1, "r2": r2, "chars": len(text), **(origins or {}).get(pid, {})}
        attached = [{"rule": h.rule_id, "label": h.label, "start": h.start, "attached": h.attached}
                    for h in lab.hits if h.attached][:max_hits * 4]
        if attached:
            extra["attached"] = attached  # which mention each attached finding refers to (findings: same rule, start)
        if lab.rejected:
            extra["rejected"] = [{"rule": r.hit.rule_id, "kind": r.hit.kind.value, "label": r.hit.label,
                                  "start": r.hit.start, "end": r.hit.end, "match": r.hit.value, "reason": r.reason,
                                  "snippet": r.hit.snippet(text, ruleset.snippet_chars)}
                                 for r in lab.rejected[:max_hits * 4]]
        if timed_out:
            extra["timed_out"] = list(timed_out)
        values = dict(prelim=lb.prelim, computes=lb.computes, params=list(lb.params), protocol=list(lb.protocol),
                      variants=list(lb.variants), packages=list(lb.packages), code_urls=list(lb.code_urls),
                      extra=extra, run_id=run_id)
        row = existing.get(pid)
        if row is None:
            s.add(PaperLabel(paper_id=pid, rule_set_id=rs_id, **values))
        else:
            for k, v in values.items():
                setattr(row, k, v)
            row.labeled_at = utcnow()
    if rows:
        s.execute(insert(Finding), rows)
    return len(rows)


# --------------------------------------------------------------------------- diff

@dataclass
class LabelChange:
    """One paper whose labels differ between two rule-set versions."""

    paper_id: int
    ident: str
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)  # field -> {"old", "new"}

    def as_dict(self) -> dict[str, Any]:
        return {"paper_id": self.paper_id, "ident": self.ident, "changes": self.changes}


def find_rule_set(session: Session, ref: str) -> RuleSetRow:
    """A stored rule set by sha256 prefix (at least 6 characters), by id, or by name (its newest version)."""
    rows: list[RuleSetRow] = []
    if ref.isdigit():
        row = session.get(RuleSetRow, int(ref))
        rows = [row] if row else []
    if not rows and len(ref) >= 6:
        rows = list(session.scalars(select(RuleSetRow).where(RuleSetRow.sha256.like(f"{ref.lower()}%"))))
    if not rows:  # a rule file's name (as --rules takes it): its newest stored version
        name = ref.removesuffix(".toml")
        rows = list(session.scalars(select(RuleSetRow).where(RuleSetRow.name == name)
                                    .order_by(RuleSetRow.id.desc()).limit(1)))
    if len(rows) != 1:
        reason = "no stored rule set" if not rows else f"{len(rows)} stored rule sets"
        raise ReviewError(f"{reason} matches '{ref}'", item="--against",
                          hint="give a name, a longer sha256 prefix or an id; `review label --list` shows the stored ones")
    return rows[0]


def previous_rule_set(session: Session, current_id: int) -> RuleSetRow | None:
    """The most recent other version with the same name that has labels."""
    current = session.get(RuleSetRow, current_id)
    if current is None:
        return None
    labeled = select(PaperLabel.rule_set_id).distinct()
    return session.scalar(
        select(RuleSetRow).where(RuleSetRow.name == current.name, RuleSetRow.id != current_id,
                                 RuleSetRow.id.in_(labeled))
        .order_by(RuleSetRow.created_at.desc(), RuleSetRow.id.desc()).limit(1))


def list_rule_sets(session: Session) -> list[dict[str, Any]]:
    counts = dict(session.execute(select(PaperLabel.rule_set_id, func.count()).group_by(PaperLabel.rule_set_id)).all())
    return [{"id": r.id, "name": r.name, "version": r.version, "sha256": r.sha256, "path": r.path,
             "created_at": r.created_at, "papers": counts.get(r.id, 0)}
            for r in session.scalars(select(RuleSetRow).order_by(RuleSetRow.id))]


def diff_labels(session: Session, old_id: int, new_id: int) -> list[LabelChange]:
    """Papers whose automated labels differ between two rule sets (papers in both)."""
    def load(rs_id: int) -> dict[int, PaperLabel]:
        return {pl.paper_id: pl for pl in session.scalars(select(PaperLabel).where(PaperLabel.rule_set_id == rs_id))}

    old, new = load(old_id), load(new_id)
    idents = dict(session.execute(select(Paper.id, Paper.ident).where(Paper.id.in_(set(old) | set(new)))).all()) \
        if (old or new) else {}
    out: list[LabelChange] = []
    for pid in sorted(set(old) | set(new)):
        a, b = old.get(pid), new.get(pid)
        change = LabelChange(pid, idents.get(pid, str(pid)))
        for name in LABEL_FIELDS:
            va = _norm(getattr(a, name)) if a is not None else None
            vb = _norm(getattr(b, name)) if b is not None else None
            if va != vb:
                change.changes[name] = {"old": va, "new": vb}
        if change.changes:
            out.append(change)
    return out


def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(value) if all(isinstance(v, str) for v in value) else value
    return value


def latest_rule_set(session: Session, name: str | None = None) -> RuleSetRow | None:
    """The rule set of the most recent finished `review label` run (optionally by name).

    Other stages (compute, queue) read `PaperLabel` rows of this rule set.
    """
    from review.db.models import Run

    q = (select(RuleSetRow).join(Run, Run.rules_sha256 == RuleSetRow.sha256)
         .where(Run.command == "label", Run.status == "ok"))
    if name:
        q = q.where(RuleSetRow.name == name)
    return session.scalar(q.order_by(Run.finished_at.desc(), Run.id.desc()).limit(1))


def drop_rule_set(session: Session, ref: str) -> dict[str, Any]:
    """Delete one stored rule-set version with its findings and labels (never human work).

    Old versions are kept for `--diff` until dropped; runs keep their `rules_sha256`.
    """
    row = find_rule_set(session, ref)
    findings = session.execute(delete(Finding).where(Finding.rule_set_id == row.id)).rowcount or 0
    labels = session.execute(delete(PaperLabel).where(PaperLabel.rule_set_id == row.id)).rowcount or 0
    info = {"id": row.id, "name": row.name, "sha256": row.sha256, "papers": labels, "findings": findings}
    session.delete(row)
    return info
