"""A generated corpus with known truth: every exported statistic equals an independent count.

The generator draws each paper's situation (computes ROUGE or not, packages written under
any alias, parameters, bootstrapping, a codebase and what its scan found, reviewers'
votes on P0 and C2) and keeps the truth; the oracle below derives the expected labels
from that truth with the spec's rules written out plainly, without calling review.compute.
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import insert

from review.compute import run_compute
from review.db.models import Codebase, Document, HumanDecision, Paper, PaperLabel, PaperText, RuleSet, SourceRecord
from review.export import run_export
from review.settings import Settings
from tests.compute_support import T0

# (as written by the rules or a reviewer, canonical label, software error: True/False/None=unknown)
NAMES = [("ROUGE-1.5.5", "ROUGE-1.5.5", False), ("rouge 1.5.5", "ROUGE-1.5.5", False),
         ("MS/rouge", "MS/rouge", True), ("nlg-eval", "MS/rouge", True), ("GL/seq2seq", "GL/seq2seq", True),
         ("rouge-score", "GL/rougescore", True), ("BZ/pyrouge", "BZ/pyrouge", True), ("py-rouge", "DI/pyrouge", True),
         ("DD/sacrerouge", "DD/sacrerouge", False), ("PC/pyrouge", "PC/pyrouge", None),
         ("github rouge", "github rouge", None), ("pyrouge", "unknown pyrouge", None)]
NO_CONFIG = {"MS/rouge", "GL/seq2seq"}


def generate(db, n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    truth = []
    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", sha256="c" * 64, content="#")
        s.add(rs)
        s.flush()
        for i in range(n):
            t: dict = {"ident": f"g{i:04d}", "year": rng.choice([2019, 2020, 2021])}
            p = Paper(ident=t["ident"], source="acl", title=t["ident"], year=t["year"])
            p.records.append(SourceRecord(source="acl", source_id=t["ident"]))
            s.add(p)
            s.flush()
            t["id"] = p.id
            t["text"] = rng.random() > 0.05
            s.add(Document(paper_id=p.id, outcome="ok"))
            s.add(PaperText(paper_id=p.id, outcome="ok" if t["text"] else "failed", reason=None if t["text"] else "corrupt"))
            t["computes"] = t["text"] and rng.random() < 0.6
            t["paper_names"] = rng.sample(NAMES, rng.randint(0, 2)) if t["computes"] else []
            t["params"] = t["computes"] and rng.random() < 0.3
            t["boot"] = t["computes"] and rng.random() < 0.2
            if t["text"]:
                s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, prelim=t["computes"] or rng.random() < 0.3,
                                 computes=t["computes"], params=[" -n 2 -m"] if t["params"] else [],
                                 protocol=["bootstrapping"] if t["boot"] else [], variants=[],
                                 packages=[w for w, _, _ in t["paper_names"]]))
            t["p0_votes"] = [rng.random() < 0.7 for _ in range(rng.choice([0, 0, 1, 3]))] if t["text"] else []
            for k, v in enumerate(t["p0_votes"]):
                s.add(HumanDecision(paper_id=p.id, question="P0", answer="yes" if v else "no", annotator=f"r{k}",
                                    annotated_at=T0 + timedelta(minutes=k), origin="file:gen",
                                    annotation_ref=f"{i}-p0-{k}"))
            t["code"] = t["text"] and rng.random() < 0.4
            t["code_names"], t["anti"], t["verdict"], t["c2_votes"] = [], False, None, []
            if t["code"]:
                t["code_names"] = rng.sample(NAMES, rng.randint(0, 2))
                t["anti"] = rng.random() < 0.3
                t["verdict"] = rng.choice([True, False, None])  # the scan's C2 (None: it could not tell)
                cb = Codebase(paper_id=p.id, url=f"https://github.com/g/{i}", scan_outcome="ok",
                              packages=[w for w, _, _ in t["code_names"]],
                              anti_features=["several ROUGE packages"] if t["anti"] else [],
                              eval_reproducible=t["verdict"])
                s.add(cb)
                s.flush()
                t["c2_votes"] = [rng.random() < 0.5 for _ in range(rng.choice([0, 1, 3]))]
                for k, v in enumerate(t["c2_votes"]):
                    s.add(HumanDecision(codebase_id=cb.id, question="C2", answer=v, annotator=f"r{k}",
                                        annotated_at=T0 + timedelta(minutes=k), origin="file:gen",
                                        annotation_ref=f"{i}-c2-{k}"))
            truth.append(t)
    return truth


def majority(votes: list[bool]) -> bool:
    yes = sum(votes)
    no = len(votes) - yes
    if yes != no:
        return yes > no
    return votes[-1]  # a tie goes to the newest vote (the last one here)


def oracle(t: dict) -> dict:
    rouge = majority(t["p0_votes"]) if t["p0_votes"] else (t["computes"] if t["text"] else None)
    paper = {c for _, c, _ in t["paper_names"]}
    code = {c for _, c, _ in t["code_names"]}
    errors = {c: e for _, c, e in NAMES}
    everything = paper | code
    sw = True if any(errors[c] is True for c in everything) else (
        False if everything and all(errors[c] is False for c in everything) else None)
    if t["c2_votes"]:
        c2 = majority(t["c2_votes"])
    elif t["code"]:
        c2 = t["verdict"]
    else:
        c2 = None
    r1 = bool(paper) and t["params"]
    r2 = bool(paper & NO_CONFIG)
    r3 = c2 is True
    return {"rouge": rouge, "paper": paper, "everything": everything, "sw": sw, "r1": r1, "r2": r2, "r3": r3,
            "reproducible": (r1 or r2 or r3) if rouge else None, "code": t["code"], "params": t["params"],
            "boot": t["boot"], "code_prelim": t["code"] and bool(t["code_names"])}


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_corpus_statistics_equal_the_oracle(db, tmp_path, seed):
    truth = generate(db, 150, seed)
    run_compute(db, Settings())
    out = tmp_path / "out"
    run_export(db, Settings(), out_dir=out)
    expected = {t["ident"]: oracle(t) for t in truth}
    with (out / "dataset.csv").open() as fh:
        rows = {r["paper_ident"]: r for r in csv.DictReader(fh)}
    as_bool = {"true": True, "false": False, "": None}
    for ident, e in expected.items():
        r = rows[ident]
        assert as_bool[r["paper_rouge"]] == e["rouge"], ident
        assert as_bool[r["software_error"]] == e["sw"], ident
        assert as_bool[r["reproducible"]] == e["reproducible"], ident
        if e["rouge"]:
            assert (as_bool[r["r1"]], as_bool[r["r2"]], as_bool[r["r3"]]) == (e["r1"], e["r2"], e["r3"]), ident

    rouge = [e for e in expected.values() if e["rouge"]]
    n = len(rouge)
    citing = [e for e in rouge if e["everything"]]
    want = {
        "rouge_papers": (n, None),
        "reproducible": (sum(1 for e in rouge if e["reproducible"]), n),
        "release_code": (sum(1 for e in rouge if e["code"]), n),
        "code_with_rouge": (sum(1 for e in rouge if e["code_prelim"]), n),
        "bootstrapping": (sum(1 for e in rouge if e["boot"]), n),
        "list_parameters": (sum(1 for e in rouge if e["params"]), n),
        "cite_package": (sum(1 for e in rouge if e["paper"]), n),
        "software_error_share": (sum(1 for e in citing if e["sw"]), len(citing)),
        "incorrect_software": (sum(1 for e in rouge if e["sw"]), n),
        "r1": (sum(1 for e in rouge if e["r1"]), n),
        "r2": (sum(1 for e in rouge if e["r2"]), n),
        "r3": (sum(1 for e in rouge if e["r3"]), n),
    }
    stats = {s["name"]: s for s in json.loads((out / "statistics.json").read_text())}
    for name, (count, denominator) in want.items():
        assert (stats[name]["count"], stats[name]["denominator"]) == (count, denominator), name
    with (out / "packages.csv").open() as fh:
        packages = {r["package"]: int(r["papers"]) for r in csv.DictReader(fh)}
    cited = Counter(c for e in rouge for c in e["everything"])
    assert packages == dict(cited)
    with (out / "prisma.csv").open() as fh:
        flow = {r["box"]: int(r["count"]) for r in csv.DictReader(fh)}
    assert flow["no text extracted"] == sum(1 for t in truth if not t["text"])
