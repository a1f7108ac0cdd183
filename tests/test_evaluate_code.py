"""`review evaluate code`: the code gold reader, the scores, the scan adapter, the command and gold/code/fetch.py.

Checkouts are real git repositories built in the test; the scan is the real one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from review.errors import InputFileError
from review.evaluate.code import (Proposal, check_thresholds, evaluate, locate_checkouts, parse_threshold,
                                  proposal_from_scan, score)
from review.evaluate.code_gold import CodeGoldError, read_code_gold
from tests.code_support import git, make_repo
from tests.conftest import ROOT

VOCAB = {"BZ/pyrouge", "ROUGE-1.5.5", "GL/rougescore", "PT/rouge", "MS/rouge"}
C1 = "1" * 40
C2 = "2" * 40
C3 = "3" * 40


def gold_file(tmp_path: Path, *lines: str | dict, name: str = "gold.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
                    encoding="utf-8")
    return path


def entry(repo: str, commit: str, used: list[str] | None = None, present: list[str] | None = None,
          c2: bool | None = None, **extra: object) -> dict:
    out: dict = {"repo": repo, "commit": commit}
    if used is not None:
        out["packages_used"] = used
    if present is not None:
        out["packages_present"] = present
    if c2 is not None:
        out["eval_reproducible"] = c2
    return {**out, **extra}


# ------------------------------------------------------------------ the reader

def test_reader_accepts_everything_the_format_allows(tmp_path):
    path = gold_file(tmp_path, "# a comment line", "",
                     entry("a/one", C1.upper(), ["BZ/pyrouge", "ROUGE-1.5.5"], ["custom"], True, note="decode.py",
                           path="co/a+one", task="summarization", year=2017),
                     entry("b/two", C2, used=[]))
    gold = read_code_gold(path, VOCAB)
    one, two = gold.repos
    assert (one.repo, one.commit, one.line, one.note) == ("a/one", C1, 3, "decode.py")
    assert one.answers == {"packages_used": frozenset({"BZ/pyrouge", "ROUGE-1.5.5"}),
                           "packages_present": frozenset({"custom"}), "eval_reproducible": True}
    assert one.path == (tmp_path / "co" / "a+one").resolve()  # relative to the gold file, not the cwd
    assert one.extra == {"task": "summarization", "year": 2017}  # kept, ignored
    assert two.answers == {"packages_used": frozenset()} and two.path is None  # absent questions: not answered
    assert two.folder_name == "b+two"


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "one JSON object"),
    (json.dumps(entry("nobody", C1, [])), "'repo' must be 'owner/name'"),
    (json.dumps(entry("a/b", "abc123", [])), "'commit' must be 40 hex digits"),
    (json.dumps(entry("a/b", C1, "GL/rougescore")), "'packages_used' must be a list"),
    (json.dumps(entry("a/b", C1, ["rouge-score"])), "'rouge-score' is not a package label"),
    (json.dumps(entry("a/b", C1, [], ["bz/pyrouge"])), "'bz/pyrouge' is not a package label"),
    (json.dumps({**entry("a/b", C1, []), "eval_reproducible": "unknown"}), "must be true or false"),
    (json.dumps({**entry("a/b", C1, []), "note": ["x"]}), "'note' must be a string"),
    (json.dumps({**entry("a/b", C1, []), "path": ""}), "'path' must be a folder name"),
    (json.dumps(entry("a/b", C1)), "no answer to score"),
])
def test_reader_rejects_a_bad_line_naming_it(tmp_path, line, message):
    path = gold_file(tmp_path, "# header", entry("ok/first", C2, ["GL/rougescore"]), line)
    with pytest.raises(CodeGoldError) as err:
        read_code_gold(path, VOCAB)
    assert err.value.item == f"{path}:3" and message in err.value.message
    assert isinstance(err.value, InputFileError)  # exit code 8 at the command line


def test_reader_rejects_a_duplicate_repo_whatever_its_case(tmp_path):
    path = gold_file(tmp_path, entry("Owner/Name", C1, []), entry("owner/name", C2, []))
    with pytest.raises(CodeGoldError, match=r"duplicate repo 'owner/name' \(first on line 1\)") as err:
        read_code_gold(path, VOCAB)
    assert err.value.item.endswith(":2")


def test_reader_rejects_missing_and_empty_files(tmp_path):
    with pytest.raises(CodeGoldError, match="gold file not found"):
        read_code_gold(tmp_path / "none.jsonl", VOCAB)
    with pytest.raises(CodeGoldError, match="no repositories"):
        read_code_gold(gold_file(tmp_path, "# only a comment"), VOCAB)


# ------------------------------------------------------------------ the scores

def test_scores_are_micro_averaged_sets_and_c2_counts_unknown_apart(tmp_path):
    gold = read_code_gold(gold_file(
        tmp_path,
        entry("a/one", C1, ["BZ/pyrouge", "ROUGE-1.5.5"], ["custom"], True),
        entry("b/two", C2, ["GL/rougescore"], ["PT/rouge"], True),
        entry("c/three", C3, [], [], False)), VOCAB)
    proposals = {
        "a/one": Proposal(frozenset({"BZ/pyrouge"}), frozenset({"custom"}), True, "all four hold"),
        "b/two": Proposal(frozenset({"GL/rougescore", "PT/rouge"}), frozenset(), None, "no verdict"),
        "c/three": Proposal(frozenset(), frozenset({"MS/rouge"}), True, "wrongly true"),
    }
    result = score(gold, proposals)
    used, present, c2 = result.sets["packages_used"], result.sets["packages_present"], result.verdict
    assert (used.overall.tp, used.overall.fp, used.overall.fn) == (2, 1, 1)
    assert used.overall.precision == pytest.approx(2 / 3) and used.overall.recall == pytest.approx(2 / 3)
    assert used.overall.f1 == pytest.approx(2 / 3)
    assert (used.exact, used.items) == (1, 3)  # only c/three's empty set is exactly right
    assert used.labels["ROUGE-1.5.5"].recall == 0.0 and used.labels["ROUGE-1.5.5"].precision is None
    assert used.labels["PT/rouge"].precision == 0.0 and used.labels["BZ/pyrouge"].f1 == 1.0
    assert (present.overall.tp, present.overall.fp, present.overall.fn) == (1, 1, 1)
    assert present.exact == 1  # a/one
    assert c2.table[(True, "true")] == 1 and c2.table[(True, "unknown")] == 1 and c2.table[(False, "true")] == 1
    assert (c2.agreed, c2.unknown, c2.agreement) == (1, 1, pytest.approx(1 / 3))
    assert (c2.counts.tp, c2.counts.fp, c2.counts.fn) == (1, 1, 1)  # unknown on a true repository is a miss
    metrics = result.metrics()
    assert metrics["packages_used.exact"] == pytest.approx(1 / 3)
    assert metrics["packages_present.custom.recall"] == 1.0
    assert metrics["eval_reproducible.agreement"] == pytest.approx(1 / 3)
    questions = [(d.repo, d.question) for d in result.disagreements]
    assert questions == [("a/one", "packages_used"), ("b/two", "packages_used"), ("b/two", "packages_present"),
                         ("b/two", "eval_reproducible"), ("c/three", "packages_present"),
                         ("c/three", "eval_reproducible")]
    first = result.disagreements[0]
    assert (first.missing, first.extra) == (["ROUGE-1.5.5"], [])
    assert result.disagreements[3].proposed == "unknown" and result.disagreements[3].evidence[0] == {
        "reason": "no verdict"}


def test_holdout_lines_are_scored_apart_from_dev(tmp_path):
    gold = read_code_gold(gold_file(
        tmp_path,
        entry("a/one", C1, ["BZ/pyrouge"], [], True),  # no split key: dev
        entry("b/two", C2, ["GL/rougescore"], [], True, split="dev"),
        entry("c/three", C3, ["PT/rouge"], [], False, split=" Holdout ")), VOCAB)
    proposals = {
        "a/one": Proposal(frozenset({"BZ/pyrouge"}), frozenset(), True, ""),
        "b/two": Proposal(frozenset({"GL/rougescore"}), frozenset(), False, ""),
        "c/three": Proposal(frozenset({"MS/rouge"}), frozenset(), False, ""),
    }
    result = score(gold, proposals)
    dev, hold = result.parts["dev"], result.parts["holdout"]
    assert result.has_holdout and (dev.repositories, hold.repositories) == (2, 1)
    assert (dev.sets["packages_used"].exact, dev.sets["packages_used"].items) == (2, 2)
    assert (hold.sets["packages_used"].exact, hold.sets["packages_used"].items) == (0, 1)
    assert (dev.verdict.agreed, dev.verdict.items, hold.verdict.agreed) == (1, 2, 1)
    assert result.sets["packages_used"].exact == 2 and result.verdict.agreed == 2  # overall keeps both parts
    assert {(d.repo, d.part) for d in result.disagreements} == {("b/two", "dev"), ("c/three", "holdout")}
    parts = result.as_dict()["parts"]
    assert parts["holdout"]["packages_used"]["exact"] == 0 and parts["dev"]["repositories"] == 2


def test_an_unanswered_question_is_not_scored(tmp_path):
    gold = read_code_gold(gold_file(tmp_path, entry("a/one", C1, used=["MS/rouge"])), VOCAB)
    result = score(gold, {"a/one": Proposal(frozenset({"MS/rouge"}), frozenset({"PT/rouge"}), None, "")})
    assert result.sets["packages_present"].items == 0 and result.verdict.items == 0
    assert result.disagreements == [] and result.metrics()["packages_present.exact"] is None


def test_thresholds_parse_and_fail_with_the_figure():
    t = parse_threshold("packages_present.ROUGE-1.5.5.recall>=0.5")
    assert (t.metric, t.minimum) == ("packages_present.ROUGE-1.5.5.recall", 0.5)
    for bad in ("packages_used.exact", "P0.precision=0.9", "packages_used.exact=1.5", "eval_reproducible.mean=0.5"):
        with pytest.raises(ValueError):
            parse_threshold(bad)
    failures = check_thresholds({"packages_used.exact": 0.49, "eval_reproducible.agreement": None},
                                [parse_threshold("packages_used.exact=0.9"),
                                 parse_threshold("eval_reproducible.agreement=0.85"),
                                 parse_threshold("packages_used.XX/none.recall=0.1")])
    assert failures[0] == "packages_used.exact = 0.490 < 0.9"
    assert "undefined" in failures[1] and "no such score" in failures[2]


# ------------------------------------------------------------------ the scan adapter

def test_the_scan_reports_the_split_and_a_verdict(tmp_path):
    from review.codebases.catalog import load_catalog
    from review.codebases.scan import scan_tree

    repo = make_repo(tmp_path / "r", {"requirements.txt": "pyrouge==0.1.3\nrouge-score\n",
                                      "eval.py": "from rouge_score import rouge_scorer\n"
                                                 "s = rouge_scorer.RougeScorer(['rouge1'])\n"})
    report = scan_tree(repo, load_catalog())
    proposal = proposal_from_scan(report.as_dict())
    assert proposal.packages_used == frozenset(report.packages_used) == {"GL/rougescore"}
    assert proposal.packages_present == {"BZ/pyrouge", "ROUGE-1.5.5"} and proposal.eval_reproducible is True
    assert proposal.reason.startswith("all four conditions hold")
    assert {r["file"] for r in proposal.evidence} == {"requirements.txt", "eval.py"}


def test_a_scan_that_reports_the_split_and_a_verdict_is_taken_as_it_is():
    scan = {"packages": ["BZ/pyrouge", "GL/rougescore"], "packages_used": ["GL/rougescore"],
            "packages_present": ["BZ/pyrouge"], "eval_reproducible": "false",
            "eval_reproducible_reason": ["condition 3: imports compare_mt, not declared", "x"],
            "eval_reproducible_evidence": [{"file": "main.py", "line": 8, "text": "import compare_mt"}],
            "evidence": [{"package": "BZ/pyrouge", "file": "requirements.txt", "line": 1, "role": "declared only"}]}
    p = proposal_from_scan(scan)
    assert (p.packages_used, p.packages_present) == ({"GL/rougescore"}, {"BZ/pyrouge"})
    assert p.eval_reproducible is False and p.reason.startswith("condition 3: imports compare_mt")
    assert p.c2_evidence[0]["file"] == "main.py" and p.evidence[0]["role"] == "declared only"
    assert proposal_from_scan({"packages_used": ["MS/rouge"], "eval_reproducible": None}).eval_reproducible is None


def test_a_failed_scan_is_kept_and_reported(tmp_path):
    gold = read_code_gold(gold_file(tmp_path, entry("a/one", C1, ["MS/rouge"], c2=True)), VOCAB)

    def broken(folder: Path) -> dict:
        raise InputFileError("cannot read", item=str(folder))

    result = evaluate(gold, {"a/one": (tmp_path, "unverified")}, broken)
    assert [r.repo for r in result.failed] == ["a/one"] and "cannot read" in result.failed[0].failed
    assert result.sets["packages_used"].overall.fn == 1 and result.verdict.unknown == 1


# ------------------------------------------------------------------ the command, on real git checkouts

REPOS = {
    "acme+good": {"requirements.txt": "rouge-score==0.1.2\n",
                  "evaluate.py": "from rouge_score import rouge_scorer\n\n"
                                 "scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'], use_stemmer=True)\n"},
    "acme+leftover": {"requirements.txt": "pyrouge==0.1.3\nrouge-score\n",
                      "evaluate.py": "from rouge_score import rouge_scorer\n"
                                     "print(rouge_scorer.RougeScorer(['rouge2']).score('a', 'b'))\n"},
    "acme+none": {"README.md": "# A QA model\nWe report exact match and F1.\n", "main.py": "print('EM', 1.0)\n"},
}


@pytest.fixture
def checkouts(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "co"
    commits = {}
    for name, files in REPOS.items():
        repo = make_repo(root / name, files)
        commits[name.replace("+", "/")] = git(repo, "rev-parse", "HEAD")
    return root, commits


def dev_gold(tmp_path: Path, commits: dict[str, str], **overrides: dict) -> Path:
    lines = [
        entry("acme/good", commits["acme/good"], ["GL/rougescore"], [], True, note="evaluate.py RougeScorer"),
        entry("acme/leftover", commits["acme/leftover"], ["GL/rougescore"], ["BZ/pyrouge"], True,
              note="pyrouge pinned, never imported"),
        entry("acme/none", commits["acme/none"], [], [], False),
    ]
    lines = [{**line, **overrides.get(line["repo"], {})} for line in lines]
    return gold_file(tmp_path, "# three generated repositories", *lines, name="dev.jsonl")


def test_command_scores_the_scan_exactly_and_lists_disagreements(cli, tmp_path, checkouts):
    root, commits = checkouts
    code, out, err = cli("evaluate", "code", "--gold", str(dev_gold(tmp_path, commits)), "--root", str(root),
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    used, present, c2 = data["packages_used"], data["packages_present"], data["eval_reproducible"]
    assert (used["exact"], used["items"], used["tp"], used["fp"], used["fn"]) == (3, 3, 2, 0, 0)
    assert used["precision"] == 1.0 and used["recall"] == 1.0
    # the gold line omits the Perl script that pinned pyrouge would drive: one extra label
    assert (present["exact"], present["tp"], present["fp"], present["fn"]) == (2, 1, 1, 0)
    assert present["labels"]["ROUGE-1.5.5"] == {"tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": None, "f1": None}
    assert (c2["agreed"], c2["proposed_unknown"], c2["agreement"]) == (3, 0, 1.0)
    assert c2["table"] == {"expected true": {"true": 2, "false": 0, "unknown": 0},
                           "expected false": {"true": 0, "false": 1, "unknown": 0}}
    assert [(d["repo"], d["question"]) for d in data["disagreements"]] == [("acme/leftover", "packages_present")]
    leftover = data["disagreements"][0]
    assert leftover["extra"] == ["ROUGE-1.5.5"] and leftover["note"] == "pyrouge pinned, never imported"
    assert leftover["evidence"][0]["file"] == "requirements.txt" and leftover["evidence"][0]["line"] == 1
    assert leftover["evidence"][0]["role"] == "declared" and "BZ/pyrouge drives" in leftover["evidence"][0]["reason"]
    assert {r["commit_check"] for r in data["results"]} == {"verified"}
    assert data["signature"]["scanner"].startswith("review-code-scan")
    assert "3 repositories scanned" in err and "packages_used exact 3/3" in err


def test_command_table_output_survives_brackets_in_repository_text(cli, tmp_path, checkouts, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    root, commits = checkouts
    (root / "acme+leftover" / "evaluate.py").write_text("from rouge_score import rouge_scorer  # [/usr/bin] [b]\n"
                                                        "rouge_scorer.RougeScorer(['rouge1'])\n")
    code, out, err = cli("evaluate", "code", "--gold", str(dev_gold(tmp_path, commits)), "--root", str(root))
    assert code == 0, err
    assert "packages_used" in out and "acme/leftover" in out and "disagreements" in out


def test_command_prints_dev_and_holdout_side_by_side(cli, tmp_path, checkouts, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    root, commits = checkouts
    gold = dev_gold(tmp_path, commits, **{"acme/leftover": {"split": "holdout", "packages_used": []}})
    code, out, err = cli("evaluate", "code", "--gold", str(gold), "--root", str(root))
    assert code == 0, err
    assert "dev and holdout" in out
    row = next(line for line in out.splitlines() if "packages_used exact" in line)
    assert "2/2 (1.000)" in row and "0/1 (0.000)" in row
    assert "holdout: packages_used exact 0/1" in err and "dev: packages_used exact 2/2" in err
    code, out, err = cli("evaluate", "code", "--gold", str(dev_gold(tmp_path, commits)), "--root", str(root))
    assert code == 0 and "dev and holdout" not in out and "holdout:" not in err  # no holdout lines, no split table


def test_min_thresholds_fail_the_command_with_exit_1(cli, tmp_path, checkouts):
    root, commits = checkouts
    gold = str(dev_gold(tmp_path, commits))
    code, _, err = cli("evaluate", "code", "--gold", gold, "--root", str(root), "--min", "packages_used.exact=0.6",
                       "--min", "packages_present.exact=0.9")
    assert code == 1 and "below threshold: packages_present.exact = 0.667 < 0.9" in err
    assert "packages_used.exact" not in err.split("below threshold", 1)[1]  # 1.0 >= 0.6 passes
    code, _, err = cli("evaluate", "code", "--gold", gold, "--root", str(root), "--min", "packages_used.exact")
    assert code == 2 and "NAME=VALUE" in err


def test_missing_checkout_wrong_commit_and_bad_label_name_the_gold_line(cli, tmp_path, checkouts):
    root, commits = checkouts
    gold = dev_gold(tmp_path, commits, **{"acme/none": {"commit": C3}})
    code, _, err = cli("evaluate", "code", "--gold", str(gold), "--root", str(root))
    assert code == 8 and f"{gold}:4" in err and "is at commit" in err and "describe 333333333333" in err
    code, _, err = cli("evaluate", "code", "--gold", str(gold), "--root", str(tmp_path / "elsewhere"))
    assert code == 8 and f"{gold}:2" in err and "checkout not found" in err
    code, _, err = cli("evaluate", "code", "--gold", str(gold))
    assert code == 8 and "no --root" in err
    bad = dev_gold(tmp_path, commits, **{"acme/good": {"packages_present": ["pyrouge"]}})
    code, _, err = cli("evaluate", "code", "--gold", str(bad), "--root", str(root))
    assert code == 8 and f"{bad}:2" in err and "'pyrouge' is not a package label" in err


def test_a_path_in_the_gold_file_needs_no_root(cli, tmp_path, checkouts):
    root, commits = checkouts
    gold = dev_gold(tmp_path, commits, **{name: {"path": f"co/{name.replace('/', '+')}"} for name in commits})
    code, out, err = cli("evaluate", "code", "--gold", str(gold), "--json")
    assert code == 0, err
    assert json.loads(out)["repositories"] == 3


def test_checkouts_without_git_are_checked_against_the_fetch_manifest(tmp_path):
    (tmp_path / "co" / "a+one").mkdir(parents=True)
    gold = read_code_gold(gold_file(tmp_path, entry("a/one", C1, [])), VOCAB)
    assert locate_checkouts(gold, tmp_path / "co")["a/one"][1] == "unverified"
    (tmp_path / "co" / ".gold-commits.json").write_text(json.dumps({"a/one": C1}))
    assert locate_checkouts(gold, tmp_path / "co")["a/one"][1] == "verified"
    (tmp_path / "co" / ".gold-commits.json").write_text(json.dumps({"A/One": C2}))
    with pytest.raises(CodeGoldError, match="is at commit 222222222222"):
        locate_checkouts(gold, tmp_path / "co")


# ------------------------------------------------------------------ gold/code/fetch.py

def run_fetch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "gold" / "code" / "fetch.py"), *args],
                          capture_output=True, text=True, timeout=120)


def test_fetch_checks_out_each_commit_from_a_mirror_or_a_git_host(cli, tmp_path):
    upstream = make_repo(tmp_path / "host" / "acme" / "good.git", REPOS["acme+good"])
    first = git(upstream, "rev-parse", "HEAD")
    (upstream / "evaluate.py").write_text("print('changed after the labelled commit')\n")
    git(upstream, "commit", "-qam", "later")
    mirror = tmp_path / "mirror" / "acme+good"
    mirror.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(upstream), str(mirror / "repo"))
    repos = tmp_path / "repos.txt"
    repos.write_text(f"# the labelled commit, not the newest\nacme/good@{first}\n")

    done = run_fetch("--out", str(tmp_path / "from-mirror"), "--repos", str(repos), "--mirror", str(tmp_path / "mirror"))
    assert done.returncode == 0, done.stderr
    checkout = tmp_path / "from-mirror" / "acme+good"
    assert "RougeScorer" in (checkout / "evaluate.py").read_text() and not (checkout / ".git").exists()
    assert json.loads((tmp_path / "from-mirror" / ".gold-commits.json").read_text()) == {"acme/good": first}
    again = run_fetch("--out", str(tmp_path / "from-mirror"), "--repos", str(repos), "--mirror", str(tmp_path / "mirror"))
    assert again.returncode == 0 and again.stdout == ""  # nothing left to fetch

    cloned = run_fetch("--out", str(tmp_path / "cloned"), "--repos", str(repos), "--git-base",
                       (tmp_path / "host").as_uri())
    assert cloned.returncode == 0, cloned.stderr
    assert git(tmp_path / "cloned" / "acme+good", "rev-parse", "HEAD") == first

    gold = gold_file(tmp_path, entry("acme/good", first, ["GL/rougescore"], [], True), name="g.jsonl")
    for out in ("from-mirror", "cloned"):
        code, stdout, err = cli("evaluate", "code", "--gold", str(gold), "--root", str(tmp_path / out), "--json")
        data = json.loads(stdout)
        assert code == 0 and data["packages_used"]["exact"] == 1 and data["results"][0]["commit_check"] == "verified"

    missing = run_fetch("--out", str(tmp_path / "x"), "--repos", str(repos), "--mirror", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "not in the mirror" in missing.stderr
