"""`review label` over stored texts, on SQLite and PostgreSQL: store, rerun, replace, diff."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import func, select

from review.db.models import Finding, HumanDecision, Paper, PaperLabel, PaperText, Run, RuleSet
from review.rules.stage import diff_labels, latest_rule_set, run_label
from review.runs import record_run
from review.settings import load_settings
from tests.rules_support import pattern

TEXTS = {
    "p-r1": "We report ROUGE-1 scores from ROUGE-1.5.5 with -c 95 -r 1000 -n 2 -m, and Porter stemming. "
            "Code: https://github.com/us/ours.",
    "p-r2": "We report ROUGE-L computed with nlg-eval (Maluuba). Recall and precision are given.",
    "p-none": "We report ROUGE-2 F1 scores. Nothing else is said about the evaluation.",
    "p-pyrouge": "ROUGE scores via pltrdy/pyrouge.",
    "p-other": "A BLEU paper. sacrebleu nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0 BLEU 27.3",
}


def add_papers(db, texts=TEXTS, failed=("p-failed",)):  # type: ignore[no-untyped-def]
    with db.session() as s:
        for ident, text in texts.items():
            p = Paper(ident=ident, source="local", title=ident)
            s.add(p)
            s.flush()
            s.add(PaperText(paper_id=p.id, content=text, chars=len(text), outcome="ok", extractor="test"))
        for ident in failed:
            p = Paper(ident=ident, source="local", title=ident)
            s.add(p)
            s.flush()
            s.add(PaperText(paper_id=p.id, content=None, outcome="failed", reason="corrupt"))


def by_ident(db, rule_set_id: int) -> dict[str, PaperLabel]:  # type: ignore[no-untyped-def]
    with db.session() as s:
        rows = s.execute(select(Paper.ident, PaperLabel).join(PaperLabel, PaperLabel.paper_id == Paper.id)
                         .where(PaperLabel.rule_set_id == rule_set_id)).all()
        return {ident: pl for ident, pl in rows}


@pytest.fixture
def settings():  # type: ignore[no-untyped-def]
    return load_settings(None)


def test_label_stores_rule_set_findings_and_labels(db, settings) -> None:  # type: ignore[no-untyped-def]
    add_papers(db)
    with record_run(db, "label") as run:
        result = run_label(db, settings, rules_path=pattern("rouge.toml"), run=run)
    assert result.labeled == 5 and result.failed == 0 and result.prelim == 4 and result.computes == 4
    labels = by_ident(db, result.rule_set_id)
    assert set(labels) == set(TEXTS)  # the failed text is not labeled
    r1 = labels["p-r1"]
    assert r1.packages == ["ROUGE-1.5.5"] and r1.params == [" -c 95 -r 1000 -n 2 -m"]
    assert r1.protocol == ["stemming"] and r1.code_urls == ["https://github.com/us/ours"]
    assert r1.extra["r1"] is True and r1.extra["r2"] is False
    assert labels["p-r2"].packages == ["MS/rouge"] and labels["p-r2"].extra["r2"] is True
    assert sorted(labels["p-r2"].variants) == ["precision", "recall"]
    assert labels["p-pyrouge"].packages == ["PT/pyrouge", "unknown pyrouge"]
    assert not labels["p-other"].prelim and labels["p-other"].packages == []
    with db.session() as s:
        rs = s.get(RuleSet, result.rule_set_id)
        assert rs.content == (pattern("rouge.toml")).read_text() and rs.name == "rouge"
        f = s.scalars(select(Finding).where(Finding.rule_id == "params")).one()
        assert (f.kind, f.label, f.match) == ("params", "params", " -c 95 -r 1000 -n 2 -m")
        text = TEXTS["p-r1"]
        assert text[f.start:f.end] == " -c 95 -r 1000 -n 2 -m" and f.match in f.snippet and f.run_id == run.id
        run_row = s.get(Run, run.id)
        assert run_row.rules_sha256 == rs.sha256 and run_row.counts["labeled"] == 5
        assert run_row.signature["rules_sha256"] == rs.sha256[:12]
        assert latest_rule_set(s).id == rs.id


def test_rerun_labels_only_new_or_reextracted_texts_and_replaces_their_rows(db, settings) -> None:  # type: ignore[no-untyped-def]
    add_papers(db)
    first = run_label(db, settings, rules_path=pattern("rouge.toml"))
    with db.session() as s:
        before = dict(s.execute(select(Finding.paper_id, func.count()).group_by(Finding.paper_id)).all())
    again = run_label(db, settings, rules_path=pattern("rouge.toml"))
    assert again.rule_set_id == first.rule_set_id and again.candidates == 0 and again.labeled == 0
    # the text of one paper is re-extracted: only that paper is labeled again, its rows replaced
    with db.session() as s:
        pid = s.scalar(select(Paper.id).where(Paper.ident == "p-none"))
        t = s.scalar(select(PaperText).where(PaperText.paper_id == pid))
        t.content = "Now we cite files2rouge for ROUGE-L."
        t.extracted_at = datetime.now(timezone.utc) + timedelta(seconds=5)
    third = run_label(db, settings, rules_path=pattern("rouge.toml"))
    assert third.labeled == 1
    labels = by_ident(db, first.rule_set_id)
    assert labels["p-none"].packages == ["PT/files2rouge"]
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(PaperLabel)) == 5
        rows = s.scalars(select(Finding).where(Finding.paper_id == pid)).all()
        assert {f.label for f in rows} >= {"PT/files2rouge"} and "f-score" not in {f.label for f in rows}
        after = dict(s.execute(select(Finding.paper_id, func.count()).group_by(Finding.paper_id)).all())
        assert {k: v for k, v in after.items() if k != pid} == {k: v for k, v in before.items() if k != pid}
        assert after[pid] == len(rows)
    relabel = run_label(db, settings, rules_path=pattern("rouge.toml"), relabel=True)
    assert relabel.labeled == 5
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(PaperLabel)) == 5


def test_changed_rule_file_is_a_new_version_beside_the_old_and_human_work_is_untouched(
        db, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    add_papers(db)
    rules = tmp_path / "rouge.toml"
    shutil.copy(pattern("rouge.toml"), rules)
    old = run_label(db, settings, rules_path=rules)
    with db.session() as s:
        pid = s.scalar(select(Paper.id).where(Paper.ident == "p-pyrouge"))
        s.add(HumanDecision(paper_id=pid, question="P4", answer=["PT/pyrouge"], annotator="ann",
                            annotated_at=datetime.now(timezone.utc), origin="cli", annotation_ref="a1"))
    # a changed rule file: the specific pyrouge label wins over the generic one
    text = rules.read_text().replace('resolve = "keep_both"\nscope = "paper"', 'resolve = "specific_wins"\nscope = "paper"')
    assert text != rules.read_text()
    rules.write_text(text)
    new = run_label(db, settings, rules_path=rules)
    assert new.rule_set_id != old.rule_set_id and new.labeled == 5
    assert by_ident(db, old.rule_set_id)["p-pyrouge"].packages == ["PT/pyrouge", "unknown pyrouge"]
    assert by_ident(db, new.rule_set_id)["p-pyrouge"].packages == ["PT/pyrouge"]
    with db.session() as s:
        decisions = s.scalars(select(HumanDecision)).all()
        assert [(d.question, d.answer, d.annotator) for d in decisions] == [("P4", ["PT/pyrouge"], "ann")]
        changes = diff_labels(s, old.rule_set_id, new.rule_set_id)
    assert [(c.ident, c.changes) for c in changes] == [
        ("p-pyrouge", {"packages": {"old": ["PT/pyrouge", "unknown pyrouge"], "new": ["PT/pyrouge"]}})]


def test_limit_and_dry_run(db, settings) -> None:  # type: ignore[no-untyped-def]
    add_papers(db)
    dry = run_label(db, settings, rules_path=pattern("rouge.toml"), dry_run=True)
    assert dry.candidates == 5 and dry.rule_set_id is None
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(RuleSet)) == 0
    part = run_label(db, settings, rules_path=pattern("rouge.toml"), limit=2, batch=1)
    assert part.labeled == 2
    rest = run_label(db, settings, rules_path=pattern("rouge.toml"))
    assert rest.labeled == 3


def test_cli_label_json_diff_list_and_bad_rules(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from review.db.session import Database
    from review.db import migrate

    code, _, err = cli("db", "upgrade")
    assert code == 0, err
    db = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    add_papers(db)
    db.dispose()
    bad = tmp_path / "bad.toml"
    bad.write_text((pattern("rouge.toml")).read_text().replace("patterns = ['sacrerouge']", "patterns = ['sacre(rouge']"))
    code, out, err = cli("label", "--rules", str(bad))
    assert code == 5 and "rule 'pkg.dd-sacrerouge'" in err and "invalid regex" in err and "Traceback" not in err
    code, out, err = cli("label", "--rules", str(pattern("rouge.toml")), "--json")
    assert code == 0, err
    first = json.loads(out)
    assert first["labeled"] == 5 and first["computes"] == 4 and "labeled 5 papers" in err
    code, out, err = cli("label", "--rules", str(pattern("rouge-precise.toml")), "--diff", "--against",
                         first["sha256"][:10], "--json")
    assert code == 0, err
    data = json.loads(out)
    changed = {c["ident"]: c["changes"] for c in data["diff"]["changed"]}
    assert changed == {"p-pyrouge": {"packages": {"old": ["PT/pyrouge", "unknown pyrouge"], "new": ["PT/pyrouge"]}},
                       # params-whole: the string without Table 5's leading space
                       "p-r1": {"params": {"old": [" -c 95 -r 1000 -n 2 -m"], "new": ["-c 95 -r 1000 -n 2 -m"]}}}
    code, out, err = cli("label", "--rules", str(pattern("rouge-precise.toml")), "--diff", "--against",
                         first["sha256"][:10])
    assert code == 0 and "p-pyrouge" in out and "2 papers changed" in err
    code, out, _ = cli("label", "--list", "--json")
    sets = json.loads(out)["rule_sets"]
    assert [(r["name"], r["papers"]) for r in sets] == [("rouge", 5), ("rouge-precise", 5)]
    code, _, err = cli("label", "--diff", "--against", "zzzzzzzz", "--rules", str(pattern("rouge.toml")))
    assert code == 1 and "no stored rule set matches 'zzzzzzzz'" in err
    code, out, _ = cli("label", "--list", "--json")  # the wrong --against was refused before any labelling
    assert [(r["name"], r["papers"]) for r in json.loads(out)["rule_sets"]] == [("rouge", 5), ("rouge-precise", 5)]
    code, out, err = cli("label", "--rules", "rouge-precise", "--diff", "--against", "rouge", "--json")
    assert code == 0, err  # a rule file's name, as --rules takes it: its newest stored version
    assert json.loads(out)["diff"]["against"] == first["sha256"]
    code, _, err = cli("label", "--dry-run", "--rules", str(pattern("bleu.toml")))
    assert code == 0 and "would label 5 papers with bleu" in err
    code, out, err = cli("label", "--drop", first["sha256"][:10], "--json")
    assert code == 0 and json.loads(out)["papers"] == 5 and "human decisions untouched" in err
    code, out, _ = cli("label", "--list", "--json")
    assert [r["name"] for r in json.loads(out)["rule_sets"]] == ["rouge-precise"]
