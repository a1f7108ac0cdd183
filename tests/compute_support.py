"""Corpora with known truth for the compute and export tests (and the benchmark).

`known_corpus` inserts 13 hand-designed papers whose every label is worked out by hand in
`EXPECTED` below; `bulk_corpus` inserts many generated papers quickly for scale tests.
Rows go straight into the tables the other stages own, so these tests do not depend on
harvest/label/code/Label Studio being finished.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import insert

from review.db.models import (Codebase, Document, HumanDecision, Paper, PaperLabel, PaperText, RuleSet,
                              SourceRecord)
from review.db.session import Database

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
RULES_SHA = "a" * 64


def _label(prelim=True, computes=True, params=(), protocol=(), variants=(), packages=()) -> dict[str, Any]:
    return {"prelim": prelim, "computes": computes, "params": list(params), "protocol": list(protocol),
            "variants": list(variants), "packages": list(packages)}


# ident: (year, label or None, document outcome/reason, text outcome/reason)
PAPERS: dict[str, dict[str, Any]] = {
    "p01": {"year": 2019, "label": _label(params=[" -c 95 -n 2"], packages=["ROUGE-1.5.5"], protocol=["stemming"])},
    "p02": {"year": 2019, "label": _label(packages=["MS/rouge"], variants=["f-score"])},
    "p03": {"year": 2020, "label": _label(packages=["rouge-score"])},
    "p04": {"year": 2020, "label": _label(params=[" -n 2 -m"], packages=["unknown pyrouge"])},
    "p05": {"year": 2020, "label": _label()},
    "p06": {"year": 2021, "label": _label(packages=["PT/rouge"])},
    "p07": {"year": 2021, "label": _label(computes=False)},
    "p08": {"year": 2021, "label": _label(prelim=False, computes=False)},
    "p09": {"year": 2021, "label": None, "text": ("failed", "corrupt")},
    "p10": {"year": 2022, "label": None, "document": ("failed", "http_404"), "text": None},
    "p11": {"year": 2022, "label": _label(packages=["ROUGE-1.5.5"], protocol=["bootstrapping", "stemming"])},
    "p12": {"year": 2022, "label": _label(packages=["github rouge", "PC/pyrouge"])},
    "p13": {"year": 2022, "label": _label(), "source": "dblp"},
}

# The hand-worked answers (see the module docstring of tests/test_compute.py).
EXPECTED = {
    "p01": dict(paper_metric=True, r1=True, r2=False, r3=False, reproducible=True, software_error="false",
                category="reproducible", label_source="automated"),
    "p02": dict(paper_metric=True, r1=False, r2=True, r3=False, reproducible=True, software_error="true",
                category="reproducible"),
    "p03": dict(paper_metric=True, r1=False, r2=False, r3=False, reproducible=False, software_error="true",
                category="incorrect package", paper_packages=["GL/rougescore"]),
    "p04": dict(paper_metric=True, r1=True, r2=False, r3=False, reproducible=True, software_error="unknown",
                category="reproducible"),
    "p05": dict(paper_metric=True, r1=False, r2=False, r3=False, reproducible=False, software_error="true",
                category="incorrect package", code_packages=["GL/rougescore"], code_metric=False,
                label_source="mixed"),
    "p06": dict(paper_metric=False, reproducible=None, category=None),
    "p07": dict(paper_metric=False, reproducible=None),
    "p08": dict(paper_metric=False, paper_metric_prelim=False, reproducible=None),
    "p09": dict(paper_metric=None, reproducible=None, label_source="none"),
    "p10": dict(paper_metric=None, reproducible=None),
    "p11": dict(paper_metric=True, paper_params=True, r1=True, r2=False, r3=False, reproducible=True,
                software_error="true", category="reproducible",
                packages=["GL/rougescore", "ROUGE-1.5.5", "unknown pyrouge"]),
    "p12": dict(paper_metric=True, reproducible=False, software_error="unknown", category="unknown package"),
    "p13": dict(paper_metric=True, reproducible=False, software_error="false",
                category="correct package, not reproducible", paper_packages=["DD/sacrerouge"], label_source="mixed"),
}

# Figure 1 by hand: 8 ROUGE papers (p01-p05, p11-p13).
EXPECTED_STATS = {
    "rouge_papers": (8, None),
    "reproducible": (4, 8),
    "release_code": (2, 8),
    "code_with_rouge": (2, 8),
    "bootstrapping": (1, 8),
    "list_parameters": (3, 8),
    "cite_package": (7, 8),
    "software_error_share": (4, 8),
    "incorrect_software": (4, 8),
    "r1": (3, 8),
    "r2": (1, 8),
    "r3": (0, 8),
}
EXPECTED_FIG3 = {  # year -> (reproducible, incorrect package, unknown package, correct package not reproducible)
    2019: (2, 0, 0, 0), 2020: (1, 2, 0, 0), 2022: (1, 0, 1, 1),
}
EXPECTED_PRISMA = {
    "records_acl": 12, "records_dblp": 2, "records": 14, "duplicates_removed": 1, "papers": 13,
    "no_pdf": 1, "no_text": 1, "full_text": 11, "not_labeled": 0, "excluded_prelim": 1, "screened": 10,
    "excluded_screening": 2, "included": 8,
}


def decision(paper_id=None, codebase_id=None, question="P0", answer=True, annotator="ann1", minutes=0,
             deleted=False, ref=None) -> dict[str, Any]:
    return {"paper_id": paper_id, "codebase_id": codebase_id, "question": question, "answer": answer,
            "annotator": annotator, "annotated_at": T0 + timedelta(minutes=minutes), "origin": "file:test",
            "task_ref": None, "annotation_ref": ref or f"{annotator}-{question}-{paper_id}-{codebase_id}-{minutes}",
            "deleted": deleted}


def known_corpus(db: Database) -> dict[str, int]:
    """Insert the 13 known papers; returns ident -> paper id."""
    ids: dict[str, int] = {}
    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256=RULES_SHA, path="patterns/rouge/rouge.toml",
                     content="# test")
        s.add(rs)
        s.flush()
        for ident, spec in PAPERS.items():
            p = Paper(ident=ident, source=spec.get("source", "acl"), title=f"Paper {ident}", authors=["A. Author", "B. Writer"],
                      year=spec["year"], venue="acl", url=f"https://example.org/{ident}",
                      booktitle="Proceedings", month="July")
            p.records.append(SourceRecord(source=spec.get("source", "acl"), source_id=ident, raw={}))
            s.add(p)
            s.flush()
            ids[ident] = p.id
            doc = spec.get("document", ("ok", None))
            s.add(Document(paper_id=p.id, outcome=doc[0], reason=doc[1], sha256=None if doc[1] else ident * 8))
            text = spec.get("text", ("ok", None))
            if text is not None:
                s.add(PaperText(paper_id=p.id, outcome=text[0], reason=text[1],
                                content=None if text[1] else "ROUGE text"))
            if spec["label"] is not None:
                s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, **spec["label"]))
        # p01 was also found in DBLP: one paper, two records.
        s.add(SourceRecord(paper_id=ids["p01"], source="dblp", source_id="conf/acl/p01", raw={},
                           duplicate_reason="doi"))
        c5 = Codebase(paper_id=ids["p05"], url="https://github.com/x/p05", scan_outcome="ok",
                      packages=["rouge_score"], anti_features=[])
        c11 = Codebase(paper_id=ids["p11"], url="https://github.com/x/p11", scan_outcome="ok", code_metric_prelim=True,
                       packages=["pyrouge", "rouge_score"], anti_features=["several ROUGE packages"])
        s.add_all([c5, c11])
        s.flush()
        ids["code_p05"], ids["code_p11"] = c5.id, c11.id
        rows = [
            # p05's codebase: two of three reviewers say the evaluation is not complete.
            decision(codebase_id=c5.id, question="C2", answer="No", annotator="a"),
            decision(codebase_id=c5.id, question="C2", answer={"choices": ["No"]}, annotator="b"),
            decision(codebase_id=c5.id, question="C2", answer="Yes", annotator="c", minutes=5),
            # p06: reviewer a first said yes, then changed to no; b says no; a deleted yes is ignored.
            decision(paper_id=ids["p06"], question="P0", answer=True, annotator="a", minutes=0),
            decision(paper_id=ids["p06"], question="P0", answer=False, annotator="a", minutes=10),
            decision(paper_id=ids["p06"], question="P0", answer=False, annotator="b", minutes=1),
            decision(paper_id=ids["p06"], question="P0", answer=True, annotator="d", minutes=20, deleted=True),
            # p03: a withdrawn decision must not count.
            decision(paper_id=ids["p03"], question="P0", answer=False, annotator="a", deleted=True),
            # p11: a human says parameters are listed (the rules missed them).
            decision(paper_id=ids["p11"], question="P1", answer=["Yes"], annotator="a"),
            # p13: a human found the package the rules missed.
            decision(paper_id=ids["p13"], question="P4", answer=["sacrerouge"], annotator="a"),
        ]
        s.execute(insert(HumanDecision), rows)
    return ids


def bulk_corpus(db: Database, n: int, seed: int = 7) -> None:
    """`n` generated papers with labels, documents, texts, some codebases and decisions."""
    rng = random.Random(seed)
    pkgs = ["ROUGE-1.5.5", "MS/rouge", "GL/rougescore", "BZ/pyrouge", "PT/rouge", "unknown pyrouge",
            "github rouge", "rouge-score", "py-rouge", "DD/sacrerouge"]
    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256="b" * 64, content="# bulk")
        s.add(rs)
        s.flush()
        rs_id = rs.id
    chunk = 5000
    for start in range(0, n, chunk):
        papers, records, docs, texts, labels, codes, decisions = [], [], [], [], [], [], []
        for i in range(start, min(n, start + chunk)):
            pid = i + 1
            papers.append({"id": pid, "ident": f"gen-{pid:07d}", "source": "acl", "title": f"Generated {pid}",
                           "authors": ["A. Author"], "venues": [], "pwc_code": [], "year": 2002 + pid % 21,
                           "removed": False, "retracted": False, "created_at": T0, "updated_at": T0})
            records.append({"paper_id": pid, "source": "acl", "source_id": f"gen-{pid}", "raw": {},
                            "harvested_at": T0, "updated_at": T0})
            ok = rng.random() > 0.03
            docs.append({"paper_id": pid, "outcome": "ok" if ok else "failed", "reason": None if ok else "http_404",
                         "attempts": 1, "fetched_at": T0})
            if not ok:
                continue
            texts.append({"paper_id": pid, "outcome": "ok", "extracted_at": T0})
            rouge = rng.random() < 0.1
            chosen = rng.sample(pkgs, rng.randint(0, 2)) if rouge else []
            labels.append({"paper_id": pid, "rule_set_id": rs_id, "prelim": rouge or rng.random() < 0.05,
                           "computes": rouge, "params": [" -n 2 -m"] if rouge and rng.random() < 0.1 else [],
                           "protocol": ["bootstrapping"] if rouge and rng.random() < 0.06 else [],
                           "variants": [], "packages": chosen, "code_urls": [], "extra": {}, "labeled_at": T0})
            if rouge and rng.random() < 0.3:
                codes.append({"id": pid, "paper_id": pid, "url": f"https://github.com/gen/{pid}", "scan_outcome": "ok",
                              "packages": rng.sample(pkgs[:5], rng.randint(0, 2)), "anti_features": [],
                              "created_at": T0})
                if rng.random() < 0.5:
                    decisions.append(decision(codebase_id=pid, question="C2", answer=rng.random() < 0.5,
                                              annotator="gen", ref=f"gen-c2-{pid}"))
            if rouge and rng.random() < 0.2:
                decisions.append(decision(paper_id=pid, question="P0", answer=rng.random() < 0.9, annotator="gen",
                                          ref=f"gen-p0-{pid}"))
        with db.session() as s:
            for model, rows in ((Paper, papers), (SourceRecord, records), (Document, docs), (PaperText, texts),
                                (PaperLabel, labels), (Codebase, codes), (HumanDecision, decisions)):
                if rows:
                    s.execute(insert(model.__table__), rows)


def add_paper(db: Database, ident: str, label: dict[str, Any] | None = None,
              codes: list[dict[str, Any]] | None = None) -> tuple[int, list[int]]:
    """One more ROUGE paper (labelled under the known corpus's rule set) with its codebases."""
    from sqlalchemy import select

    with db.session() as s:
        rs = s.scalar(select(RuleSet).where(RuleSet.sha256 == RULES_SHA))
        p = Paper(ident=ident, source="acl", title=f"Paper {ident}", authors=["A. Author"], year=2021, venue="acl")
        s.add(p)
        s.flush()
        s.add(Document(paper_id=p.id, outcome="ok", sha256=ident * 8))
        s.add(PaperText(paper_id=p.id, outcome="ok", content="ROUGE text"))
        s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, **(label or _label())))
        cids = []
        for n, spec in enumerate(codes or []):
            cb = Codebase(paper_id=p.id, url=f"https://github.com/x/{ident}-{n}", scan_outcome="ok", **spec)
            s.add(cb)
            s.flush()
            cids.append(cb.id)
        return p.id, cids


def adjudication_source(db: Database, origin: str = "file:adjudication", kind: str = "papers") -> str:
    """Register `origin` as an adjudication source (what queue --select disputed creates)."""
    from review.db.models import HumanProject

    with db.session() as s:
        s.add(HumanProject(origin=origin, title="adjudication", kind=kind, purpose="adjudication"))
    return origin
