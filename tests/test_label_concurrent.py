"""Two `review label` processes at once on one database (issue 34 item 7), SQLite and PostgreSQL.

Each process imports the whole CLI first and then waits for a go file, so both reach the
rule-set row within milliseconds of each other: the race the first run used to lose with
`IntegrityError: UNIQUE constraint failed: rule_sets.sha256`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import func, select

from review.db.models import Finding, PaperLabel, RuleSet, Run
from tests.procs import clean_env
from tests.rules_support import pattern
from tests.test_label import TEXTS, add_papers

_AFTER_GO = ("import os, sys, time, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from review.cli import main; import review.rules.stage, review.rules.engine; go = sys.argv[1]\n"
             "while not os.path.exists(go): time.sleep(0.001)\n"
             "main(sys.argv[2:])")
ROUNDS = 3


def _labels_at_once(db, tmp_path: Path, n: int) -> list[subprocess.CompletedProcess]:  # type: ignore[no-untyped-def]
    go = tmp_path / f"go-{n}"
    env = clean_env(REVIEW_DATABASE_URL=db.url.render_as_string(hide_password=False))
    rules = tmp_path / f"rouge-{n}.toml"  # a new version each round: each round races on its row
    rules.write_text(pattern("rouge.toml").read_text() + f"\n# round {n}\n")
    args = ["--silent", "label", "--rules", str(rules), "--json"]
    procs = [subprocess.Popen([sys.executable, "-c", _AFTER_GO, str(go), *args], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(4)  # both have imported the CLI and poll for the go file
    go.touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_two_label_runs_at_once_both_succeed(db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    more = {f"p-extra-{i}": f"We report ROUGE-{1 + i % 2} with pyrouge, paper {i}." for i in range(60)}
    add_papers(db, {**TEXTS, **more})
    for n in range(ROUNDS):  # both runs race on inserting the rule set's row, then on its labels
        for proc in _labels_at_once(db, tmp_path, n):
            assert proc.returncode == 0, proc.stderr
            assert "IntegrityError" not in proc.stderr and "Traceback" not in proc.stderr
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(RuleSet)) == ROUNDS
        for rs in s.scalars(select(RuleSet.id)):
            assert s.scalar(select(func.count()).select_from(PaperLabel).where(PaperLabel.rule_set_id == rs)) == 65
        keys = s.execute(select(Finding.rule_set_id, Finding.paper_id, Finding.rule_id, Finding.start)).all()
        assert len(keys) == len(set(keys)) > 0  # no finding stored twice by the two runs
        runs = s.scalars(select(Run.status).where(Run.command == "label")).all()
        assert sorted(runs) == ["ok"] * (2 * ROUNDS)
