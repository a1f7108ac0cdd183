"""Tasks and predictions built from automated labels, and the labeling configs they fit.

A paper task shows the paper's identity, a link to its PDF and the evidence snippets of
every rule match, grouped by question; its prediction proposes the automated answers
with the rule file's sha256 as `model_version`. A code task shows the repository, its
look-up and the scan's evidence. Proposed values that a config has no choice for are
left out of the prediction but stay visible in the evidence.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.db.models import Codebase, CodeFinding, Document, Finding, Paper, PaperLabel, RuleSet
from review.errors import InputFileError
from review.labelstudio.configs import render
from review.metric import default_metric, metric_of

KINDS = ("papers", "code")
OBJECT = "evidence"  # the object tag every question points at
EVIDENCE_PER_LABEL = 3
EVIDENCE_MAX = 60
QUESTION_OF_KIND = {"flag": "P0", "params": "P1", "variant": "P2", "protocol": "P3", "package": "P4"}


@dataclass(frozen=True)
class QuestionSpec:
    name: str
    tag: str  # choices | textarea
    multiple: bool
    choices: tuple[str, ...] = ()
    shown_when: tuple[str, tuple[str, ...]] | None = None  # (question, choices) of an enclosing visibleWhen


@dataclass(frozen=True)
class LabelConfig:
    kind: str
    xml: str
    questions: dict[str, QuestionSpec]
    no_evidence: str = "no rule matched"  # the evidence shown when no rule matched beyond the preliminary search

    @property
    def scored(self) -> list[str]:
        """Questions with categorical answers (agreement and resolution); not the free note."""
        return [q for q in self.questions if q != "note"]

    def visible(self, question: str, answers: dict[str, Any]) -> bool:
        """Whether the form shows `question` given the other answers (its visibleWhen chain)."""
        spec = self.questions.get(question)
        seen: set[str] = set()
        while spec is not None and spec.shown_when is not None and spec.name not in seen:
            seen.add(spec.name)
            tag, values = spec.shown_when
            given = answers.get(tag)
            given = given if isinstance(given, list) else [given]
            if not set(values) & {g for g in given if isinstance(g, str)}:
                return False
            spec = self.questions.get(tag)
        return True

    def shown_only(self, answers: dict[str, Any]) -> dict[str, Any]:
        """The answers the form would show: hidden questions left out."""
        return {q: a for q, a in answers.items() if self.visible(q, answers)}


@lru_cache(maxsize=8)
def _load_config(path: str) -> LabelConfig:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"cannot read labeling config: {exc.strerror}", item=path) from None
    return parse_config(text, path)


def parse_config(text: str, where: str = "labeling config", no_evidence: str = "no rule matched") -> LabelConfig:
    """The questions of a labeling configuration: names, choices, and when each is shown."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputFileError(f"labeling config is not valid XML: {exc}", item=where) from None
    questions: dict[str, QuestionSpec] = {}

    def walk(el: ET.Element, shown_when: tuple[str, tuple[str, ...]] | None) -> None:
        if el.get("visibleWhen") == "choice-selected" and el.get("whenTagName"):
            values = tuple(v.strip() for v in (el.get("whenChoiceValue") or "").split(","))
            shown_when = (el.get("whenTagName", ""), values)
        name = el.get("name", "")
        if el.tag == "Choices":
            values = tuple(c.get("value", "") for c in el.findall("Choice"))
            questions[name] = QuestionSpec(name, "choices", el.get("choice") == "multiple", values, shown_when)
        elif el.tag == "TextArea":
            questions[name] = QuestionSpec(name, "textarea", True, (), shown_when)
        for child in el:
            walk(child, shown_when)

    walk(root, None)
    kind = "papers" if "P0" in questions else "code"
    return LabelConfig(kind, text, questions, no_evidence)


def label_config(kind: str, settings: Any = None, path: Path | None = None) -> LabelConfig:
    """The form of `kind` for the settings' metric (the default metric without settings),
    generated from its folder and the configured rule file; or the file at `path`."""
    if path is not None:
        return _load_config(str(path))
    metric = metric_of(settings) if settings is not None else default_metric()
    rules = None
    if settings is not None and settings.label.rules:
        from review.metric import find_rule_file

        rules = find_rule_file(settings.label.rules, settings, base=settings.config_dir)  # a path or a name
    return parse_config(render(kind, metric, rules), f"{metric.folder} ({kind})", metric.text("no_evidence"))


def ref_of(kind: str, item_id: int) -> str:
    return f"{'paper' if kind == 'papers' else 'codebase'}:{item_id}"


def parse_ref(ref: str | None) -> tuple[str, int] | None:
    """'paper:12' -> ('papers', 12); None for anything else."""
    if not ref or ":" not in ref:
        return None
    prefix, _, num = ref.partition(":")
    kind = {"paper": "papers", "codebase": "code"}.get(prefix)
    if kind is None or not num.isdigit():
        return None
    return kind, int(num)


@dataclass
class Candidate:
    """An item that may be queued, with what selection and ordering need."""

    kind: str
    item_id: int
    model_version: str
    certainty: int  # evidence count: fewer matches = less certain
    flagged: bool
    year: int | None = None
    venue: str | None = None
    ident: str = ""
    label_id: int | None = None  # PaperLabel.id for papers


def _choice(spec: QuestionSpec | None, values: Iterable[str]) -> list[str]:
    if spec is None:
        return []
    return [v for v in values if v in spec.choices]


def _choices_result(name: str, values: list[str]) -> dict[str, Any]:
    return {"from_name": name, "to_name": OBJECT, "type": "choices", "value": {"choices": values}}


def _text_result(name: str, lines: list[str]) -> dict[str, Any]:
    return {"from_name": name, "to_name": OBJECT, "type": "textarea", "value": {"text": lines}}


# --- papers

def paper_candidates(session: Session, rule_set: str | None = None) -> list[Candidate]:
    """Papers with automated labels (newest rule set per paper unless one is named)."""
    q = select(PaperLabel.id, PaperLabel.paper_id, PaperLabel.rule_set_id, PaperLabel.prelim, PaperLabel.computes,
               RuleSet.sha256, Paper.year, Paper.venue, Paper.ident).join(RuleSet, RuleSet.id == PaperLabel.rule_set_id)\
        .join(Paper, Paper.id == PaperLabel.paper_id).where(PaperLabel.prelim.is_(True))
    if rule_set:
        q = q.where(RuleSet.sha256.startswith(rule_set))
    best: dict[int, Any] = {}
    for row in session.execute(q):
        if row.paper_id not in best or row.rule_set_id > best[row.paper_id].rule_set_id:
            best[row.paper_id] = row
    counts = {(pid, rs): n for pid, rs, n in session.execute(
        select(Finding.paper_id, Finding.rule_set_id, func.count()).group_by(Finding.paper_id, Finding.rule_set_id))}
    return [Candidate("papers", pid, r.sha256, counts.get((pid, r.rule_set_id), 0), bool(r.computes), r.year,
                      r.venue, r.ident, r.id) for pid, r in best.items()]


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def local_pdf(session: Session, paper_id: int | None, pdf_root: Path | None) -> Path | None:
    """The paper's PDF on this machine (downloaded or imported), when it is there: an
    imported paper often has no URL, and the reviewer still needs to open it."""
    if pdf_root is None or paper_id is None:
        return None
    rel = session.scalar(select(Document.path).where(Document.paper_id == paper_id, Document.outcome == "ok"))
    if not rel:
        return None
    path = (pdf_root / rel).resolve()
    return path if path.is_file() else None


def _local_link(path: Path, text: str) -> str:
    """A file:// link plus the path written out (browsers may refuse file:// from a web page)."""
    return f'<a href="{html.escape(path.as_uri())}" target="_blank">{text}</a> ({html.escape(str(path))})'


def paper_task(session: Session, cand: Candidate, config: LabelConfig,
               pdf_root: Path | None = None) -> dict[str, Any]:
    """The Label Studio task (data + one prediction) for one paper; `pdf_root` (the data
    folder) lets it link the local copy of the PDF."""
    paper = session.get(Paper, cand.item_id)
    label = session.get(PaperLabel, cand.label_id)
    assert paper is not None and label is not None
    findings = session.scalars(select(Finding).where(Finding.paper_id == paper.id,
                                                     Finding.rule_set_id == label.rule_set_id)
                               .order_by(Finding.kind, Finding.label, Finding.start)).all()
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in findings:
        groups[(QUESTION_OF_KIND.get(f.kind, f.kind), f.label)].append(f)
    lines: list[str] = []
    for (question, lab), fs in sorted(groups.items()):
        lines.append(f"[{question}] {lab} ({len(fs)} match{'es' if len(fs) != 1 else ''}, rule {fs[0].rule_id})")
        for f in fs[:EVIDENCE_PER_LABEL]:
            lines.append(f"    «{_snippet(f.match, 80)}» … {_snippet(f.snippet)}")
        if len(lines) >= EVIDENCE_MAX:
            lines.append(f"… {len(findings)} matches in all")
            break
    if not lines:
        lines.append(config.no_evidence)
    authors = ", ".join(paper.authors[:6]) + (" et al." if len(paper.authors) > 6 else "")
    meta = (f"{authors} · {paper.venue or '?'} {paper.year or ''} · {paper.booktitle or ''}\n"
            f"automated (rule file {cand.model_version[:12]}): computes={label.computes}; "
            f"packages={', '.join(label.packages) or 'none'}; variants={', '.join(label.variants) or 'none'}; "
            f"protocol={', '.join(label.protocol) or 'none'}; params={' | '.join(label.params) or 'none'}")
    links = []
    if paper.pdf_url:
        links.append(f'<a href="{html.escape(paper.pdf_url)}" target="_blank">PDF</a>')
    local = local_pdf(session, paper.id, pdf_root)
    if local is not None:
        links.append(_local_link(local, "local PDF"))
    if paper.url:
        links.append(f'<a href="{html.escape(paper.url)}" target="_blank">landing page</a>')
    for u in label.code_urls[:5]:
        links.append(f'<a href="{html.escape(u)}" target="_blank">{html.escape(u)}</a>')
    data = {"ref": ref_of("papers", paper.id), "ident": paper.ident, "title": paper.title or "(untitled)",
            "meta": meta, "links": " · ".join(links) or "no link", "evidence": "\n".join(lines),
            "year": paper.year, "venue": paper.venue}
    if local is not None:
        data["pdf_path"] = str(local)
    q = config.questions
    proposed: dict[str, Any] = {"P0": "yes" if label.computes else "no"}
    if label.params and "P1" in q:
        proposed["P1"] = list(label.params)
    for name, values in (("P2", label.variants), ("P3", label.protocol), ("P4", label.packages)):
        if name in q:
            proposed[name] = _choice(q[name], values) or ["NONE"]
    if "C0" in q:  # the paper-level C0: released code is a linked codebase GitHub did not report gone
        linked = session.scalar(select(func.count()).select_from(Codebase).where(
            Codebase.paper_id == paper.id, Codebase.lookup_status.is_distinct_from("deleted")))
        proposed["C0"] = "yes" if linked or label.code_urls else "no"
    return {"data": data, "predictions": [{"model_version": cand.model_version,
                                           "result": prediction_result(proposed, config)}]}


def prediction_result(proposed: dict[str, Any], config: LabelConfig) -> list[dict[str, Any]]:
    """Proposed answers as a prediction's result, leaving out what the form would hide
    (a paper proposed as not computing the metric gets no P1-P4 pre-filled)."""
    result = []
    for name, value in config.shown_only(proposed).items():
        spec = config.questions.get(name)
        if spec is None:
            continue
        if spec.tag == "textarea":
            result.append(_text_result(name, list(value)))
        else:
            result.append(_choices_result(name, value if isinstance(value, list) else [value]))
    return result


# --- codebases

def code_candidates(session: Session) -> list[Candidate]:
    """Codebases not excluded by the GitHub search for the metric's term (code_metric_prelim)."""
    rows = session.execute(
        select(Codebase, Paper.year, Paper.venue, Paper.ident).join(Paper, Paper.id == Codebase.paper_id)
        .where(Codebase.code_metric_prelim.is_not(False))).all()
    counts = dict(session.execute(select(CodeFinding.codebase_id, func.count()).group_by(CodeFinding.codebase_id)).all())
    shas = dict(session.execute(select(CodeFinding.codebase_id, func.max(CodeFinding.rules_sha256))
                                .group_by(CodeFinding.codebase_id)).all())
    out = []
    for cb, year, venue, ident in rows:
        mv = shas.get(cb.id) or (f"scan:{cb.scan_commit}" if cb.scan_commit else "unscanned")
        out.append(Candidate("code", cb.id, mv, counts.get(cb.id, 0),
                             cb.scan_outcome == "ok" and bool(cb.packages), year, venue, ident))
    return out


def code_task(session: Session, cand: Candidate, config: LabelConfig, pdf_root: Path | None = None) -> dict[str, Any]:
    cb = session.get(Codebase, cand.item_id)
    assert cb is not None
    paper = session.get(Paper, cb.paper_id)
    findings = session.scalars(select(CodeFinding).where(CodeFinding.codebase_id == cb.id)
                               .order_by(CodeFinding.kind, CodeFinding.label, CodeFinding.file, CodeFinding.line)).all()
    lines = []
    for f in findings[:EVIDENCE_MAX]:
        where = f"{f.file}:{f.line}" if f.line else f.file
        lines.append(f"[{f.kind}] {f.label} ({f.source or '?'}{', ' + f.role if f.role else ''}) {where}: {_snippet(f.text, 200)}")
    if len(findings) > EVIDENCE_MAX:
        lines.append(f"… {len(findings)} findings in all")
    if not lines:
        lines.append(f"no scan evidence (scan: {cb.scan_outcome or 'not run'} {cb.scan_reason or ''})".strip())
    meta = (f"paper {paper.ident if paper else cb.paper_id}: {paper.title if paper else ''}\n"
            f"look-up: {cb.lookup_status or 'not done'} {cb.lookup_detail or ''}; stars {cb.stars}; "
            f"license {cb.license}; archived {cb.archived}; official {cb.official}\n"
            f"scan: {cb.scan_outcome or 'not run'} {cb.scan_reason or ''} at {cb.scan_commit or '?'}; "
            f"packages used={', '.join(cb.packages) or 'none'}; present={', '.join(cb.packages_present) or 'none'}; "
            f"C2={cb.eval_reproducible_reason or 'not decided'}; anti-features={', '.join(cb.anti_features) or 'none'}")
    links = [f'<a href="{html.escape(cb.url)}" target="_blank">{html.escape(cb.url)}</a>']
    if paper and paper.pdf_url:
        links.append(f'<a href="{html.escape(paper.pdf_url)}" target="_blank">paper PDF</a>')
    local = local_pdf(session, cb.paper_id, pdf_root)
    if local is not None:
        links.append(_local_link(local, "local paper PDF"))
    data = {"ref": ref_of("code", cb.id), "ident": paper.ident if paper else str(cb.paper_id),
            "repository": cb.full_name or f"{cb.owner}/{cb.name}", "meta": meta, "links": " · ".join(links),
            "evidence": "\n".join(lines), "year": paper.year if paper else None}
    if local is not None:
        data["pdf_path"] = str(local)
    q = config.questions
    proposed: dict[str, Any] = {"C0": "no" if cb.lookup_status == "deleted" else "yes"}
    if "C1" in q:
        proposed["C1"] = _choice(q["C1"], cb.packages) or ["NONE"]
    if cb.eval_reproducible is not None and "C2" in q:
        proposed["C2"] = "yes" if cb.eval_reproducible else "no"
    return {"data": data, "predictions": [{"model_version": cand.model_version,
                                           "result": prediction_result(proposed, config)}]}


def build_task(session: Session, cand: Candidate, config: LabelConfig, pdf_root: Path | None = None) -> dict[str, Any]:
    build = paper_task if cand.kind == "papers" else code_task
    return build(session, cand, config, pdf_root)


def candidates(session: Session, kind: str, rule_set: str | None = None) -> list[Candidate]:
    return paper_candidates(session, rule_set) if kind == "papers" else code_candidates(session)


def answers_of(result: list[dict[str, Any]], config: LabelConfig) -> dict[str, Any]:
    """An annotation's result as {question: answer}: a string for single choices and the
    note, a list for multiple choices and parameter strings (one per line).

    Only what the form showed counts: an answer to a question hidden by the reviewer's own
    answers (P1-P4 after P0 = no, C1-C2 after C0 = no) is left out, and a shown question
    typed as text but left empty (P1: "empty = none") is the empty list."""
    out: dict[str, Any] = {}
    for r in result or []:
        name = r.get("from_name")
        spec = config.questions.get(name)
        value = r.get("value") or {}
        if spec is None:
            continue
        if spec.tag == "choices":
            values = [str(v) for v in value.get("choices", [])]
            out[name] = sorted(set(values)) if spec.multiple else (values[0] if values else None)
        else:
            texts = value.get("text", [])
            texts = [texts] if isinstance(texts, str) else texts
            if name == "note":
                out[name] = "\n".join(t for t in texts if t).strip()
            else:
                lines = [" ".join(x.split()) for t in texts for x in str(t).splitlines()]
                out[name] = [x for x in dict.fromkeys(lines) if x]
    out = {k: v for k, v in out.items() if v is not None}
    if out:
        for name, spec in config.questions.items():
            if spec.tag == "textarea" and name != "note" and name not in out and config.visible(name, out):
                out[name] = []
    return config.shown_only(out)
