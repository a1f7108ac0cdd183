"""Hostile and broken checkouts: each is evidence or a stated limit, never a crash."""

from __future__ import annotations

import os

import pytest

from code_support import main_script, make_repo, notebook, scan

EVAL = main_script("from rouge_score import rouge_scorer", "print(rouge_scorer.RougeScorer(['rouge1']).score(a, b))")


def test_huge_monorepo_hits_the_file_cap_and_says_unknown(tmp_path):
    files = {f"pkg{i // 50}/module_{i}.py": f"x = {i}\n" for i in range(300)}
    files["zz_eval/evaluate.py"] = EVAL  # sorted last: beyond the cap
    report = scan(make_repo(tmp_path / "r", files), max_files=120)
    assert report.truncated and report.files_seen == 120 and report.skipped["over_file_cap"] == 181
    assert report.eval_reproducible is None and report.verdict == "unknown"
    assert report.eval_reproducible_reason[0].startswith("unknown: truncated")
    assert any(lim.startswith("truncated") for lim in report.limits)


def test_broken_notebook_json_is_a_limit_not_a_crash(tmp_path):
    good = notebook([("code", "!pip install rouge-score\n" + EVAL)])
    report = scan(make_repo(tmp_path / "r", {"broken.ipynb": "{not json", "worse.ipynb": '{"cells": [1, "x", null]}',
                                             "eval.ipynb": good}))
    assert report.skipped["bad_notebook"] == 1
    assert any("broken.ipynb" in lim and "not valid notebook JSON" in lim for lim in report.limits)
    assert report.packages_used == ["GL/rougescore"]


def test_files_ast_cannot_parse_fall_back_to_regex(tmp_path):
    nested = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n"
    py2 = "import pyrouge\n\n\ndef score(d, r):\n    print 'scoring'\n    return pyrouge.Rouge155().convert_and_evaluate()\n"
    report = scan(make_repo(tmp_path / "r", {"deep.py": nested + EVAL, "score_py2.py": py2,
                                             "nulls.py": "import rouge_score\x00\n", "requirements.txt": "rouge-score\n"}))
    assert "GL/rougescore" in report.packages_used
    fallback = next(lim for lim in report.limits if "regex fallback" in lim)
    assert "deep.py" in fallback and "score_py2.py" in fallback
    assert {e.parser for e in report.evidence if e.file == "score_py2.py" and e.source == "call"} == {"regex"}
    assert report.skipped["binary"] == 1  # the NUL byte makes nulls.py binary: not read


def test_binary_non_utf8_symlinks_and_big_files(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("from rouge_score import rouge_scorer\n")
    repo = make_repo(tmp_path / "r", {
        "model.bin": b"\x00\x01rouge_score\x00" * 100,
        "latin1.py": ("# Évaluation\n" + main_script("from sumeval.metrics.rouge import RougeCalculator",
                                                      "print(RougeCalculator().rouge_1(s, r))")).encode("latin-1"),
        "huge.txt": b"# rouge\n" + b"x" * 3_000_000,
        "loop/.keep": "",
    }, symlinks={"escape.py": str(outside / "secret.py"), "escape_dir": str(outside), "inner.py": "latin1.py",
                 "loop/again": "..", "self_link": "self_link"})
    report = scan(repo, max_file_bytes=2_000_000)
    assert report.packages_used == ["CW/sumeval"]  # nothing read through the links, nor from the binary
    assert report.skipped["symlink_outside"] == 2 and report.skipped["symlink"] == 3
    assert report.skipped["binary"] == 1 and report.skipped["too_large_file"] == 1
    assert report.skipped["non_utf8_decoded_leniently"] == 1
    assert any("code.max_file_kb" in lim for lim in report.limits)


def test_unreadable_folder_is_counted(tmp_path):
    repo = make_repo(tmp_path / "r", {"eval.py": EVAL, "private/x.py": "import os\n"}, commit=False)
    os.chmod(repo / "private", 0)
    try:
        if os.access(repo / "private", os.R_OK):
            pytest.skip("running as root: folder permissions do not apply")
        report = scan(repo)
        assert report.skipped["unreadable_folder"] == 1 and report.packages_used == ["GL/rougescore"]
    finally:
        os.chmod(repo / "private", 0o755)


def test_an_empty_or_rouge_free_repository(tmp_path):
    empty = scan(make_repo(tmp_path / "e", {}, commit=False))
    assert empty.packages_used == empty.packages_present == [] and empty.eval_reproducible is False
    plain = scan(make_repo(tmp_path / "p", {"main.py": "import torch\nprint('bleu')\n", "README.md": "# A parser\n"}))
    assert plain.evidence == [] and not plain.prelim and plain.anti_features == []
