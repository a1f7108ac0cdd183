"""Used means reachable from this repository's evaluation entry points (issue 32).

Small real git repositories, each a pattern from the second batch of gold/code: a copied
framework whose own README and scripts compute ROUGE, a unit test, a Lightning `test_step`
that delegates to `validation_step`, a hand-written ROUGE beside a package, SummEval's
RougeMetric, a package declared only, a wrapper installed from a git URL.
"""

from __future__ import annotations

from code_support import main_script, make_repo, scan

PERL = "ROUGE-1.5.5"

SCORER = """from rouge_score import rouge_scorer


def score(preds, refs):
    scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'])
    return [scorer.score(r, p) for p, r in zip(preds, refs)]
"""


def roles(report, package: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {e.role for e in report.evidence if e.package == package and not e.superseded}


def test_a_copied_frameworks_own_commands_and_scripts_are_not_entry_points(tmp_path):
    """xl-sum / ConvoSumm: a transformers copy whose example README runs py-rouge, next to the paper's scorer."""
    repo = make_repo(tmp_path / "r", {
        "README.md": "# Paper\n\n## Evaluation\n\n```\npython evaluate.py --pred out.txt\n```\n",
        "evaluate.py": SCORER + "\n\nif __name__ == '__main__':\n    print(score(['a'], ['a']))\n",
        "requirements.txt": "rouge-score\n",
        "transformers/examples/bertabs/README.md": "# bertabs\n\n```\npip install py-rouge\npython run_summarization.py\n```\n",
        "transformers/examples/bertabs/requirements.txt": "py-rouge\n",
        "transformers/examples/bertabs/run_summarization.py": main_script(
            "import rouge", "evaluator = rouge.Rouge(metrics=['rouge-n', 'rouge-l'], max_n=2)",
            "print(evaluator.get_scores(['a'], ['a']))"),
    })
    report = scan(repo)
    assert report.packages_used == ["GL/rougescore"]
    assert "DI/pyrouge" in report.packages_present  # declared and coded in the copy, reached by nothing of ours
    assert "evaluation" not in roles(report, "DI/pyrouge")
    assert report.eval_reproducible is True


def test_the_repositorys_own_code_calling_into_a_copy_is_still_followed(tmp_path):
    """The copy is not an entry point, but our documented script importing its scorer reaches it."""
    repo = make_repo(tmp_path / "r", {
        "README.md": "# Paper\n\n## Test\n\n```\npython run_eval.py\n```\n",
        "run_eval.py": main_script("from third_party.scorer import score", "print(score(['a'], ['a']))"),
        "third_party/__init__.py": "",
        "third_party/scorer.py": SCORER,
        "requirements.txt": "rouge-score\n",
    })
    report = scan(repo)
    assert report.packages_used == ["GL/rougescore"]
    used = next(e for e in report.evidence if e.package == "GL/rougescore" and e.role == "evaluation")
    assert "run_eval.py" in used.reason


def test_a_unit_test_is_not_the_evaluation(tmp_path):
    """neu-compression-sum: a test_*.py unittest exercising a rough ROUGE is no entry point."""
    rough = ("def rouge_est_1gram(gold, pred):\n    overlap = set(gold.split()).intersection(pred.split())\n"
             "    return len(overlap)\n")
    unit = ("import unittest\nfrom rough import rouge_est_1gram\n\n\nclass T(unittest.TestCase):\n"
            "    def test_it(self):\n        self.assertEqual(rouge_est_1gram('a b', 'a'), 1)\n\n\n"
            "if __name__ == '__main__':\n    unittest.main()\n")
    report = scan(make_repo(tmp_path / "r", {"rough.py": rough, "tests/test_rough.py": unit}))
    assert report.packages_used == [] and report.packages_present == ["custom"]
    assert roles(report, "custom") == {"unreached"}
    # the same file without unittest is a script named for testing: an entry point, and then used
    plain = main_script("from rough import rouge_est_1gram", "print(rouge_est_1gram('a b', 'a'))")
    report = scan(make_repo(tmp_path / "s", {"rough.py": rough, "test_rough.py": plain}))
    assert report.packages_used == ["custom"]


def test_a_test_step_delegating_to_validation_step_is_the_test(tmp_path):
    """Lightning longformer-style summarizer: test_step returns self.validation_step(...)."""
    lightning = SCORER + """

class Summarizer:
    def validation_step(self, batch, batch_nb):
        return score(batch['pred'], batch['ref'])

    def test_step(self, batch, batch_nb):
        return self.validation_step(batch, batch_nb)


if __name__ == '__main__':
    Summarizer().test_step({'pred': [], 'ref': []}, 0)
"""
    report = scan(make_repo(tmp_path / "r", {"summarization.py": lightning, "requirements.txt": "rouge-score\n"}))
    assert report.packages_used == ["GL/rougescore"]
    # validation alone stays validation: present
    only_val = lightning.replace("return self.validation_step(batch, batch_nb)", "return None")
    report = scan(make_repo(tmp_path / "s", {"summarization.py": only_val, "requirements.txt": "rouge-score\n"}))
    assert report.packages_used == [] and report.packages_present == ["GL/rougescore"]


def test_a_phase_is_not_overridden_by_a_distant_test_caller(tmp_path):
    """MatchSum: ValidMetric reached from test_model through another class's constructor stays validation."""
    metrics = """from rouge import Rouge


class ValidMetric:
    def __init__(self):
        self.rouge = Rouge()

    def fast(self, dec, ref):
        return self.rouge.get_scores(dec, ref)


class Helper:
    def __init__(self):
        self.inner = ValidMetric()
"""
    run = main_script("from metrics import Helper", "test_model()") + "\n\ndef test_model():\n    return Helper()\n"
    report = scan(make_repo(tmp_path / "r", {"metrics.py": metrics, "run.py": run, "requirements.txt": "rouge\n"}))
    assert "PT/rouge" not in report.packages_used


def test_hand_written_rouge_beside_a_package_is_present(tmp_path):
    """spensum / GraphAugmentedSum: the package scores the test set; the repository's own ROUGE is a helper."""
    repo = make_repo(tmp_path / "r", {
        "evaluate.py": SCORER + "\n\ndef eval_rouge_quick(a, b):\n    overlap = set(a).intersection(b)\n"
                                "    return len(overlap)\n\n\nif __name__ == '__main__':\n"
                                "    print(score(['a'], ['a']), eval_rouge_quick('ab', 'a'))\n",
        "requirements.txt": "rouge-score\n",
    })
    report = scan(repo)
    assert report.packages_used == ["GL/rougescore"] and report.packages_present == ["custom"]
    custom = next(e for e in report.evidence if e.package == "custom")
    assert "helper" in custom.reason
    # alone on the evaluation path, the hand-written ROUGE is what produces the scores
    alone = make_repo(tmp_path / "s", {"evaluate.py": "def eval_rouge_quick(a, b):\n"
                                       "    overlap = set(a).intersection(b)\n    return len(overlap)\n\n\n"
                                       "if __name__ == '__main__':\n    print(eval_rouge_quick('ab', 'a'))\n"})
    assert scan(alone).packages_used == ["custom"]


def test_summ_evals_rouge_metric_is_the_perl_script_through_pyrouge(tmp_path):
    """query-focused-sum: report_rouge.py scores with SummEval's RougeMetric; summ-eval is required."""
    report_rouge = main_script("from summ_eval import rouge_metric", "metric = rouge_metric.RougeMetric()",
                               "print(metric.evaluate_batch(['a'], ['a']))")
    repo = make_repo(tmp_path / "r", {
        "README.md": "# Paper\n\n## Report rouge scores\n\n```\nbash scripts/report_rouge_test.sh\n```\n",
        "scripts/report_rouge_test.sh": "export ROUGE_HOME=/path/ROUGE-1.5.5/\npython rouge/report_rouge.py\n",
        "rouge/report_rouge.py": report_rouge,
        "requirements.txt": "summ-eval==0.89\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "BZ/pyrouge"]
    assert report.eval_reproducible is True
    # without the requirement nothing names the package: condition 1 fails
    repo2 = make_repo(tmp_path / "s", {"report_rouge.py": report_rouge})
    report2 = scan(repo2)
    assert report2.packages_used == [PERL, "BZ/pyrouge"] and report2.eval_reproducible is False


def test_a_declared_package_never_called_is_present_and_a_git_url_wrapper_is_used(tmp_path):
    """google/seq2seq-like setup.py pyrouge (never imported); spensum-like rouge_papier from a git URL run by a shell script."""
    evaluate = main_script("import rouge_papier", "df = rouge_papier.compute_rouge('config', max_ngram=4, lcs=True)",
                           "print(df)")
    repo = make_repo(tmp_path / "r", {
        "setup.py": "from setuptools import setup\nsetup(name='x', install_requires=['pyrouge', 'rouge_papier'],\n"
                    "      dependency_links=['git+https://github.com/kedz/rouge_papier.git#egg=rouge_papier'])\n",
        "run_experiments.sh": "bash experiment_scripts/evaluate_summaries.sh > results.txt\n",
        "experiment_scripts/evaluate_summaries.sh": "python python_main/evaluate_rouge.py --rouge-dir $ROUGE_PATH\n",
        "python_main/evaluate_rouge.py": evaluate,
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "KZ/rougepapier"]
    assert "BZ/pyrouge" in report.packages_present and roles(report, "BZ/pyrouge") == {"declared"}
    assert report.eval_reproducible is True


def test_a_script_our_code_names_but_lacks_is_not_a_copied_frameworks_file(tmp_path):
    """Multi-News: Hi_MAP's help text names tools/test_rouge.py, which only the OpenNMT-py copy beside it has."""
    test_rouge = main_script("import pyrouge", "r = pyrouge.Rouge155()", "print(r.convert_and_evaluate())")
    translate = main_script("import argparse", "p = argparse.ArgumentParser()",
                            "p.add_argument('-report_rouge', help='call tools/test_rouge.py on command line')")
    repo = make_repo(tmp_path / "r", {
        "code/Hi_MAP/translate.py": translate,
        "code/OpenNMT-py-baselines/tools/test_rouge.py": test_rouge,
        "code/OpenNMT-py-baselines/requirements.opt.txt": "pyrouge\n",
    })
    report = scan(repo)
    assert report.packages_used == [] and report.packages_present == [PERL, "BZ/pyrouge"]
    assert report.eval_reproducible is False
    # the same script inside our own tree is followed: the string names it
    repo2 = make_repo(tmp_path / "s", {"code/Hi_MAP/translate.py": translate,
                                       "code/Hi_MAP/tools/test_rouge.py": test_rouge})
    assert "BZ/pyrouge" in scan(repo2).packages_used

