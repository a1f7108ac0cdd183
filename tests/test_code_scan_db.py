"""`run_scan` over linked codebases: clones from local git repositories, results in the database."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from code_support import add_paper, main_script, make_repo
from review.codebases.runner import run_scan
from review.db.models import Codebase, CodeFinding, PaperLabel, Run, RuleSet
from review.settings import Settings


def _setup(db, tmp_path):  # type: ignore[no-untyped-def]
    remote = tmp_path / "remote"
    make_repo(remote / "alice" / "summ.git", {
        "requirements.txt": "rouge-score\npycocoevalcap\npyrouge\n",
        "eval.py": main_script("from rouge_score import rouge_scorer", "from metrics.rouge_utils import f1",
                               "# import pyrouge", "print(rouge_scorer.RougeScorer(['rouge1']).score(a, b))"),
        "notebooks/demo.ipynb": json.dumps({"nbformat": 4, "cells": [
            {"cell_type": "code", "source": ["from pycocoevalcap.rouge.rouge import Rouge\n",
                                             "print(Rouge().compute_score(g, r))\n"], "metadata": {}}]}),
    })
    make_repo(remote / "bob" / "new-name.git", {"score.sh": "files2rouge ref.txt hyp.txt\n"})
    pid = add_paper(db, "P19-1212", "A paper")
    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256="0" * 64, path="patterns/rouge.toml", content="")
        s.add(rs)
        s.flush()
        s.add(PaperLabel(paper_id=pid, rule_set_id=rs.id, prelim=True, computes=True, packages=["BZ/pyrouge"]))
        rows = [
            Codebase(paper_id=pid, url="https://github.com/alice/summ", host="github.com", owner="alice", name="summ"),
            Codebase(paper_id=pid, url="https://github.com/bob/old-name", host="github.com", owner="bob", name="old-name",
                     lookup_status="renamed", full_name="bob/new-name"),
            Codebase(paper_id=pid, url="https://github.com/carol/gone", host="github.com", owner="carol", name="gone",
                     lookup_status="deleted"),
            Codebase(paper_id=pid, url="https://github.com/dave/unreachable", host="github.com", owner="dave",
                     name="unreachable"),
        ]
        s.add_all(rows)
        s.flush()
        ids = {cb.name: cb.id for cb in rows}
    settings = Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"})
    return ids, settings, remote


def test_scan_linked_codebases(db, tmp_path):
    ids, settings, remote = _setup(db, tmp_path)
    result = run_scan(db, settings)
    assert result.counts["ok"] == 2 and result.counts["skipped_deleted"] == 1
    assert result.counts["not_found"] + result.counts["clone_failed"] == 1
    with db.session() as s:
        summ = s.get(Codebase, ids["summ"])
        assert summ.packages == ["GL/rougescore", "MS/rouge"] and summ.scan_outcome == "ok"
        assert summ.packages_present == ["ROUGE-1.5.5", "BZ/pyrouge"]
        assert summ.anti_features == ["commented_out_alternative", "missing_module", "package_differs_from_paper",
                                      "several_packages"]
        assert summ.eval_reproducible is False and "condition 3 (nothing_missing) fails" in summ.eval_reproducible_reason
        assert summ.scan_metric_prelim is True and len(summ.scan_commit) == 40
        findings = s.scalars(select(CodeFinding).where(CodeFinding.codebase_id == summ.id)).all()
        rows = {(f.kind, f.label, f.source, f.file, f.role) for f in findings}
        assert ("package", "GL/rougescore", "requirements", "requirements.txt", "declared") in rows
        assert ("package", "MS/rouge", "import", "notebooks/demo.ipynb", "evaluation") in rows
        assert ("package", "BZ/pyrouge", "requirements", "requirements.txt", "declared") in rows
        assert any(f.kind == "anti_feature" and f.label == "missing_module" and f.line == 2 for f in findings)
        differs = next(f for f in findings if f.label == "package_differs_from_paper")
        assert "cites BZ/pyrouge" in differs.reason
        conditions = {f.label: f.role for f in findings if f.kind == "condition"}
        assert conditions == {"C2.1 identifiable": "holds", "C2.2 called": "holds", "C2.3 nothing_missing": "fails",
                              "C2.4 no_conflict": "holds"}
        assert all(f.reason for f in findings if f.kind == "package")
        assert all(f.rules_sha256 and f.run_id == result.run_id for f in findings)
        renamed = s.get(Codebase, ids["old-name"])
        assert renamed.packages == ["ROUGE-1.5.5", "PT/files2rouge"]  # cloned under its new name
        assert renamed.eval_reproducible is False  # files2rouge is named nowhere outside the script
        gone = s.get(Codebase, ids["gone"])
        assert (gone.scan_outcome, gone.scan_reason) == ("failed", "deleted")
        failed = s.get(Codebase, ids["unreachable"])
        assert failed.scan_outcome == "failed" and failed.scan_detail
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.counts["package:GL/rougescore"] == 1 and run.rules_sha256
        assert run.counts["c2:false"] == 2
        n_findings = s.scalar(select(func.count()).select_from(CodeFinding))

    again = run_scan(db, settings)
    assert sum(again.counts.values()) == 0  # nothing left to do

    rescan = run_scan(db, settings, rescan=True)
    assert rescan.counts["ok"] == 2
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(CodeFinding)) == n_findings  # replaced, not doubled

    make_repo(remote / "dave" / "unreachable.git", {"README.md": "pip install pyrouge\n"})
    retry = run_scan(db, settings, retry_failed=True)
    assert retry.counts["ok"] == 1
    with db.session() as s:
        dave = s.get(Codebase, ids["unreachable"])
        assert (dave.packages, dave.packages_present) == ([], ["ROUGE-1.5.5", "BZ/pyrouge"])


def test_cli_scan_queue_exit_code_when_some_fail(cli, tmp_path):
    from review.db import migrate
    from review.db.session import Database

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    migrate.upgrade(db)
    _ids, _settings, remote = _setup(db, tmp_path)
    db.dispose()
    (tmp_path / "review.toml").write_text(f'[code]\ngit_base_url = "file://{remote}"\n')
    code, out, err = cli("--config", str(tmp_path / "review.toml"), "--db", url, "code", "scan", "--json")
    assert code == 1, err
    obj = json.loads(out)
    assert obj["packages"] == {"GL/rougescore": 1, "MS/rouge": 1, "PT/files2rouge": 1, "ROUGE-1.5.5": 1}
    assert obj["c2"] == {"false": 2}
    assert "scanned 2 codebases (1 failed" in err and "C2: false 2" in err
