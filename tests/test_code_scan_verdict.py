"""C2, condition by condition (CODE_LABELS.md), and the appendix B anti-features."""

from __future__ import annotations

from code_support import main_script, make_repo, scan

PERL = "ROUGE-1.5.5"
LOAD_METRIC = main_script("from datasets import load_metric", "metric = load_metric('rouge')",
                          "print(metric.compute(predictions=p, references=r))")


def holds(report) -> list[bool | None]:  # type: ignore[no-untyped-def]
    return [c.holds for c in report.conditions]


def test_loader_and_rouge_score_must_be_declared(tmp_path):
    """load_metric('rouge') needs `datasets` and `rouge-score` declared (JiaQiSJTU / Jinhyeong)."""
    undeclared = scan(make_repo(tmp_path / "u", {"run_summarization.py": LOAD_METRIC,
                                                 "README.md": "Requirements: python3.7, pytorch 1.7.0\n"}))
    assert undeclared.packages_used == ["GL/rougescore"] and undeclared.eval_reproducible is False
    assert holds(undeclared) == [False, True, False, True]
    assert "GL/rougescore" in undeclared.conditions[0].reasons[0]
    assert "imports datasets, whose distribution (datasets) is declared nowhere" in undeclared.conditions[2].reasons[0]
    assert any(r.startswith("condition 1 (identifiable) fails") for r in undeclared.eval_reproducible_reason)
    declared = scan(make_repo(tmp_path / "d", {"run_summarization.py": LOAD_METRIC,
                                               "requirements.txt": "datasets==2.10.1\nrouge_score==0.1.2\n"}))
    assert declared.eval_reproducible is True and holds(declared) == [True] * 4


def test_a_repository_computing_no_rouge_is_false(tmp_path):
    report = scan(make_repo(tmp_path / "r", {"README.md": "We report ROUGE-L 41.2 (see the paper).\n",
                                             "train.py": main_script("import torch", "print(torch.ones(1))")}))
    assert report.packages_used == [] and report.eval_reproducible is False
    assert holds(report)[1] is False and "nothing on the evaluation path computes the metric" in report.conditions[1].reasons[0]


def test_two_distributions_installing_one_module_conflict(tmp_path):
    report = scan(make_repo(tmp_path / "r", {
        "requirements.txt": "rouge==1.0.1\npy-rouge==1.1\n",
        "score.py": main_script("from rouge import Rouge", "print(Rouge().get_scores(h, r))"),
    }))
    assert report.packages_used == ["PT/rouge"] and report.packages_present == ["DI/pyrouge"]
    assert holds(report) == [True, True, True, False]
    assert "PT/rouge and DI/pyrouge are both required and install the same module `rouge`" in report.conditions[3].reasons


def test_missing_evaluation_module_unless_a_documented_script_fetches_it(tmp_path):
    """DuReader-like: the coco-caption ROUGE is not in the tree but downloaded by a script."""
    evaluator = main_script("from .rouge_metric.rouge import Rouge", "print(Rouge().compute_score(refs, preds))")
    missing = scan(make_repo(tmp_path / "m", {"utils/__init__.py": "", "utils/dureader_eval.py": evaluator}))
    assert missing.packages_used == [] and "missing_module" in missing.anti_feature_names
    fetch = ('rouge_base_url="https://raw.githubusercontent.com/tylin/coco-caption/master/pycocoevalcap/rouge"\n'
             'mkdir -p rouge_metric\nwget ${rouge_base_url}/rouge.py -O rouge_metric/rouge.py\n')
    fetched = scan(make_repo(tmp_path / "f", {"utils/__init__.py": "", "utils/dureader_eval.py": evaluator,
                                              "utils/download_thirdparty.sh": fetch,
                                              "README.md": "cd utils && bash download_thirdparty.sh\n"}))
    assert fetched.packages_used == ["MS/rouge"] and fetched.eval_reproducible is True
    assert "missing_module" not in fetched.anti_feature_names
    imp = next(e for e in fetched.evidence if e.source == "import")
    assert "fetched by utils/download_thirdparty.sh" in imp.reason


def test_missing_script_on_the_evaluation_path(tmp_path):
    """NAMAS-like: the evaluation script runs a preparation script the release does not contain."""
    report = scan(make_repo(tmp_path / "r", {
        "DUC/eval.sh": "perl $ABS/DUC/prepare4rouge-simple.pl $1 $2\nperl $ROUGE/ROUGE-1.5.5.pl -m -n 2 -w 1.2 conf.xml\n",
        "README.md": "## ROUGE for Eval\n\nGet ROUGE-1.5.5 first, then `./DUC/eval.sh sys ref`.\n",
    }))
    assert report.packages_used == [PERL] and report.eval_reproducible is False
    assert holds(report)[2] is False and "prepare4rouge-simple.pl" in report.conditions[2].reasons[0]
    assert "missing_module" in report.anti_feature_names


def test_a_package_reached_through_a_declared_toolkit_is_identified(tmp_path):
    """SimCLS-like: compare-mt's bundled copy of Google's rouge_scorer, compare_mt in the README."""
    report = scan(make_repo(tmp_path / "r", {
        "README.md": "## Requirements\n\n- compare_mt\n",
        "main.py": main_script("from compare_mt.rouge.rouge_scorer import RougeScorer",
                               "print(RougeScorer(['rouge1']).score(a, b))"),
    }))
    assert report.packages_used == ["GL/rougescore"] and report.eval_reproducible is True


def test_anti_features(tmp_path):
    report = scan(make_repo(tmp_path / "r", {
        "requirements.txt": "rouge-score\npycocoevalcap\n# pyrouge\n",
        "eval.py": main_script("from rouge_score import rouge_scorer", "from pycocoevalcap.rouge.rouge import Rouge",
                               "# from rouge import Rouge", "print(rouge_scorer.RougeScorer(['rougeL']).score(a, b))",
                               "print(Rouge().compute_score(g, r))"),
    }))
    assert report.packages_used == ["GL/rougescore", "MS/rouge"]
    assert report.anti_feature_names == ["commented_out_alternative", "several_packages"]
    commented = {(a.file, a.line) for a in report.anti_features if a.feature == "commented_out_alternative"}
    assert commented == {("requirements.txt", 3), ("eval.py", 6)}
    assert report.eval_reproducible is True  # several packages is an anti-feature, not a failed condition


def test_a_wrapper_and_its_perl_script_are_one_package(tmp_path):
    report = scan(make_repo(tmp_path / "r", {
        "requirements.txt": "pyrouge\n",
        "eval.py": main_script("from pyrouge import Rouge155", "r = Rouge155()", "print(r.convert_and_evaluate())"),
    }))
    assert report.packages_used == [PERL, "BZ/pyrouge"] and "several_packages" not in report.anti_feature_names
    assert report.conditions[0].evidence[0]["reason"] == "ROUGE-1.5.5 is the Perl script that BZ/pyrouge drives"


def test_a_hand_written_rouge_reached_from_evaluation_is_used(tmp_path):
    report = scan(make_repo(tmp_path / "r", {
        "metrics.py": "def rouge_l(cand, ref):\n    lcs = _lcs_table(cand, ref)\n    return lcs / len(ref)\n",
        "evaluate.py": main_script("from metrics import rouge_l", "print(rouge_l(c, r))"),
    }))
    assert report.packages_used == ["custom"] and report.eval_reproducible is True


def test_prose_under_an_installation_heading_declares_nothing(tmp_path):
    readme = ("## Installation\n\nDownload the datasets from our website.\n\n## Requirements\n\n"
              "* transformers 4.7.0\n")
    report = scan(make_repo(tmp_path / "r", {"README.md": readme, "run.py": LOAD_METRIC}))
    assert report.eval_reproducible is False
    assert "imports datasets" in report.conditions[2].reasons[0]
    listed = scan(make_repo(tmp_path / "l", {"README.md": readme + "* datasets\n* rouge-score\n", "run.py": LOAD_METRIC}))
    assert listed.eval_reproducible is True
