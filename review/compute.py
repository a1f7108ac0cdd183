"""Reproducibility labels (Rogue Scores §4): R1, R2, R3, software_error, reproducible.

For every paper the inputs are the answers to the review questions (P0-P4 about the paper,
C0-C2 about its code). A human decision wins where one exists (non-deleted; several
reviewers are resolved by majority, see `resolve_decisions`); otherwise the automated
label stands, and the row says which (`sources` per question, `label_source` overall).
Package names are mapped to the catalog (`patterns/packages.toml`) so aliases collapse
and software_error is true / false / unknown; a package that was never tested is
unknown, never correct.

The whole corpus is recomputed in one pass (it is cheap: 100,000 papers take seconds) and
the `reproducibility` table is replaced in one transaction, so a crash leaves the previous
result intact and a rerun gives the same rows.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from sqlalchemy import JSON, DateTime, Text, TypeDecorator, bindparam, cast, delete, func, select, text
from sqlalchemy.orm import Session

import review
from review.db.models import (Codebase, HumanDecision, HumanProject, Paper, PaperLabel, Reproducibility, RuleSet,
                              Run)
from review.db.session import Database
from review.db.base import utcnow
from review.errors import InputFileError, ReviewError, RuleFileError
from review.log import get_logger
from review.progress import progress
from review.runs import record_run
from review.settings import ComputeSettings, Settings

log = get_logger("compute")

BOOL_QUESTIONS = ("P0", "P1", "C0", "C2")
LIST_QUESTIONS = ("P2", "P3", "P4", "C1")
PAPER_QUESTIONS = ("P0", "P1", "P2", "P3", "P4")
CODE_QUESTIONS = ("C0", "C1", "C2")
BOOTSTRAP_LABEL = "bootstrapping"
GITHUB_ROUGE = "github rouge"
UNKNOWN_PYROUGE = "unknown pyrouge"

# Figure 3 series, in plotting order.
CATEGORIES = ("reproducible", "incorrect package", "unknown package", "correct package, not reproducible")


# --------------------------------------------------------------------------- catalog

@dataclass(frozen=True)
class Package:
    label: str
    kind: str
    software_error: bool | None  # None = unknown (not tested or unidentified)
    no_config: bool
    result: str


@dataclass
class Catalog:
    """The package catalog: canonical labels, aliases, tested correctness."""

    packages: dict[str, Package]
    aliases: dict[str, str]
    path: str
    sha256: str

    def canonical(self, name: str) -> str:
        """The catalog label for a package name (as written when it is not in the catalog)."""
        key = _alias_key(name)
        return self.aliases.get(key, name.strip())

    def error(self, label: str) -> bool | None:
        pkg = self.packages.get(label)
        return pkg.software_error if pkg else None

    def no_config(self, label: str) -> bool:
        pkg = self.packages.get(label)
        return bool(pkg and pkg.no_config)

    def signature(self) -> dict[str, Any]:
        return {"packages_sha256": self.sha256[:12]}


def _alias_key(name: str) -> str:
    return " ".join(name.casefold().split())


def find_data_file(path: str, settings: Settings | None = None) -> Path:
    """A data file named by a setting: absolute, relative to the config/cwd, or bundled."""
    candidates = []
    p = Path(path).expanduser()
    if p.is_absolute():
        candidates.append(p)
    else:
        if settings is not None:
            candidates.append(settings.resolve(p))
        candidates.append(Path.cwd() / p)
        pkg = Path(review.__file__).resolve().parent
        candidates.append(pkg.parent / p)  # a checkout: <repo>/patterns/...
        if p.parts and p.parts[0] == "patterns":
            candidates.append(pkg / "_patterns" / Path(*p.parts[1:]))  # an installed wheel
    for c in candidates:
        if c.is_file():
            return c
    raise InputFileError("file not found", item=path, hint=f"looked in: {', '.join(str(c) for c in candidates)}")


def load_catalog(path: str | Path, settings: Settings | None = None) -> Catalog:
    """Parse and validate the package catalog; every problem names the entry and key."""
    file = find_data_file(str(path), settings)
    raw = file.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=str(file)) from None
    unknown = set(data) - {"schema", "package"}
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=str(file))
    if data.get("schema") != 1:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads 1)", item=str(file))
    packages: dict[str, Package] = {}
    aliases: dict[str, str] = {}
    allowed = {"label", "kind", "software_error", "no_config", "result", "aliases"}
    for i, entry in enumerate(data.get("package", [])):
        where = f"{file}: package #{i + 1} ({entry.get('label', '?')})"
        extra = set(entry) - allowed
        if extra:
            raise RuleFileError(f"unknown key(s) {sorted(extra)}", item=where)
        label = entry.get("label")
        if not isinstance(label, str) or not label.strip():
            raise RuleFileError("label missing", item=where)
        err = entry.get("software_error")
        if err not in (True, False, "unknown"):
            raise RuleFileError(f"software_error must be true, false or \"unknown\", not {err!r}", item=where)
        if label in packages:
            raise RuleFileError("label listed twice", item=where)
        packages[label] = Package(label=label, kind=str(entry.get("kind", "")),
                                  software_error=None if err == "unknown" else bool(err),
                                  no_config=bool(entry.get("no_config", False)), result=str(entry.get("result", "")))
        for alias in [label, *entry.get("aliases", [])]:
            key = _alias_key(alias)
            if aliases.get(key, label) != label:
                raise RuleFileError(f"alias {alias!r} already names {aliases[key]}", item=where)
            aliases[key] = label
    return Catalog(packages=packages, aliases=aliases, path=str(file), sha256=hashlib.sha256(raw).hexdigest())


# --------------------------------------------------------------------------- human decisions

def parse_bool(answer: Any) -> bool | None:
    """A yes/no answer in any of the shapes Label Studio or a file may give it."""
    if isinstance(answer, dict):
        answer = answer.get("choices", answer.get("value", answer.get("answer")))
    if isinstance(answer, list):
        answer = answer[0] if len(answer) == 1 else None
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, (int, float)) and answer in (0, 1):
        return bool(answer)
    if isinstance(answer, str):
        word = answer.strip().casefold()
        if word in ("yes", "true", "y", "1"):
            return True
        if word in ("no", "false", "n", "0"):
            return False
    return None


def parse_list(answer: Any) -> list[str] | None:
    """A multi-choice answer as a sorted list; "NONE" means the empty list."""
    if isinstance(answer, dict):
        answer = answer.get("choices", answer.get("value", answer.get("answer")))
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
        return None
    return sorted({a.strip() for a in answer if a.strip() and a.strip().casefold() != "none"})


def parse_params(answer: Any) -> bool | list[str] | None:
    """P1 is a yes/no, or (in our Label Studio config) the parameter strings the reviewer
    copied from the paper, one per line: any string means "yes, parameters are listed"."""
    flag = parse_bool(answer)
    if flag is not None:
        return flag
    strings = parse_list(answer)
    if strings is None:
        return None
    return [x for x in strings if x.casefold() not in ("no", "false")]


def parse_answer(question: str, answer: Any) -> Any:
    if question == "P1":
        return parse_params(answer)
    if question in BOOL_QUESTIONS:
        return parse_bool(answer)
    if question in LIST_QUESTIONS:
        return parse_list(answer)
    return None


@dataclass(frozen=True)
class Decision:
    question: str
    annotator: str
    annotated_at: datetime
    id: int
    value: Any  # bool or tuple of str
    adjudication: bool = False  # from an adjudication project: wins outright

    @property
    def vote(self) -> Any:
        """What is counted: for P1 parameter strings only whether there are any."""
        if self.question == "P1" and isinstance(self.value, tuple):
            return bool(self.value)
        return self.value


def resolve_decisions(decisions: Iterable[Decision]) -> dict[str, Any]:
    """One answer per question: each reviewer's latest answer counts once; majority wins.

    An answer from an adjudication project wins outright (as in review.labelstudio.resolve).
    A tie goes to the value given most recently among the tied ones, so the outcome does
    not depend on row order.
    """
    latest: dict[tuple[str, str], Decision] = {}
    for d in decisions:
        key = (d.question, d.annotator)
        prev = latest.get(key)
        if prev is None or (d.annotated_at, d.id) > (prev.annotated_at, prev.id):
            latest[key] = d
    by_question: dict[str, list[Decision]] = defaultdict(list)
    for (question, _), d in latest.items():
        by_question[question].append(d)
    out: dict[str, Any] = {}
    for question, ds in by_question.items():
        adjudicated = [d for d in ds if d.adjudication]
        if adjudicated:
            ds = adjudicated
        votes = Counter(d.vote for d in ds)
        top = max(votes.values())
        tied = {v for v, n in votes.items() if n == top}
        newest = max((d for d in ds if d.vote in tied), key=lambda d: (d.annotated_at, d.id))
        out[question] = list(newest.value) if isinstance(newest.value, tuple) else newest.value
    return out


# --------------------------------------------------------------------------- per paper

@dataclass
class CodeInput:
    url: str
    official: bool | None
    code_rouge_prelim: bool | None
    scanned: bool
    packages: list[str]
    anti_features: list[str]
    human: dict[str, Any] = field(default_factory=dict)  # resolved C1/C2 for this codebase


@dataclass
class PaperInput:
    """Everything compute needs about one paper, from whichever table holds it."""

    paper_id: int
    label: dict[str, Any] | None = None  # automated PaperLabel columns
    human: dict[str, Any] = field(default_factory=dict)  # resolved paper-level decisions
    codes: list[CodeInput] = field(default_factory=list)


def _counts(label: str, settings: ComputeSettings) -> bool:
    if label == UNKNOWN_PYROUGE:
        return settings.unknown_pyrouge_counts
    if label == GITHUB_ROUGE:
        return settings.github_rouge_counts
    return True


def _dealias(names: Iterable[str], catalog: Catalog) -> list[str]:
    return sorted({catalog.canonical(n) for n in names if n and n.strip()})


def automated_code_rouge(code: CodeInput, catalog: Catalog) -> bool | None:
    """Proposal for C2 from a scan: exactly one package, clearly used, no anti-features."""
    if not code.scanned:
        return None
    if code.code_rouge_prelim is False:
        return False
    return len(_dealias(code.packages, catalog)) == 1 and not code.anti_features


def compute_paper(inp: PaperInput, catalog: Catalog, settings: ComputeSettings) -> dict[str, Any]:
    """The reproducibility row of one paper (a plain dict of `Reproducibility` columns)."""
    sources: dict[str, str] = {}
    label = inp.label

    def pick(question: str, automated: Any) -> Any:
        if question in inp.human and inp.human[question] is not None:
            sources[question] = "human"
            return inp.human[question]
        if automated is not None:
            sources[question] = "automated"
        return automated

    paper_rouge = pick("P0", label["computes"] if label else None)
    params = list(label["params"]) if label else []
    paper_params = pick("P1", bool(label["params"]) if label else None)
    if isinstance(paper_params, list):  # the reviewer's parameter strings
        params, paper_params = list(paper_params), bool(paper_params)
    variants = pick("P2", sorted(set(label["variants"])) if label else None) or []
    protocol = pick("P3", sorted(set(label["protocol"])) if label else None) or []
    paper_packages = _dealias(pick("P4", label["packages"] if label else None) or [], catalog)

    # Code: each codebase resolved on its own (its human C1/C2, else the scan), then
    # paper-level C answers (codebase not named) override the combination.
    codes = sorted(inp.codes, key=lambda c: (c.official is not True, c.url))
    code_urls = [c.url for c in codes]
    code_pkgs: set[str] = set()
    c2_values: list[bool | None] = []
    c1_src: set[str] = set()
    for c in codes:
        if c.human.get("C1") is not None:
            code_pkgs.update(_dealias(c.human["C1"], catalog))
            c1_src.add("human")
        else:
            code_pkgs.update(_dealias(c.packages, catalog))
            if c.scanned:
                c1_src.add("automated")
        if c.human.get("C2") is not None:
            c2_values.append(c.human["C2"])
        else:
            c2_values.append(automated_code_rouge(c, catalog) if settings.automated_code_rouge else None)
    has_code_auto = True if codes else (False if label is not None else None)
    has_code = pick("C0", has_code_auto)
    if inp.human.get("C1") is not None:
        code_packages = _dealias(inp.human["C1"], catalog)
        sources["C1"] = "human"
    else:
        code_packages = sorted(code_pkgs)
        if c1_src:
            sources["C1"] = c1_src.pop() if len(c1_src) == 1 else "mixed"
    if inp.human.get("C2") is not None:
        code_rouge: bool | None = inp.human["C2"]
        sources["C2"] = "human"
    elif any(v is True for v in c2_values):
        code_rouge = True
    elif c2_values and all(v is False for v in c2_values):
        code_rouge = False
    else:
        code_rouge = None
    if "C2" not in sources and any(v is not None for v in c2_values):
        sources["C2"] = "human" if any(c.human.get("C2") is not None for c in codes) else "automated"
    prelims = [c.code_rouge_prelim if c.code_rouge_prelim is not None else (bool(c.packages) if c.scanned else None)
               for c in codes]
    code_rouge_prelim = True if any(p is True for p in prelims) else (
        False if prelims and all(p is False for p in prelims) else None)

    packages = sorted(set(paper_packages) | set(code_packages))
    counted_paper = [p for p in paper_packages if _counts(p, settings)]
    counted_all = [p for p in packages if _counts(p, settings)]
    errors = [catalog.error(p) for p in counted_all]
    software_error = "true" if any(e is True for e in errors) else (
        "false" if counted_all and all(e is False for e in errors) else "unknown")

    if paper_rouge:
        r1 = bool(counted_paper) and paper_params is True
        r2 = any(catalog.no_config(p) for p in counted_paper)
        r3 = code_rouge is True
        reproducible: bool | None = r1 or r2 or r3
        if reproducible:
            category = CATEGORIES[0]
        elif software_error == "true":
            category = CATEGORIES[1]
        elif software_error == "unknown":
            category = CATEGORIES[2]
        else:
            category = CATEGORIES[3]
    else:
        r1 = r2 = r3 = reproducible = None  # type: ignore[assignment]
        category = None
    kinds = set(sources.values())
    label_source = "none" if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    return {
        "paper_id": inp.paper_id, "paper_rouge": paper_rouge,
        "paper_rouge_prelim": label["prelim"] if label else None,
        "paper_params": paper_params, "params": params,
        "protocol": list(protocol), "variants": list(variants), "paper_packages": paper_packages,
        "code_url": code_urls[0] if code_urls else None, "code_urls": code_urls,
        "code_rouge": code_rouge if (codes or has_code is not None or inp.human.get("C2") is not None) else None,
        "code_rouge_prelim": code_rouge_prelim, "code_packages": code_packages, "packages": packages,
        "r1": r1, "r2": r2, "r3": r3, "software_error": software_error, "reproducible": reproducible,
        "category": category, "label_source": label_source, "sources": dict(sorted(sources.items())),
        "has_code": has_code,
    }


# --------------------------------------------------------------------------- the stage

@dataclass
class ComputeResult:
    papers: int = 0
    rouge_papers: int = 0
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
        return (f"{verb} {self.papers} papers: {self.rouge_papers} compute ROUGE, {self.reproducible} reproducible, "
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


def _decisions(session: Session) -> tuple[dict[int, list[Decision]], dict[int, list[Decision]]]:
    by_paper: dict[int, list[Decision]] = defaultdict(list)
    by_code: dict[int, list[Decision]] = defaultdict(list)
    adjudication = set(session.scalars(select(HumanProject.origin).where(HumanProject.purpose == "adjudication")))
    rows = session.execute(select(HumanDecision.id, HumanDecision.paper_id, HumanDecision.codebase_id,
                                  HumanDecision.question, HumanDecision.answer, HumanDecision.annotator,
                                  HumanDecision.annotated_at, HumanDecision.origin)
                           .where(HumanDecision.deleted.is_(False)))
    for did, pid, cid, question, answer, annotator, at, origin in rows:
        value = parse_answer(question, answer)
        if value is None:
            if question in BOOL_QUESTIONS + LIST_QUESTIONS:
                log.warning("decision %s (%s by %s): answer %r not understood; ignored", did, question, annotator, answer)
            continue
        d = Decision(question, annotator, at, did, tuple(value) if isinstance(value, list) else value,
                     adjudication=origin in adjudication)
        if cid is not None:
            by_code[cid].append(d)
        elif pid is not None:
            by_paper[pid].append(d)
    return by_paper, by_code


def gather_inputs(session: Session, settings: ComputeSettings,
                  configured: tuple[str, str] | None = None) -> tuple[list[PaperInput], RuleSet | None]:
    """Read every paper's inputs with a handful of bulk queries (no per-paper round trips)."""
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
    by_paper, by_code = _decisions(session)
    for pid, ds in by_paper.items():
        if pid in inputs:
            inputs[pid].human = resolve_decisions(ds)
    rows = session.execute(select(Codebase.id, Codebase.paper_id, Codebase.url, Codebase.official,
                                  Codebase.code_rouge_prelim, Codebase.scan_outcome, Codebase.packages,
                                  Codebase.anti_features))
    for cid, pid, url, official, prelim, scan_outcome, packages, anti in rows:
        if pid not in inputs:
            continue
        inputs[pid].codes.append(CodeInput(url=url, official=official, code_rouge_prelim=prelim,
                                           scanned=scan_outcome == "ok", packages=list(packages or []),
                                           anti_features=list(anti or []),
                                           human=resolve_decisions(by_code.get(cid, []))))
    return list(inputs.values()), rule_set


ROW_COLUMNS = [c.name for c in Reproducibility.__table__.columns if c.name not in ("id", "computed_at")]


def run_compute(db: Database, settings: Settings, *, dry_run: bool = False, force: bool = False) -> ComputeResult:
    """Recompute every paper's labels and replace the `reproducibility` table at once.

    When the result equals what is stored (same rows, same digest), the stored rows are
    kept, so their `run_id` still names the run that made them and a following export is
    byte-identical to the previous one. `force` rewrites them anyway.
    """
    catalog = load_catalog(settings.compute.packages, settings)
    result = ComputeResult(dry_run=dry_run, packages_sha256=catalog.sha256)
    arguments = {"dry_run": dry_run, **settings.compute.model_dump()}
    with record_run(db, "compute", arguments) as run:
        with db.session() as s:
            inputs, rule_set = gather_inputs(s, settings.compute, configured_rules(settings))
        if rule_set is not None:
            result.rule_set = f"{rule_set.name}@{rule_set.sha256[:12]}"
            run.rules_sha256 = rule_set.sha256
        run.signature.update({"rules": rule_set.name if rule_set else None,
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
        result.rouge_papers = sum(1 for r in rows if r["paper_rouge"])
        result.reproducible = sum(1 for r in rows if r["reproducible"])
        result.software_error = sum(1 for r in rows if r["paper_rouge"] and r["software_error"] == "true")
        result.by_source = dict(sorted(by_source.items()))
        result.unknown_packages = sorted(unknown)
        for name in result.unknown_packages:
            log.warning("package %r is not in the catalog %s: its correctness counts as unknown", name, catalog.path)
        digest = rows_digest(rows)
        run.signature.update({"rows_sha256": digest[:16]})
        if not dry_run:
            previous = _current_digest(db)
            if previous is not None and previous == (digest[:16], len(rows)) and not force:
                result.unchanged = True  # same rows as stored: keep them (and the run they point to)
            else:
                write_rows(db, rows)
        run.count("papers", result.papers)
        run.count("rouge_papers", result.rouge_papers)
        run.count("reproducible", result.reproducible)
        run.count("software_error", result.software_error)
        for k, v in result.by_source.items():
            run.count(f"source_{k}", v)
        run.summary = result.summary()
        result.run_id = run.id
    result.signature = run.signature.format()
    return result


def rows_digest(rows: Sequence[dict[str, Any]]) -> str:
    """A hash of the computed rows (run ids aside): equal digests mean nothing changed."""
    h = hashlib.sha256()
    keys = sorted(k for k in (rows[0] if rows else {}) if k != "run_id")
    for row in rows:
        h.update(repr([row[k] for k in keys]).encode())  # values are str/bool/int/None/list/dict: repr is stable
    return h.hexdigest()


def _current_digest(db: Database) -> tuple[str, int] | None:
    """The digest recorded by the run that wrote the stored rows, and how many rows there are."""
    with db.session() as s:
        run_id = s.scalar(select(Reproducibility.run_id).limit(1))
        count = s.scalar(select(func.count()).select_from(Reproducibility)) or 0
        if run_id is None:
            return None
        run = s.get(Run, run_id)
        digest = (run.signature or {}).get("rows_sha256") if run else None
    return (digest, count) if digest else None


def json_text(column: Any) -> Any:
    """A JSON column read as its text, so bulk reads parse only the non-empty values."""
    return cast(column, Text)


def parse_json(text: str | None) -> Any:
    if text is None:
        return None
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


def dump_json(value: Any) -> str:
    if isinstance(value, list) and not value:
        return "[]"
    return json.dumps(value, ensure_ascii=False)


class _JsonText(TypeDecorator):
    """A JSON parameter already serialized by us: bound as is (PostgreSQL still casts to json)."""

    impl = JSON
    cache_ok = True

    def bind_processor(self, dialect: Any) -> None:
        return None


def write_rows(db: Database, rows: Sequence[dict[str, Any]]) -> None:
    """Replace the table in one transaction: readers see the old rows or the new, never half.

    JSON values are serialized here (empty lists for free) and bound as plain text: per-value
    type processing was most of the time on 100,000 papers.
    """
    table = Reproducibility.__table__
    json_cols = {c.name for c in table.columns if isinstance(c.type, JSON)}
    names = ROW_COLUMNS + ["computed_at"]
    binds = [bindparam(n, type_=DateTime(timezone=True)) if n == "computed_at" else bindparam(n, type_=_JsonText())
             if n in json_cols else bindparam(n) for n in names]
    stmt = text(f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"
                ).bindparams(*binds)
    now = utcnow()
    with db.session() as s:
        s.execute(delete(table))
        for i in range(0, len(rows), 5000):
            chunk = [{**{n: (dump_json(r[n]) if n in json_cols else r[n]) for n in ROW_COLUMNS}, "computed_at": now}
                     for r in rows[i:i + 5000]]
            s.execute(stmt, chunk)
