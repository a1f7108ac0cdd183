"""Used or present: the evaluation-path analysis on small real repositories.

Each test is a pattern met in real research code (gold/code/README.md): validation next to
the test metric, RL rewards and oracles, leftovers in requirements, README links, local
modules shadowing a package name, vendored copies, dynamic dispatch, notebooks.
"""

from __future__ import annotations

from code_support import main_script, make_repo, notebook, scan

PERL = "ROUGE-1.5.5"

PYROUGE_EVAL = """from pyrouge import Rouge155


def eval_rouge(dec_dir, ref_dir):
    r = Rouge155()
    r.system_dir, r.model_dir = dec_dir, ref_dir
    return r.output_to_dict(r.convert_and_evaluate())
"""


def roles(report, package: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {e.role for e in report.evidence if e.package == package and not e.superseded}


def test_validation_metric_is_present_test_metric_is_used(tmp_path):
    """A MatchSum-like split: pltrdy's rouge picks checkpoints, the Perl script scores the test set."""
    metrics = PYROUGE_EVAL + """from rouge import Rouge


class ValidMetric:
    def __init__(self):
        self.rouge = Rouge()

    def fast_rouge(self, dec, ref):
        return self.rouge.get_scores(dec, ref)[0]['rouge-1']['f']


class TestMetric:
    def get_metric(self, dec_dir, ref_dir):
        return eval_rouge(dec_dir, ref_dir)
"""
    run = """import argparse
from metrics import ValidMetric, TestMetric


def train_model(args):
    return ValidMetric()


def test_model(args):
    return TestMetric().get_metric(args.dec, args.ref)


if __name__ == '__main__':
    args = argparse.ArgumentParser().parse_args()
    train_model(args) if args.mode == 'train' else test_model(args)
"""
    readme = ("# Model\n\n## Train\n\n```\npython run.py --mode=train\n```\n\n## Test\n\n```\n"
              "python run.py --mode=test\n```\n\n- [pyrouge](https://github.com/bheinzerling/pyrouge) 0.1.3\n"
              "- [rouge](https://github.com/pltrdy/rouge) 1.0.0\n")
    report = scan(make_repo(tmp_path / "r", {"metrics.py": metrics, "run.py": run, "README.md": readme}))
    assert report.packages_used == [PERL, "BZ/pyrouge"] and report.packages_present == ["PT/rouge"]
    assert roles(report, "PT/rouge") == {"training", "declared", "docs"}
    why = next(e.reason for e in report.evidence if e.package == "PT/rouge" and e.role == "training")
    assert "ValidMetric" in why and '"valid"' in why
    used = next(e for e in report.evidence if e.package == "BZ/pyrouge" and e.role == "evaluation")
    assert used.scope == "eval_rouge" and "run.py test_model" in used.reason
    assert report.eval_reproducible is True


def test_rewards_and_oracles_are_present(tmp_path):
    """A hand-written ROUGE for the RL reward and a greedy oracle, the Perl script for the test set."""
    repo = make_repo(tmp_path / "r", {
        "metric.py": "def compute_rouge_n(output, reference, n=1):\n    grams = _n_gram_match(reference, output, n)\n"
                     "    return grams / len(reference)\n",
        "rl.py": "from metric import compute_rouge_n\n\n\ndef reward(out, ref):\n    return compute_rouge_n(out, ref)\n",
        "make_labels.py": main_script("from metric import compute_rouge_n", "print(compute_rouge_n(s, r))"),
        "train_rl.py": main_script("from rl import reward", "reward(a, b)"),
        "evaluate.py": PYROUGE_EVAL + "\n\nif __name__ == '__main__':\n    print(eval_rouge('dec', 'ref'))\n",
        "requirements.txt": "pyrouge\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "BZ/pyrouge"] and report.packages_present == ["custom"]
    custom = next(e for e in report.evidence if e.package == "custom")
    assert custom.role == "training" and custom.identifier == "compute_rouge_n" and "n_gram" in custom.reason


def test_declared_only_packages_are_present(tmp_path):
    """requirements.txt pins packages nothing imports (SimCLS-like): present, never used."""
    repo = make_repo(tmp_path / "r", {
        "requirements.txt": "pyrouge==0.1.3\nrouge==1.0.0\nrouge-score\n",
        "main.py": main_script("from rouge_score import rouge_scorer",
                               "print(rouge_scorer.RougeScorer(['rouge1']).score(a, b))"),
    })
    report = scan(repo)
    assert report.packages_used == ["GL/rougescore"]
    assert report.packages_present == [PERL, "BZ/pyrouge", "PT/rouge"]
    assert roles(report, "PT/rouge") == {"declared"}
    assert "several_packages" not in report.anti_feature_names  # present packages are not "several used"


def test_imported_but_never_called_is_present(tmp_path):
    utils = ("from rouge import Rouge\nfrom pythonrouge.pythonrouge import Pythonrouge\n\n\n"
             "def compute_approx_rouge(h, r):\n    return Rouge(metrics=['rouge-n'], max_n=2).get_scores(h, r)\n\n\n"
             "def compute_perl_rouge(h, r):\n    return Pythonrouge(summary=h, reference=r).calc_score()\n")
    repo = make_repo(tmp_path / "r", {
        "utils.py": utils,
        "eval_pipeline.py": main_script("from utils import compute_perl_rouge, compute_approx_rouge",
                                        "print(compute_perl_rouge(h, r))"),
        "README.md": "pip install py-rouge==1.1 pythonrouge==0.2\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "TG/pythonrouge"] and report.packages_present == ["DI/pyrouge"]
    di = next(e for e in report.evidence if e.package == "DI/pyrouge" and e.source == "call")
    assert di.role == "unreached" and "max_n" in di.reason


def test_the_module_rouge_is_read_by_api_declaration_and_location(tmp_path):
    """pltrdy's rouge or py-rouge by the call's shape, whatever is declared; a local rouge.py is
    the repository's own code (here a copy of seq2seq's ROUGE used for an RL reward)."""
    evaluator = '''def calc(self, kind, hyps, refs):
    if kind == 'rouge':
        from rouge import Rouge
        rouge = Rouge(metrics=['rouge-1', 'rouge-l'])
        return rouge.get_scores(hyps, refs, avg=True)
    elif kind == 'py-rouge':
        from rouge import Rouge
        rouge = Rouge(
            metrics=['rouge-n', 'rouge-l'],
            max_n=2,
            apply_avg=False)
        return rouge.get_scores(hyps, refs)
'''
    from test_code_scan import SEQ2SEQ_COPY

    repo = make_repo(tmp_path / "r", {
        "textbox/evaluate.py": evaluator, "install.sh": "pip uninstall py-rouge\npip install rouge\n",
        "src/rouge.py": SEQ2SEQ_COPY,
        "src/model.py": "from rouge import rouge_l_sentence_level\n\n\ndef reward(s, r):\n"
                        "    return rouge_l_sentence_level(s, r)\n",
        "src/train_rl.py": main_script("from model import reward", "reward(a, b)"),
    })
    report = scan(repo)
    assert report.packages_used == ["PT/rouge", "DI/pyrouge"] and report.packages_present == ["GL/seq2seq"]
    assert report.conditions[3].holds is False and "install the same module `rouge`" in report.conditions[3].reasons[0]
    di = next(e for e in report.evidence if e.package == "DI/pyrouge" and e.source == "call")
    assert "max_n" in di.reason and di.line == 8


def test_pyrouge_fork_named_in_the_readme_but_api_is_bheinzerling(tmp_path):
    """atulkum-like: README links andersjo/pyrouge; the code calls convert_and_evaluate."""
    repo = make_repo(tmp_path / "r", {
        "README.md": "* You need to setup [pyrouge](https://github.com/andersjo/pyrouge) to get the rouge score\n",
        "decode.py": PYROUGE_EVAL + "\n\nif __name__ == '__main__':\n    eval_rouge('d', 'r')\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "BZ/pyrouge"] and report.packages_present == ["AJ/pyrouge"]
    assert report.eval_reproducible is False
    reason = report.conditions[0].reasons[0]
    assert reason.startswith("BZ/pyrouge (used at decode.py:") and "AJ/pyrouge (README.md:1)" in reason


def test_readme_links_tips_and_mentions(tmp_path):
    """A link to a package's repository (even to its folder holding the Perl script) declares it;
    a troubleshooting link or a set-up blog post counts for nothing; a sentence only names it."""
    repo = make_repo(tmp_path / "r", {
        "README.md": "Get ROUGE-1.5.5 from [here](https://github.com/andersjo/pyrouge/tree/master/tools/ROUGE-1.5.5).\n"
                     "If files2rouge fails see https://github.com/pltrdy/files2rouge/issues/9\n"
                     "* [How to setup Perl ROUGE](http://kavita-ganesan.com/rouge-howto)\n"
                     "We did not use sumeval.\n",
        "eval.sh": "perl ROUGE-1.5.5.pl -e data -n 2 settings.xml\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL] and report.packages_present == ["AJ/pyrouge"]
    assert roles(report, "PT/files2rouge") == {"docs"} and roles(report, "KG/rouge2") == {"docs"}
    assert roles(report, "CW/sumeval") == {"docs"}


def test_readme_command_running_a_tool_is_an_entry_point(tmp_path):
    repo = make_repo(tmp_path / "r", {
        "README.md": "## Evaluation\n\nInstall [files2rouge](https://github.com/pltrdy/files2rouge), then:\n\n"
                     "```\nfiles2rouge test.hypo.tokenized test.target.tokenized\n```\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL, "PT/files2rouge"]
    used = next(e for e in report.evidence if e.role == "evaluation")
    assert used.source == "shell" and 'under "Evaluation"' in used.reason


def test_vendored_copy_used_or_not(tmp_path):
    """A copy of coco-caption's rouge called by the evaluation is used; one nothing calls is present."""
    coco = ('"""Computes ROUGE-L metric as described by Lin and Hovey (2004)"""\n\n\ndef my_lcs(string, sub):\n'
            "    return 0\n\n\nclass Rouge():\n    def __init__(self):\n        self.beta = 1.2\n\n"
            "    def calc_score(self, candidate, refs):\n        return 0.0\n\n"
            "    def compute_score(self, gts, res):\n        return 0.0, []\n")
    used = make_repo(tmp_path / "used", {"eval/rouge/rouge.py": coco, "eval/rouge/__init__.py": "",
                                         "eval/ms_eval.py": main_script("from rouge.rouge import Rouge",
                                                                        "print(Rouge().compute_score(g, r))")})
    report = scan(used)
    assert report.packages_used == ["MS/rouge"] and report.eval_reproducible is True
    unused = make_repo(tmp_path / "unused", {"pycocoevalcap/rouge/rouge.py": coco,
                                             "train.py": main_script("from pycocoevalcap.bleu.bleu import Bleu",
                                                                     "print(Bleu(4).compute_score(g, r))")})
    report = scan(unused)
    assert report.packages_used == [] and report.packages_present == ["MS/rouge"]
    assert roles(report, "MS/rouge") == {"vendored"}


def test_dynamic_dispatch_implicit_main_and_the_outermost_weak_word(tmp_path):
    """getattr(utils, metric) reaches every function of utils; tf.app.run() runs main(); with
    no strong word, `train.py` makes its evaluate-during-training validation, unless a
    documented command runs it to evaluate (Global-Encoding's README "Evaluation")."""
    files = {
        "utils/__init__.py": "from .metrics import *\n",
        "utils/metrics.py": "import pyrouge\n\n\ndef rouge(ref, cand):\n    r = pyrouge.Rouge155()\n"
                            "    return r.output_to_dict(r.convert_and_evaluate())\n",
        "train.py": "import tensorflow as tf\nimport utils\n\n\ndef eval_model(metrics):\n"
                    "    return [getattr(utils, m)(1, 2) for m in metrics]\n\n\ndef main(_):\n"
                    "    eval_model(['rouge'])\n\n\nif __name__ == '__main__':\n    tf.app.run()\n",
    }
    report = scan(make_repo(tmp_path / "alone", files))
    assert report.packages_used == [] and report.packages_present == [PERL, "BZ/pyrouge"]
    assert all("train.py main" in e.reason for e in report.evidence if e.role == "training" and e.source == "call")
    readme = "Requirements: pyrouge\n\n## Evaluation\n\n```\npython3 train.py -restore ckpt -mode eval\n```\n"
    report = scan(make_repo(tmp_path / "documented", {**files, "README.md": readme}))
    assert report.packages_used == [PERL, "BZ/pyrouge"] and report.eval_reproducible is True
    used = next(e for e in report.evidence if e.role == "evaluation")
    assert "train.py eval_model" in used.reason and 'under "Evaluation"' in used.reason


def test_notebook_cells_install_and_evaluate(tmp_path):
    nb = notebook([
        ("markdown", "# Evaluation\nWe report ROUGE with the rouge-score package."),
        ("code", "!pip install -q rouge_score evaluate\nimport evaluate"),
        ("code", "rouge = evaluate.load(\"rouge\")\nprint(rouge.compute(predictions=p, references=r))"),
    ])
    report = scan(make_repo(tmp_path / "r", {"notebooks/eval.ipynb": nb}))
    assert report.packages_used == ["GL/rougescore"] and report.eval_reproducible is True
    cells = {(e.cell, e.line, e.source, e.role) for e in report.evidence}
    assert (2, 1, "install", "declared") in cells and (3, 1, "call", "evaluation") in cells
    assert (1, 2, "readme", "docs") in cells


def test_python2_file_is_read_by_the_fallback(tmp_path):
    decode = ("import pyrouge\nimport os\n\n\ndef rouge_eval(ref_dir, dec_dir):\n"
              '    """Evaluate with pyrouge (this docstring names pyrouge)."""\n'
              "    r = pyrouge.Rouge155()\n    print 'running ROUGE'\n    return r.convert_and_evaluate()\n\n\n"
              "if __name__ == '__main__':\n    print rouge_eval('a', 'b')\n")
    report = scan(make_repo(tmp_path / "r", {"decode.py": decode, "README.md": "pip install pyrouge\n"}))
    assert report.packages_used == [PERL, "BZ/pyrouge"]
    calls = [e for e in report.evidence if e.source == "call"]
    assert calls and all(e.parser == "regex" for e in calls)
    assert [e.line for e in calls] == [7, 9]  # the docstring's "pyrouge" is not a use
    assert any("regex fallback" in lim and "decode.py" in lim for lim in report.limits)


def test_subprocess_running_the_perl_script(tmp_path):
    """ymfa-like: the code writes its own config and runs ROUGE-1.5.5.pl; a README saying
    "pyrouge is not required" names pyrouge without making it present."""
    utils = ("import subprocess\n\n\ndef rouge(dec, ref):\n"
             "    return subprocess.check_output(['./ROUGE-1.5.5.pl', '-e', 'data', '-a', '-n', '2'])\n")
    repo = make_repo(tmp_path / "r", {
        "utils.py": utils, "test.py": main_script("from utils import rouge", "print(rouge(d, r))"),
        "README.md": "Put ROUGE-1.5.5.pl under data/. pyrouge is not required.\n",
    })
    report = scan(repo)
    assert report.packages_used == [PERL] and report.packages_present == []
    assert report.eval_reproducible is True


def test_a_vendored_binary_is_found_by_its_path_and_run_by_a_script(tmp_path):
    repo = make_repo(tmp_path / "r", {"lib/rouge2-1.2.2.jar": b"PK\x03\x04\x00\x00binary",
                                      "eval/run_rouge.sh": "java -jar ../lib/rouge2-1.2.2.jar -config cfg.properties\n"})
    report = scan(repo)
    assert report.packages_used == ["KG/rouge2"]
    jar = next(e for e in report.evidence if e.source == "file")
    assert jar.file == "lib/rouge2-1.2.2.jar" and jar.role == "evaluation" and "eval/run_rouge.sh" in jar.reason
