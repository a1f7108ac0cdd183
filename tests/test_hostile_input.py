"""Hostile input is contained: catastrophic rule patterns, PDFs cut short, redirects inwards.

Each test plays what a careless or hostile party can hand the tool: a user's rule file with
`(a+)+$`, a server that closes the connection half-way through a PDF it sent without a
Content-Length, and a publisher URL that redirects to an internal address.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import Paper, PaperLabel, PaperText, Run
from review.rules.model import load_ruleset
from review.rules.stage import run_label
from review.runs import record_run
from review.settings import LabelSettings, Settings
from tests.rules_support import PATTERNS

RUNAWAY = "user.runaway"
PAPER = ("We report ROUGE-1 and ROUGE-L F1 computed with pyrouge (-c 95 -r 1000 -n 2 -m) and Porter stemming. "
         + "a" * 3000 + "!")  # 3,000 "a" then a character `(a+)+$` cannot end on


def hostile_rules(tmp_path: Path) -> Path:
    """The shipped rule file plus one user rule that backtracks exponentially on a run of 'a'."""
    path = tmp_path / "hostile.toml"
    path.write_text(f"""schema = 1
name = "rouge-hostile"
extends = {json.dumps(str(PATTERNS / "rouge.toml"))}

[[rules]]
id = "{RUNAWAY}"
kind = "protocol"
label = "runaway"
patterns = ['(a+)+$']
""")
    return path


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------------- rule patterns

def test_nested_quantifiers_are_named_when_the_rule_file_loads(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="review")
    path = hostile_rules(tmp_path)
    load_ruleset(path)
    warned = [r.getMessage() for r in caplog.records if "nests repeats" in r.getMessage()]
    assert len(warned) == 1 and RUNAWAY in warned[0] and str(path) in warned[0] and "(a+)+$" in warned[0]
    caplog.clear()
    for shipped in ("rouge.toml", "rouge-precise.toml", "bleu.toml"):
        load_ruleset(PATTERNS / shipped)
    assert not [r for r in caplog.records if "nests repeats" in r.getMessage()], "no false alarm on shipped files"


def test_label_cuts_a_runaway_rule_off_and_labels_everything_else(db, tmp_path: Path) -> None:
    texts = {"hostile": PAPER, "plain": "ROUGE-2 computed with files2rouge. Recall is reported."}
    with db.session() as s:
        for ident, content in texts.items():
            paper = Paper(ident=ident, source="local", title=ident)
            s.add(paper)
            s.flush()
            s.add(PaperText(paper_id=paper.id, content=content, chars=len(content), outcome="ok"))
    settings = Settings(label=LabelSettings(regex_timeout=0.2))
    with record_run(db, "label") as run:
        result = run_label(db, settings, rules_path=hostile_rules(tmp_path), run=run)
    assert (result.labeled, result.failed, result.computes) == (2, 0, 2)
    assert result.timed_out == {RUNAWAY: 1} and result.timed_out_papers == 1
    assert f"1 with a rule cut off by label.regex_timeout ({RUNAWAY}: 1)" in result.summary()
    with db.session() as s:
        labels = {i: pl for i, pl in s.execute(select(Paper.ident, PaperLabel).join(PaperLabel))}
        counts = s.get(Run, run.id).counts
    hostile = labels["hostile"]
    assert hostile.extra["timed_out"] == [RUNAWAY]
    assert "pyrouge" in " ".join(hostile.packages) and hostile.params and "stemming" in hostile.protocol, \
        "the other rules still labeled the paper"
    assert "timed_out" not in labels["plain"].extra and labels["plain"].packages
    assert counts["timed_out"] == 1


def test_check_names_the_rule_that_timed_out(cli, tmp_path: Path, monkeypatch) -> None:
    paper = tmp_path / "paper.txt"
    paper.write_text(PAPER)
    rules = hostile_rules(tmp_path)
    monkeypatch.setenv("REVIEW_LABEL__REGEX_TIMEOUT", "0.2")
    code, out, err = cli("check", str(paper), "--rules", str(rules), "--json")
    data = json.loads(out)
    assert data["timed_out"] == [RUNAWAY] and data["computes_rouge"] and data["packages"]
    assert "nestsrepeats" in squeezed(err) and RUNAWAY in err, "the load-time warning reaches the user"
    code, out, err = cli("check", str(paper), "--rules", str(rules))
    assert f"timed out (left out, see label.regex_timeout): {RUNAWAY}" in out
    assert RUNAWAY in squeezed(err) and "ranpastlabel.regex_timeout" in squeezed(err)
