"""Which rule set, text extractor and code scan made each exported row: one source of truth.

Why a module of its own: an export used to name "the newest stored rule set" in its
manifest and report, while compute had read another one (a `review label --rules X --diff`
stores X without making it the one compute uses). Every export file now names what is
derived here, from the rows themselves:

- the rule set: the one the stored `reproducibility` row of the paper was computed from;
- the extractor: the text that rule set labelled (`paper_labels.extra["text_id"]`), its
  extractor and version and the normalizer version (an imported corpus: its name and version);
- the code scan: the scanner and tool version of the runs whose findings describe the
  paper's codebases (and the package catalog they looked for).

A summary over many rows says the one value they share, or "mixed" with every value and
its count when they disagree, never one of them as if it were all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Codebase, CodeFinding, PaperLabel, PaperText, Reproducibility, Run, RuleSet
from review.importer.text_source import PDF

FIELDS = ("rule_set", "rule_set_sha256", "extractor", "code_scan")
MIXED = "mixed"


@dataclass(frozen=True)
class RowProvenance:
    """What made one paper's exported row (None: nothing of that kind, e.g. no codebase scanned)."""

    rule_set: str | None = None
    rule_set_sha256: str | None = None
    rule_set_version: str | None = None
    extractor: str | None = None
    code_scan: str | None = None


def _extractor(source: str | None, extractor: str | None, version: str | None, normalizer: str | None) -> str | None:
    if source is None:
        return None
    if source != PDF:  # an imported corpus: its name and version
        return f"{source}@{version}" if version else source
    name = " ".join(p for p in (extractor, version) if p) or "unknown extractor"
    return f"{name}, normalizer {normalizer}" if normalizer else name


def _scan(run: Run | None, catalog_sha: str | None) -> str:
    if run is None:
        return "unknown scan"
    scanner = (run.signature or {}).get("scanner") or "review-code-scan"
    text = f"{scanner} (review {run.tool_version})"
    return f"{text}, catalog {catalog_sha[:12]}" if catalog_sha else text


def per_paper(session: Session, paper_ids: Iterable[int] | None = None) -> dict[int, RowProvenance]:
    """paper id -> what made its stored `reproducibility` row (papers without one are absent)."""
    wanted = None if paper_ids is None else set(paper_ids)
    rows = session.execute(select(Reproducibility.paper_id, RuleSet.name, RuleSet.sha256, RuleSet.version,
                                  PaperLabel.extra)
                           .select_from(Reproducibility)
                           .outerjoin(RuleSet, RuleSet.id == Reproducibility.rule_set_id)
                           .outerjoin(PaperLabel, (PaperLabel.paper_id == Reproducibility.paper_id)
                                      & (PaperLabel.rule_set_id == Reproducibility.rule_set_id))).all()
    rows = [r for r in rows if wanted is None or r[0] in wanted]
    text_ids = {int(extra["text_id"]) for *_, extra in rows if extra and extra.get("text_id") is not None}
    texts: dict[int, str | None] = {}
    for i in range(0, len(text_ids), 5000):
        chunk = sorted(text_ids)[i:i + 5000]
        for tid, src, ext, ver, norm in session.execute(
                select(PaperText.id, PaperText.source, PaperText.extractor, PaperText.extractor_version,
                       PaperText.normalizer_version).where(PaperText.id.in_(chunk))):
            texts[tid] = _extractor(src, ext, ver, norm)
    scans = _scans(session)
    out: dict[int, RowProvenance] = {}
    for pid, name, sha, version, extra in rows:
        tid = (extra or {}).get("text_id")
        if tid is not None:
            extractor = texts.get(int(tid))
        elif extra and extra.get("text_source"):  # labelled before the text id was kept
            extractor = _extractor(extra["text_source"], None, extra.get("text_version"), None)
        else:
            extractor = None
        scan = "; ".join(sorted(scans[pid])) if scans.get(pid) else None
        out[pid] = RowProvenance(name, sha, version, extractor, scan)
    return out


def _scans(session: Session) -> dict[int, set[str]]:
    """paper id -> the scans that describe its codebases (every scan writes its C2 conditions)."""
    pairs = session.execute(select(Codebase.paper_id, CodeFinding.run_id, CodeFinding.rules_sha256).distinct()
                            .join(CodeFinding, CodeFinding.codebase_id == Codebase.id)).all()
    run_ids = sorted({r for _, r, _ in pairs if r is not None})
    runs = {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(run_ids)))} if run_ids else {}
    out: dict[int, set[str]] = {}
    for pid, run_id, catalog_sha in pairs:
        out.setdefault(pid, set()).add(_scan(runs.get(run_id), catalog_sha))
    return out


@dataclass
class Provenance:
    """What made a set of rows: each field's values with the number of rows holding them."""

    rows: int = 0
    values: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Iterable[RowProvenance]) -> "Provenance":
        out = cls(values={f: Counter() for f in FIELDS})
        for r in rows:
            out.rows += 1
            for f in FIELDS:
                value = getattr(r, f)
                if value is not None:
                    out.values[f][value] += 1
        return out

    def single(self, name: str) -> str | None:
        """The one value every row with one shares; None when none has one or they disagree."""
        found = self.values.get(name) or Counter()
        return next(iter(found)) if len(found) == 1 else None

    def header(self, name: str, width: int | None = None) -> str | None:
        """The value to print for all rows: the shared one, "mixed" when rows disagree, None when no row has one."""
        found = self.values.get(name) or Counter()
        if not found:
            return None
        if len(found) > 1:
            return MIXED
        value = next(iter(found))
        return value[:width] if width else value

    def describe(self, name: str) -> str:
        """Every value with its row count, most rows first ("rouge (70); rouge-precise (5)")."""
        found = self.values.get(name) or Counter()
        return "; ".join(f"{v} ({n})" for v, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))

    def signature(self) -> dict[str, Any]:
        """The provenance part of an export's signature (`review.signature`)."""
        rules = self.header("rule_set")
        sha = self.header("rule_set_sha256", 12)
        return {"rules": rules, "rules_sha256": sha, "extractor": self.header("extractor"),
                "code_scan": self.header("code_scan")}

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "mixed": [f for f in FIELDS if len(self.values.get(f) or ()) > 1],
                **{f: dict(sorted((self.values.get(f) or Counter()).items())) for f in FIELDS}}

    def note(self) -> str:
        """One line for a row of statistics: the shared values, or what disagrees."""
        parts = []
        for label, name in (("rules", "rule_set"), ("rules_sha256", "rule_set_sha256"), ("extractor", "extractor"),
                            ("code_scan", "code_scan")):
            found = self.values.get(name) or Counter()
            if len(found) == 1:
                value = next(iter(found))
                parts.append(f"{label}:{value[:12] if name == 'rule_set_sha256' else value}")
            elif found:
                parts.append(f"{label}:{MIXED}({self.describe(name)})")
        return "|".join(parts)


def rule_set_of_rows(session: Session) -> RuleSet | None:
    """The rule set the stored `reproducibility` rows were computed from, when they share one:
    what estimates must read to agree with the exported rows (None: no rows, or mixed)."""
    ids = {i for (i,) in session.execute(select(Reproducibility.rule_set_id).distinct()) if i is not None}
    return session.get(RuleSet, ids.pop()) if len(ids) == 1 else None
