"""`review compute`: the whole corpus recomputed in one pass, stored in one transaction.

It is cheap (100,000 papers take seconds), and the `reproducibility` table is replaced at
once, so a crash leaves the previous result intact and a rerun gives the same rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.compute.catalog import load_catalog
from review.compute.labels import CodeInput, PaperInput, compute_paper
from review.compute.human import Human, human_inputs
from review.compute.rows import current_digest, json_text, parse_json, rows_digest, write_rows
from review.db.models import Codebase, Paper, PaperLabel, RuleSet
from review.db.session import Database
from review.errors import ReviewError, RuleFileError
from review.log import get_logger
from review.metric import metric_of
from review.progress import progress
from review.runs import record_run
from review.settings import ComputeSettings, Settings

log = get_logger("compute")


@dataclass
class ComputeResult:
    metric: str = ""  # the metric's name, as texts write it
    papers: int = 0
    metric_papers: int = 0
    reproducible: int = 0
    software_error: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    rule_set: str | None = None
    packages_sha256: str = ""
    unknown_packages: list[str] = field(default_factory=list)
    run_id: int | None = None
    dry_run: bool = False
    unchanged: bool = False
    signature: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def summary(self) -> str:
        verb = "would compute" if self.dry_run else "computed"
        return (f"{verb} {self.papers} papers: {self.metric_papers} compute {self.metric or 'the metric'}, {self.reproducible} reproducible, "
                f"{self.software_error} cite software with scoring errors"
                + ("; unchanged, stored labels kept" if self.unchanged else ""))


def configured_rules(settings: Settings) -> tuple[str, str] | None:
    """(sha256, name) of the rule file `review label` uses by default (label.rules)."""
    try:
        from review.rules.stage import resolve_rules

        rs = resolve_rules(settings)
        return rs.sha256, rs.name
    except (ImportError, ReviewError, OSError):
        return None


def choose_rule_set(session: Session, wanted: str, configured: tuple[str, str] | None = None) -> RuleSet | None:
    """The rule set named by `compute.rule_set` (name or sha256 prefix); by default the
    version of the configured rule file (label.rules), else the newest rule set of that
    name, else the newest of all (so a BLEU rule file labelled later is not picked up)."""
    q = select(RuleSet).order_by(RuleSet.id.desc())
    sets = list(session.scalars(q))
    if not wanted:
        if configured:
            for test in (lambda r: r.sha256 == configured[0], lambda r: r.name == configured[1]):
                match = next((r for r in sets if test(r)), None)
                if match is not None:
                    return match
        return sets[0] if sets else None
    for rs in sets:
        if rs.name == wanted or rs.sha256.startswith(wanted):
            return rs
    raise RuleFileError(f"no rule set named or hashed {wanted!r} in the database",
                        item="compute.rule_set", hint="run `review label` first, or clear the setting")


def gather_inputs(session: Session, settings: ComputeSettings, configured: tuple[str, str] | None = None,
                  run_id: int | None = None) -> tuple[list[PaperInput], RuleSet | None]:
    """Read every paper's inputs with a handful of bulk queries (no per-paper round trips);
    the human answers are the stored resolutions, refreshed first (`review.resolution`)."""
    rule_set = choose_rule_set(session, settings.rule_set, configured)
    inputs = {pid: PaperInput(pid) for (pid,) in session.execute(
        select(Paper.id).where(Paper.removed.is_(False), Paper.retracted.is_(False)).order_by(Paper.id))}
    if rule_set is not None:
        rows = session.execute(select(PaperLabel.paper_id, PaperLabel.prelim, PaperLabel.computes,
                                      json_text(PaperLabel.params), json_text(PaperLabel.protocol),
                                      json_text(PaperLabel.variants), json_text(PaperLabel.packages))
                               .where(PaperLabel.rule_set_id == rule_set.id))
        for pid, prelim, computes, params, protocol, variants, packages in rows:
            if pid in inputs:
                inputs[pid].label = {"prelim": prelim, "computes": computes, "params": parse_json(params) or [],
                                     "protocol": parse_json(protocol) or [], "variants": parse_json(variants) or [],
                                     "packages": parse_json(packages) or []}
    by_paper, by_code = human_inputs(session, run_id)
    for pid, human in by_paper.items():
        if pid in inputs:
            inputs[pid].human, inputs[pid].disputed = human.answers, human.disputed
    rows = session.execute(select(Codebase.id, Codebase.paper_id, Codebase.url, Codebase.official,
                                  Codebase.code_metric_prelim, Codebase.scan_outcome, Codebase.packages,
                                  Codebase.anti_features, Codebase.eval_reproducible))
    for cid, pid, url, official, prelim, scan_outcome, packages, anti, verdict in rows:
        if pid not in inputs:
            continue
        human = by_code.get(cid, Human())
        inputs[pid].codes.append(CodeInput(url=url, official=official, code_metric_prelim=prelim,
                                           scanned=scan_outcome == "ok", packages=list(packages or []),
                                           anti_features=list(anti or []), eval_reproducible=verdict,
                                           human=human.answers,
                                           disputed=human.disputed))
    return list(inputs.values()), rule_set


def run_compute(db: Database, settings: Settings, *, dry_run: bool = False, force: bool = False) -> ComputeResult:
    """Recompute every paper's labels and replace the `reproducibility` table at once.

    When the result equals what is stored (same rows, same digest), the stored rows are
    kept, so their `run_id` still names the run that made them and a following export is
    byte-identical to the previous one. `force` rewrites them anyway.
    """
    metric = metric_of(settings)
    catalog = load_catalog(settings.compute.packages, settings)
    result = ComputeResult(metric=metric.name, dry_run=dry_run, packages_sha256=catalog.sha256)
    arguments = {"dry_run": dry_run, **settings.compute.model_dump()}
    with record_run(db, "compute", arguments) as run:
        with db.session() as s:
            inputs, rule_set = gather_inputs(s, settings.compute, configured_rules(settings), run.id)
            if dry_run:  # the refreshed resolutions too: a dry run writes nothing
                if rule_set is not None:
                    s.expunge(rule_set)
                s.rollback()
        if rule_set is not None:
            result.rule_set = f"{rule_set.name}@{rule_set.sha256[:12]}"
            run.rules_sha256 = rule_set.sha256
        run.signature.update({**metric.signature(), "rules": rule_set.name if rule_set else None,
                              "rules_sha256": rule_set.sha256[:12] if rule_set else None,
                              **catalog.signature()})
        rows: list[dict[str, Any]] = []
        unknown: set[str] = set()
        by_source: Counter[str] = Counter()
        with progress(len(inputs), "compute") as bar:
            for inp in inputs:
                row = compute_paper(inp, catalog, settings.compute)
                row["rule_set_id"] = rule_set.id if rule_set else None
                row["run_id"] = run.id
                rows.append(row)
                unknown.update(p for p in row["packages"] if p not in catalog.packages)
                by_source[row["label_source"]] += 1
                bar.advance()
        result.papers = len(rows)
        result.metric_papers = sum(1 for r in rows if r["paper_metric"])
        result.reproducible = sum(1 for r in rows if r["reproducible"])
        result.software_error = sum(1 for r in rows if r["paper_metric"] and r["software_error"] == "true")
        result.by_source = dict(sorted(by_source.items()))
        result.unknown_packages = sorted(unknown)
        for name in result.unknown_packages:
            log.warning("package %r is not in the catalog %s: its correctness counts as unknown", name, catalog.path)
        digest = rows_digest(rows)
        run.signature.update({"rows_sha256": digest[:16]})
        if not dry_run:
            previous = current_digest(db)
            if previous is not None and previous == (digest[:16], len(rows)) and not force:
                result.unchanged = True  # same rows as stored: keep them (and the run they point to)
            else:
                write_rows(db, rows)
        run.count("papers", result.papers)
        run.count("metric_papers", result.metric_papers)
        run.count("reproducible", result.reproducible)
        run.count("software_error", result.software_error)
        for k, v in result.by_source.items():
            run.count(f"source_{k}", v)
        run.summary = result.summary()
        result.run_id = run.id
    result.signature = run.signature.format()
    return result
