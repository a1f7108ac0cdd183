"""R1, R2, R3, software_error and reproducible for one paper (Rogue Scores §4).

For every paper the inputs are the answers to the review questions (P0-P4 about the paper,
C0-C2 about its code): a human answer where one exists, otherwise the automated label,
and the row says which (`sources` per question, `label_source` overall). Package names
are mapped to the catalog so aliases collapse and software_error is true / false / unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from review.compute.catalog import Catalog, counts_as_package
from review.compute.categories import category
from review.settings import ComputeSettings


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
    counted_paper = [p for p in paper_packages if counts_as_package(p, settings)]
    counted_all = [p for p in packages if counts_as_package(p, settings)]
    errors = [catalog.error(p) for p in counted_all]
    software_error = "true" if any(e is True for e in errors) else (
        "false" if counted_all and all(e is False for e in errors) else "unknown")

    if paper_rouge:
        r1 = bool(counted_paper) and paper_params is True
        r2 = any(catalog.no_config(p) for p in counted_paper)
        r3 = code_rouge is True
        reproducible: bool | None = r1 or r2 or r3
        series: str | None = category(reproducible, software_error)
    else:
        r1 = r2 = r3 = reproducible = None  # type: ignore[assignment]
        series = None
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
        "category": series, "label_source": label_source, "sources": dict(sorted(sources.items())),
        "has_code": has_code,
    }
