"""`review evaluate papers`: the GOLD.md reader, the scores, per-rule precision, the CLI.

The committed items under tests/data/evaluate are our own short texts and one generated
PDF, each with a hand label; they hold the error classes the scores must expose (a
baseline's code URL, "ROUGE of (37.37, 15.59, ...)", a pypi pyrouge link, ROUGE 2.0 in
related work, copied ROUGE scores).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from review.check import check_file
from review.compute import load_catalog
from review.db.base import Base
from review.db.models import Paper, PaperText
from review.evaluate.gold import GoldFileError, read_gold
from review.evaluate.papers import evaluate, read_texts
from review.evaluate.score import (Pair, check_thresholds, collapse, parse_threshold, rule_precision, score_pairs,
                                   url_key)
from tests.conftest import DATA
from tests.rules_support import pattern, rules

EVAL = DATA / "evaluate"
GOLD = EVAL / "gold.jsonl"
PACKAGES = list(load_catalog(pattern("rouge/packages.toml")).packages)


@pytest.fixture(scope="module")
def gold():  # type: ignore[no-untyped-def]
    return read_gold(GOLD, PACKAGES)


@pytest.fixture(scope="module")
def texts(gold):  # type: ignore[no-untyped-def]
    return read_texts(gold)


# ------------------------------------------------------------------------ the reader

def test_reader_takes_the_gold_format_as_written(gold) -> None:  # type: ignore[no-untyped-def]
    papers = {p.id: p for p in gold.papers}
    assert list(papers) == ["own-eval", "copied", "numbers", "small-paper"]  # '#' and blank lines skipped
    assert [p.line for p in gold.papers] == [2, 4, 5, 6]
    assert papers["small-paper"].source == "pdf" and papers["small-paper"].location == str(EVAL / "papers" / "small-paper.pdf")
    assert papers["own-eval"].extra == {"reviewer": "extra keys are kept and ignored"}
    assert papers["own-eval"].answers["P1"] == ("-c 95 -r 1000 -n 2 -m",)
    assert papers["numbers"].answers["P1"] == () and "P3" not in papers["numbers"].answers  # null P1 = none listed
    assert papers["copied"].answers == {"P0": False}


def test_relative_paths_resolve_from_the_gold_file_not_the_working_directory(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    g = read_gold(os.path.relpath(GOLD, tmp_path), PACKAGES)
    monkeypatch.chdir(DATA)  # somewhere else: the paths still name the files
    assert all(Path(p.location).is_absolute() and Path(p.location).is_file() for p in g.papers)


BAD_LINES = [
    ('{"id": "a", "text": "t.txt", "P0": "yes"}', "`P0` must be true or false"),
    ('{"id": "a", "text": "t.txt", "P0": true, "P2": ["accuracy"]}', "label 'accuracy' is not in the vocabulary"),
    ('{"id": "a", "text": "t.txt", "P0": true, "P3": ["lemmatization"]}', "`P3` label 'lemmatization'"),
    ('{"id": "a", "text": "t.txt", "P0": true, "P4": ["XY/rouge"]}', "`P4` label 'XY/rouge' is not in the vocabulary"),
    ('{"id": "a", "text": "t.txt", "P0": true, "P1": 95}', "`P1` must be a non-empty string"),
    ('{"id": "a", "text": "t.txt", "P0": true, "code_urls": "https://github.com/a/b"}', "`code_urls` must be a list"),
    ('{"id": "a", "text": "missing.txt", "P0": true}', "text file not found"),
    ('{"id": "a", "text": "t.pdf", "P0": true}', "not a .txt or .md file"),
    ('{"id": "a", "P0": true}', "exactly one of text, pdf or paper"),
    ('{"id": "a", "text": "t.txt", "paper": "x", "P0": true}', "exactly one of text, pdf or paper"),
    ('{"text": "t.txt", "P0": true}', "`id` must be a non-empty string"),
    ('{"id": "a", "text": "t.txt", "P0": false, "P4": ["ROUGE-1.5.5"]}', "P0 is false, so P4 must be empty"),
    ('{"id": "a", "text": "t.txt", "P0": true', "not valid JSON"),
    ('["a"]', "must be a JSON object"),
]


@pytest.mark.parametrize("line,reason", BAD_LINES)
def test_bad_lines_are_rejected_naming_the_line(tmp_path: Path, line: str, reason: str) -> None:
    (tmp_path / "t.txt").write_text("We report ROUGE-1.")
    gold = tmp_path / "gold.jsonl"
    gold.write_text('# a comment\n{"id": "ok", "text": "t.txt", "P0": true}\n' + line + "\n")
    with pytest.raises(GoldFileError) as err:
        read_gold(gold, PACKAGES)
    assert f"{gold}:3" in str(err.value) and reason in str(err.value)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("ROUGE-1")
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "a", "text": "t.txt", "P0": true}\n\n{"id": "a", "text": "t.txt", "P0": false}\n')
    with pytest.raises(GoldFileError, match=r"gold.jsonl:3: duplicate id 'a' \(first on line 1\)"):
        read_gold(gold, PACKAGES)


def test_code_entries_are_left_to_their_own_scorer(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("ROUGE-1")
    gold = tmp_path / "gold.jsonl"
    code = '{"repo": "o/n", "commit": "%s", "packages_used": ["GL/rougescore"]}' % ("a" * 40)
    gold.write_text(code + '\n{"id": "a", "text": "t.txt", "P0": true}\n')
    g = read_gold(gold, PACKAGES)
    assert [p.id for p in g.papers] == ["a"] and g.code_lines == (1,)
    gold.write_text(code + "\n")
    with pytest.raises(GoldFileError, match=r"no paper entries \(only code entries"):
        read_gold(gold, PACKAGES)


def test_an_empty_or_missing_gold_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(GoldFileError, match="gold file not found"):
        read_gold(tmp_path / "none.jsonl", PACKAGES)
    (tmp_path / "empty.jsonl").write_text("# nothing\n\n")
    with pytest.raises(GoldFileError, match="no paper entries"):
        read_gold(tmp_path / "empty.jsonl", PACKAGES)


# ------------------------------------------------------------------------ the scores

def _pairs() -> list[Pair]:
    a_exp = {"P0": True, "P1": ("-c 95  -m",), "P2": ("f-score", "recall"), "P3": (), "P4": ("ROUGE-1.5.5",),
             "code_urls": ("https://github.com/Org/Repo",)}
    a_prop = {"P0": True, "P1": [" -c 95 -m"], "P2": ["f-score", "precision"], "P3": ["stemming"],
              "P4": ["ROUGE-1.5.5", "github rouge"], "code_urls": ["github.com/org/repo/tree/main",
                                                                  "https://github.com/other/x"]}
    return [Pair("A", a_exp, a_prop),
            Pair("B", {"P0": False}, {"P0": True, "P2": ["recall"], "P4": ["KG/rouge2"]}),
            Pair("C", {"P0": True, "P1": (), "P4": ()}, {"P0": False, "P1": [], "P2": ["f-score"], "P4": []}),
            Pair("D", {"P0": False}, {"P0": False})]


def test_scores_by_hand() -> None:
    s = score_pairs(_pairs())
    assert (s.items, s.computing) == (4, 2)
    assert (s.p0.tp, s.p0.fp, s.p0.fn, s.p0_correct) == (1, 1, 1, 2) and s.p0.precision == 0.5 and s.p0_accuracy == 0.5
    p1, p2, p3, p4, code = (s.sets[q] for q in ("P1", "P2", "P3", "P4", "code_urls"))
    assert (p1.items, p1.exact, p1.overall.tp, p1.overall.fp) == (2, 2, 1, 0)  # whitespace collapsed; C: none = none
    assert (s.p1_listed.tp, s.p1_listed.fp, s.p1_listed.fn) == (1, 0, 0)
    assert (p2.items, p2.exact, p2.overall.tp, p2.overall.fp, p2.overall.fn) == (1, 0, 1, 1, 1)  # C has no P2 answer
    assert {k: (c.tp, c.fp, c.fn) for k, c in p2.labels.items()} == {"f-score": (1, 0, 0), "recall": (0, 0, 1),
                                                                   "precision": (0, 1, 0)}
    assert (p3.items, p3.overall.fp, p3.overall.precision, p3.overall.recall) == (1, 1, 0.0, None)
    assert (p4.items, p4.exact, p4.overall.tp, p4.overall.fp, p4.overall.fn) == (2, 1, 1, 1, 0)  # B (P0 false) unscored
    assert (code.overall.tp, code.overall.fp, code.exact) == (1, 1, 0)
    assert [(d.item, d.question) for d in s.disagreements] == [
        ("A", "P2"), ("A", "P3"), ("A", "P4"), ("A", "code_urls"), ("B", "P0"), ("C", "P0")]
    a_p4 = s.disagreements[2]
    assert a_p4.missing == [] and a_p4.extra == ["github rouge"]
    m = s.metrics()
    assert m["P0.precision"] == 0.5 and m["P2.recall.recall"] == 0.0 and m["P4.exact"] == 0.5
    assert m["P3.stemming.precision"] == 0.0 and m["P2.f1"] == 0.5 and m["P3.recall"] is None


def test_parameter_strings_and_code_urls_are_normalized_as_documented() -> None:
    assert collapse("  -c 95\n -r 1000  -n 2 ") == "-c 95 -r 1000 -n 2"
    same = ["https://github.com/Org/Repo", "http://www.github.com/org/repo/", "github.com/org/repo.git",
            "https://github.com/org/repo/tree/master/src", "github.com/org/repo)."]
    assert {url_key(u) for u in same} == {"github.com/org/repo"}
    assert url_key("http://www.nlpr.ia.ac.cn/cip/dataset.htm") == "nlpr.ia.ac.cn/cip/dataset.htm"
    assert url_key("evasharma.github.io/SENECA") == "evasharma.github.io/seneca"


def test_rule_precision_counts_matches_on_scored_answers_only() -> None:
    a_exp = _pairs()[0].expected
    items = [
        (a_exp, [{"rule": "flag.verbatim", "kind": "flag", "label": "verbatim", "match": "ROUGE"},
                 {"rule": "pkg.rouge-155", "kind": "package", "label": "ROUGE-1.5.5", "match": "ROUGE-1.5.5"},
                 {"rule": "pkg.rouge-155", "kind": "package", "label": "ROUGE-1.5.5", "match": "official rouge"},
                 {"rule": "pkg.github-rouge", "kind": "package", "label": "github rouge", "match": "github.com/x/rouge"},
                 {"rule": "params", "kind": "params", "label": "params", "match": " -c 95 -m"},
                 {"rule": "code.url", "kind": "code_url", "label": "code", "match": "https://github.com/other/x"}]),
        ({"P0": False}, [{"rule": "flag.verbatim", "kind": "flag", "label": "verbatim", "match": "rouge"},
                         {"rule": "pkg.rouge-155", "kind": "package", "label": "ROUGE-1.5.5", "match": "rouge 1.5.5"}]),
    ]
    got = {r.rule: (r.matches, r.right, r.items, r.items_right) for r in rule_precision(items)}
    assert got == {"flag.verbatim": (2, 1, 2, 1), "pkg.rouge-155": (2, 2, 1, 1), "pkg.github-rouge": (1, 0, 1, 0),
                   "params": (1, 1, 1, 1), "code.url": (1, 0, 1, 0)}
    assert [r.rule for r in rule_precision(items)][:2] == ["code.url", "pkg.github-rouge"]  # worst first


def test_thresholds() -> None:
    assert parse_threshold("P0.precision=0.97").minimum == 0.97
    assert parse_threshold(" P3.bootstrapping.precision >= 0.95").metric == "P3.bootstrapping.precision"
    assert parse_threshold("P4.BZ/pyrouge.recall=1").metric == "P4.BZ/pyrouge.recall"
    for bad in ("P0.precision", "P0.precision=high", "P0.precision=1.5", "X.precision=0.5", "P0.prec=0.5", "=1"):
        with pytest.raises(ValueError):
            parse_threshold(bad)
    metrics = score_pairs(_pairs()).metrics()
    fails = check_thresholds(metrics, [parse_threshold(s) for s in
                                       ("P0.precision=0.5", "P0.recall=0.6", "P3.recall=0.1", "P2.accuracy.f1=0.1")])
    assert fails == ["P0.recall = 0.500 < 0.6", "P3.recall is undefined (nothing to score) < 0.1",
                     "P2.accuracy.f1: no such score on this gold set (e.g. P0.precision, P2.exact, "
                     "P3.bootstrapping.precision)"]


# ------------------------------------------------------------------------ labelling real-shaped items

def test_faithful_rules_on_the_committed_items(gold, texts) -> None:  # type: ignore[no-untyped-def]
    ev = evaluate(gold, texts, rules())
    s = ev.scores
    assert (s.p0.tp, s.p0.fp, s.p0.fn) == (3, 1, 0)
    assert s.sets["P3"].items == 2  # "numbers" has no P3 answer
    by = {(d.item, d.question): d for d in s.disagreements}
    assert set(by) == {("copied", "P0"), ("own-eval", "P4"), ("own-eval", "code_urls"), ("numbers", "P4"),
                       ("small-paper", "P1"), ("small-paper", "P4"), ("small-paper", "code_urls")}
    # the evidence says which rule and which text led to each wrong answer
    numbers = by[("numbers", "P4")]
    assert numbers.extra == ["ROUGE-1.5.5"] and numbers.evidence[0]["rule"] == "pkg.rouge-155"
    assert "(37.37, 15.59" in numbers.evidence[0]["snippet"]
    code = by[("own-eval", "code_urls")]
    assert code.extra == ["github.com/example-lab/baseline-sum"] and "open code at" in code.evidence[0]["snippet"]
    assert set(by[("own-eval", "P4")].extra) == {"PT/rouge", "unknown pyrouge"}
    paper = by[("small-paper", "P4")]
    assert "KG/rouge2" in paper.extra and any("ROUGE 2.0 (Ganesan" in e["snippet"] for e in paper.evidence)
    assert by[("copied", "P0")].expected is False and {e["label"] for e in by[("copied", "P0")].evidence} >= {"score"}
    rp = {r.rule: r for r in ev.rule_scores}
    assert (rp["pkg.kg-rouge2"].matches, rp["pkg.kg-rouge2"].right) == (2, 0)  # copied's match is not scored (P0 false)
    assert rp["pkg.bz-pyrouge"].precision == 1.0 and rp["code.url"].precision == 0.5


def test_items_are_labelled_exactly_as_review_check_labels_them(gold, texts) -> None:  # type: ignore[no-untyped-def]
    ruleset = rules("rouge-precise.toml")
    ev = evaluate(gold, texts, ruleset)
    for item in ev.items:
        r = check_file(item.gold.location, ruleset)
        assert item.proposed == {"P0": r.computes, "P1": r.params, "P2": r.variants, "P3": r.protocol,
                                 "P4": r.packages, "code_urls": r.code_urls}, item.gold.id


def test_a_named_option_changes_what_is_scored(gold, texts) -> None:  # type: ignore[no-untyped-def]
    plain = evaluate(gold, texts, rules())
    specific = evaluate(gold, texts, rules("rouge.toml", "specific-wins"))
    assert specific.options == ("specific-wins",)
    # BZ/pyrouge now explains the 'pyrouge' of own-eval; small-paper's 'github rouge' overlaps no specific label
    assert specific.scores.sets["P4"].overall.fp == plain.scores.sets["P4"].overall.fp - 1
    assert "unknown pyrouge" not in specific.scores.sets["P4"].labels


def test_an_unreadable_pdf_stops_with_its_line(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "t", "pdf": str(DATA / "pdfs" / "truncated.pdf"), "P0": True}) + "\n")
    with pytest.raises(GoldFileError, match=r"gold.jsonl:1: pdf .*truncated.pdf: cannot extract text"):
        read_texts(read_gold(gold, PACKAGES))


# ------------------------------------------------------------------------ the command

def test_cli_prints_scores_and_json(cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = cli("evaluate", "papers", "--gold", str(GOLD))
    assert code == 0, err
    assert "P0 computes" in out and "Disagreements (7):" in out and "Per-rule precision" in out
    assert "numbers P4: expected []; proposed ['ROUGE-1.5.5']" in out and "pkg.rouge-155:" in out
    code, out, err = cli("evaluate", "papers", "--gold", str(GOLD), "--rules", str(pattern("rouge-precise.toml")),
                         "--json")
    data = json.loads(out)
    assert code == 0 and data["rules"] == "rouge-precise"
    assert {"scores", "disagreements", "rules_precision", "thresholds"} <= set(data)
    assert data["scores"]["P0"]["items"] == 4 and data["scores"]["P4"]["labels"]["BZ/pyrouge"]["tp"] == 1


def test_cli_thresholds_set_the_exit_code(cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli("evaluate", "papers", "--gold", str(GOLD), "--min", "P0.recall=1", "--min", "P2.precision=0.9")
    assert code == 0, err
    code, out, err = cli("evaluate", "papers", "--gold", str(GOLD), "--min", "P0.precision=0.97", "--json")
    assert code == 1 and "below threshold: P0.precision = 0.750 < 0.97" in err
    assert json.loads(out)["thresholds"]["failed"] == ["P0.precision = 0.750 < 0.97"]
    code, _, err = cli("evaluate", "papers", "--gold", str(GOLD), "--min", "P0.precision")
    assert code == 2 and "NAME=VALUE" in err


def test_cli_bad_gold_file_exits_8_naming_the_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "a", "text": "nope.txt", "P0": true}\n')
    code, out, err = cli("evaluate", "papers", "--gold", str(gold))
    assert code == 8 and f"{gold}:1: text file not found" in err and "Traceback" not in out + err


def _snapshot(db) -> dict[str, list]:  # type: ignore[no-untyped-def]
    with db.session() as s:
        return {t.name: [tuple(r) for r in s.execute(select(t).order_by(*t.primary_key.columns))]
                for t in Base.metadata.sorted_tables}


def test_paper_entries_read_the_database_and_write_nothing(cli, db, db_url, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with db.session() as s:
        p = Paper(ident="2019.test-1.1", source="local", title="stored")
        s.add(p)
        s.flush()
        text = (EVAL / "texts" / "own-eval.txt").read_text()
        s.add(PaperText(paper_id=p.id, content=" ".join(text.split()), chars=len(text), outcome="ok", extractor="test"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "stored", "paper": "2019.test-1.1", "P0": True, "P4": ["BZ/pyrouge"]}) + "\n")
    before = _snapshot(db)
    code, out, err = cli("--db", db_url, "evaluate", "papers", "--gold", str(gold), "--json")
    assert code == 0, err
    assert json.loads(out)["scores"]["P4"]["tp"] == 1
    assert _snapshot(db) == before  # no run row, no labels, no findings: nothing written
    gold.write_text(json.dumps({"id": "gone", "paper": "2019.test-9.9", "P0": True}) + "\n")
    code, _, err = cli("--db", db_url, "evaluate", "papers", "--gold", str(gold))
    assert code == 8 and "gold.jsonl:1: paper '2019.test-9.9' is not in the database" in err
    assert _snapshot(db) == before


def test_paper_entries_never_create_a_missing_sqlite_database(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "x", "paper": "2019.test-1.1", "P0": True}) + "\n")
    target = tmp_path / "none" / "review.sqlite"
    code, _, err = cli("--db", f"sqlite:///{target}", "evaluate", "papers", "--gold", str(gold))
    assert code == 4 and "no database at" in err and not target.exists()
