"""R1, R2, R3, software_error and reproducible for one paper (Rogue Scores §4).

For every paper the inputs are the answers to the review questions (P0-P4 about the paper,
C0-C2 about each of its codebases): the resolved human answer where one exists, otherwise
the automated label, and the row says which (`sources` per question: human, automated,
mixed, or disputed when reviewers left it for adjudication and the automated answer
stands; `label_source` overall, disputed when any question is). Package names are mapped
to the catalog so aliases collapse and software_error is true / false / unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from review.compute.catalog import Catalog, counts_as_package
from review.compute.categories import category
from review.settings import ComputeSettings

HUMAN, AUTOMATED, DISPUTED = "human", "automated", "disputed"


@dataclass
class CodeInput:
    url: str
    official: bool | None
    code_metric_prelim: bool | None
    scanned: bool
    packages: list[str]  # the scan's C1 proposal: the packages that produce the reported scores
    anti_features: list[str]
    eval_reproducible: bool | None = None  # the scan's C2 proposal (None: unknown, e.g. truncated)
    human: dict[str, Any] = field(default_factory=dict)  # resolved C0/C1/C2 of this codebase
    disputed: set[str] = field(default_factory=set)  # its questions waiting for adjudication


@dataclass
class PaperInput:
    """Everything compute needs about one paper, from whichever table holds it."""

    paper_id: int
    label: dict[str, Any] | None = None  # automated PaperLabel columns
    human: dict[str, Any] = field(default_factory=dict)  # resolved paper-level answers
    disputed: set[str] = field(default_factory=set)  # paper questions waiting for adjudication
    codes: list[CodeInput] = field(default_factory=list)


def combine(kinds: set[str]) -> str | None:
    """One source for answers that rest on several: a dispute shows, else mixed."""
    if not kinds:
        return None
    if DISPUTED in kinds:
        return DISPUTED
    return next(iter(kinds)) if len(kinds) == 1 else "mixed"


def _dealias(names: Iterable[str], catalog: Catalog) -> list[str]:
    return sorted({catalog.canonical(n) for n in names if n and n.strip()})


def automated_code_metric(code: CodeInput) -> bool | None:
    """Proposal for C2: the scan's verdict (its four conditions, CODE_LABELS.md).

    A repository whose search found no mention of the metric computes none of it: false.
    A scan that could not decide (truncated, or made before the verdict existed: rescan)
    stays unknown, never a guess.
    """
    if not code.scanned:
        return None
    if code.code_metric_prelim is False:
        return False
    return code.eval_reproducible


def compute_paper(inp: PaperInput, catalog: Catalog, settings: ComputeSettings) -> dict[str, Any]:
    """The reproducibility row of one paper (a plain dict of `Reproducibility` columns)."""
    sources: dict[str, str] = {}
    label = inp.label

    def pick(question: str, automated: Any) -> Any:
        if inp.human.get(question) is not None:
            sources[question] = HUMAN
            return inp.human[question]
        if question in inp.disputed:
            sources[question] = DISPUTED
        elif automated is not None:
            sources[question] = AUTOMATED
        return automated

    paper_metric = pick("P0", label["computes"] if label else None)
    params = list(label["params"]) if label else []
    paper_params = pick("P1", bool(label["params"]) if label else None)
    if isinstance(paper_params, list):  # the reviewers' parameter strings
        params, paper_params = list(paper_params), bool(paper_params)
    variants = pick("P2", sorted(set(label["variants"])) if label else None) or []
    protocol = pick("P3", sorted(set(label["protocol"])) if label else None) or []
    paper_packages = _dealias(pick("P4", label["packages"] if label else None) or [], catalog)

    code = _code(inp, label is not None, catalog, settings, sources)
    packages = sorted(set(paper_packages) | set(code["code_packages"]))
    counted_paper = [p for p in paper_packages if counts_as_package(p, settings)]
    counted_all = [p for p in packages if counts_as_package(p, settings)]
    errors = [catalog.error(p) for p in counted_all]
    software_error = "true" if any(e is True for e in errors) else (
        "false" if counted_all and all(e is False for e in errors) else "unknown")

    if paper_metric:
        r1 = bool(counted_paper) and paper_params is True
        r2 = any(catalog.no_config(p) for p in counted_paper)
        r3 = code["code_metric"] is True
        reproducible: bool | None = r1 or r2 or r3
        series: str | None = category(reproducible, software_error)
    else:
        r1 = r2 = r3 = reproducible = None  # type: ignore[assignment]
        series = None
    return {
        "paper_id": inp.paper_id, "paper_metric": paper_metric,
        "paper_metric_prelim": label["prelim"] if label else None,
        "paper_params": paper_params, "params": params,
        "protocol": list(protocol), "variants": list(variants), "paper_packages": paper_packages,
        "code_url": code["code_urls"][0] if code["code_urls"] else None, "code_urls": code["code_urls"],
        "code_metric": code["code_metric"], "code_metric_prelim": code["code_metric_prelim"],
        "code_packages": code["code_packages"], "packages": packages,
        "r1": r1, "r2": r2, "r3": r3, "software_error": software_error, "reproducible": reproducible,
        "category": series, "label_source": combine(set(sources.values())) or "none",
        "sources": dict(sorted(sources.items())), "has_code": code["has_code"],
    }


def _code(inp: PaperInput, labelled: bool, catalog: Catalog, settings: ComputeSettings,
          sources: dict[str, str]) -> dict[str, Any]:
    """C0-C2 of the paper: each codebase with its own answers (human, else the scan), a
    codebase reviewers say is not the paper's code (C0 = no) left out, then paper-level
    answers (codebase not named) over the combination."""
    codes = sorted(inp.codes, key=lambda c: (c.official is not True, c.url))
    c0_src: set[str] = set()
    kept = []
    for c in codes:
        c0_src.add(_source(c, "C0", True))
        if c.human.get("C0") is not False:
            kept.append(c)
    code_pkgs: set[str] = set()
    c1_src: set[str] = set()
    c2_values: list[bool | None] = []
    c2_src: set[str] = set()
    for c in kept:
        if c.human.get("C1") is not None:
            code_pkgs.update(_dealias(c.human["C1"], catalog))
        else:
            code_pkgs.update(_dealias(c.packages, catalog))
        if src := _source(c, "C1", c.scanned):
            c1_src.add(src)
        if c.human.get("C2") is not None:
            value = c.human["C2"]
        else:
            value = automated_code_metric(c) if settings.automated_code_metric else None
        c2_values.append(value)
        if src := _source(c, "C2", value is not None):
            c2_src.add(src)

    if inp.human.get("C0") is not None:
        has_code: bool | None = inp.human["C0"]
        c0_src = {HUMAN}
    else:
        has_code = True if kept else (False if codes or labelled else None)
        if not codes and has_code is not None:
            c0_src = {AUTOMATED}
        if "C0" in inp.disputed:
            c0_src.add(DISPUTED)
    if inp.human.get("C1") is not None:
        code_packages = _dealias(inp.human["C1"], catalog)
        c1_src = {HUMAN}
    else:
        code_packages = sorted(code_pkgs)
    if inp.human.get("C2") is not None:
        code_metric: bool | None = inp.human["C2"]
        c2_src = {HUMAN}
    elif any(v is True for v in c2_values):
        code_metric = True
    elif c2_values and all(v is False for v in c2_values):
        code_metric = False
    else:
        code_metric = None
    for question, kinds in (("C0", c0_src), ("C1", c1_src), ("C2", c2_src)):
        if source := combine(kinds):
            sources[question] = source
    prelims = [c.code_metric_prelim if c.code_metric_prelim is not None else (bool(c.packages) if c.scanned else None)
               for c in kept]
    code_metric_prelim = True if any(p is True for p in prelims) else (
        False if prelims and all(p is False for p in prelims) else None)
    return {"has_code": has_code, "code_urls": [c.url for c in kept], "code_packages": code_packages,
            "code_metric": code_metric if (kept or has_code is not None or inp.human.get("C2") is not None) else None,
            "code_metric_prelim": code_metric_prelim}


def _source(code: CodeInput, question: str, automated: bool) -> str | None:
    """Where one codebase's answer to `question` comes from (None: nowhere)."""
    if code.human.get(question) is not None:
        return HUMAN
    if question in code.disputed:
        return DISPUTED
    return AUTOMATED if automated else None
