"""Package inference on real git repositories built by the tests (no network)."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from code_support import make_repo, notebook
from review.codebases.catalog import load_catalog
from review.codebases.fetch import FetchFailed, git_clone
from review.codebases.runner import scan_target
from review.codebases.scan import scan_tree
from review.errors import RuleFileError
from review.settings import Settings

CATALOG = load_catalog()

SEQ2SEQ_COPY = '''"""ROUGE metric implementation, adapted from tf_seq2seq (sentence and summary level)."""
import numpy as np

def _lcs(x, y):
    return 0

def _recon_lcs(x, y):
    return []

def rouge_l_sentence_level(evaluated_sentences, reference_sentences):
    return 0.0

def _union_lcs(evaluated_sentences, reference_sentence):
    return 0.0

def rouge_l_summary_level(evaluated_sentences, reference_sentences):
    return 0.0
'''

ROUGE_SCORE_COPY = '''# A copy of the rouge_scorer module kept in-tree.
from rouge_score import scoring
from rouge_score import tokenize

class RougeScorer(scoring.BaseScorer):
    def score(self, target, prediction):
        return {}

def _score_lcs(target_tokens, prediction_tokens):
    return None

def _summary_level_lcs(ref_sent, can_sent):
    return None
'''

COCO_COPY = '''#!/usr/bin/env python
# Description : Computes ROUGE-L metric as described by Lin and Hovey (2004)
import numpy as np

def my_lcs(string, sub):
    return 0

class Rouge():
    def __init__(self):
        self.beta = 1.2

    def calc_score(self, candidate, refs):
        return 0.0
'''

# label -> files of a repository that uses exactly that package
CASES: dict[str, dict[str, str]] = {
    "GL/rougescore": {"requirements.txt": "torch>=1.8\nrouge-score==0.1.2\n",
                      "evaluate.py": "from rouge_score import rouge_scorer\n"
                                     "scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'], use_stemmer=True)\n"},
    "MS/rouge": {"requirements.txt": "git+https://github.com/Maluuba/nlg-eval.git@master\n",
                 "eval.py": "from nlgeval import compute_metrics\n"
                            "metrics = compute_metrics(hypothesis='hyp.txt', references=['ref.txt'])\n"},
    "ROUGE-1.5.5": {"score.sh": "#!/bin/bash\nexport ROUGE_EVAL_HOME=$HOME/ROUGE/data\n"
                                "perl $HOME/ROUGE/ROUGE-1.5.5.pl -e $ROUGE_EVAL_HOME -n 2 -m -a -c 95 config.xml\n"},
    "PT/files2rouge": {"run_eval.sh": "#!/bin/sh\nfiles2rouge test.target test.hypo --ignore_empty\n",
                       "README.md": "Install https://github.com/pltrdy/files2rouge first.\n"},
    "BZ/pyrouge": {"requirements.txt": "pyrouge==0.1.3\n",
                   "rouge_eval.py": "from pyrouge import Rouge155\n\nr = Rouge155()\nr.system_dir = 'sys'\n"
                                    "output = r.convert_and_evaluate()\n",
                   "setup_rouge.sh": "pyrouge_set_rouge_path /opt/ROUGE-1.5.5\n"},
    "PT/pyrouge": {"requirements.txt": "git+https://github.com/pltrdy/pyrouge\n",
                   "metric.py": "from pyrouge import Rouge155\nr = Rouge155()\n"},
    "AJ/pyrouge": {"README.md": "## Evaluation\n\n    pip install git+https://github.com/andersjo/pyrouge.git\n"},
    "PT/rouge": {"requirements.txt": "rouge==1.0.1\nnumpy\n",
                 "score.py": "from rouge import Rouge\n\nrouge = Rouge()\nscores = rouge.get_scores(hyps, refs, avg=True)\n"},
    "DI/pyrouge": {"requirements.txt": "py-rouge==1.1\n",
                   "score.py": "import rouge\n\nevaluator = rouge.Rouge(metrics=['rouge-n', 'rouge-l'], max_n=2,"
                               " limit_length=True, length_limit=100)\n"},
    "GL/seq2seq": {"utils/rouge.py": SEQ2SEQ_COPY, "train.py": "from utils.rouge import rouge_l_sentence_level\n"},
    "DD/sacrerouge": {"eval.py": "from sacrerouge.metrics import Rouge\nrouge = Rouge(max_ngram=2)\n"},
    "CW/sumeval": {"eval.py": "from sumeval.metrics.rouge import RougeCalculator\nrc = RougeCalculator(stopwords=True)\n"},
    "TG/pythonrouge": {"eval.py": "from pythonrouge.pythonrouge import Pythonrouge\n"
                                  "rouge = Pythonrouge(summary_file_exist=False, summary=s, reference=r)\n"},
    "KG/rouge2": {"eval/run_rouge.sh": "java -jar rouge2-1.2.2.jar\n"},
    "LP/rougemetric": {"requirements.txt": "rouge-metric\n",
                       "eval.py": "from rouge_metric import PyRouge\nrouge = PyRouge(rouge_n=(1, 2), rouge_l=True)\n"},
    "KZ/rougepapier": {"eval.py": "import rouge_papier\n"},
    "PC/pyrouge": {"eval.py": "from PyRouge.pyrouge import Rouge\nr = Rouge()\n"},
    "ND/easyrouge": {"requirements.txt": "easy-rouge\n"},
    "JG/pyrougezh": {"eval.py": "from py_rouge_zh import Rouge\n"},
    "AR/gingo": {"README.md": "We score with https://github.com/asahi-research/Gingo.\n"},
    "DF/gerouge": {"requirements.txt": "gerouge>=0.1\n"},
    "unknown pyrouge": {"eval.py": "import pyrouge\n"},
    "github rouge": {"README.md": "Scores are computed with https://github.com/someone/my-rouge-tool\n"},
}
VENDORED = {
    "GL/rougescore": {"third_party/rouge_scorer.py": ROUGE_SCORE_COPY},
    "MS/rouge": {"pycocoevalcap/rouge/rouge.py": COCO_COPY},
    "ROUGE-1.5.5": {"tools/ROUGE-1.5.5/ROUGE-1.5.5.pl": "#!/usr/bin/perl -w\n# ROUGE by Chin-Yew LIN\n"
                                                        "$ROUGE_EVAL_HOME = $ENV{'ROUGE_EVAL_HOME'};\n"},
    "GL/seq2seq": {"seq2seq/metrics/rouge.py": SEQ2SEQ_COPY},
}


def scan(root: Path, **kw):  # type: ignore[no-untyped-def]
    return scan_tree(root, CATALOG, **kw)


def test_every_catalogued_package_has_a_case():
    assert set(CASES) == set(CATALOG.labels)


@pytest.mark.parametrize("label", sorted(CASES))
def test_each_package_is_found_from_its_signatures(tmp_path, label):
    repo = make_repo(tmp_path / "repo", {**CASES[label], "model.py": "import torch\n"})
    report = scan(repo)
    assert report.packages == [label], [e.as_dict() for e in report.evidence]
    assert report.prelim == any("rouge" in f"{k} {v}".lower() for k, v in CASES[label].items())
    assert all(e.file and e.text for e in report.evidence)
    assert "several_packages" not in report.anti_feature_names


@pytest.mark.parametrize("label", sorted(VENDORED))
def test_vendored_copies_are_recognised(tmp_path, label):
    repo = make_repo(tmp_path / "repo", VENDORED[label])
    report = scan(repo)
    assert label in report.packages
    assert any(e.source in ("vendored", "file") for e in report.evidence if e.package == label)


def test_wrapper_supersedes_its_perl_script_but_keeps_the_evidence(tmp_path):
    repo = make_repo(tmp_path / "r", {**CASES["BZ/pyrouge"], **CASES["ROUGE-1.5.5"]})
    report = scan(repo)
    assert report.packages == ["BZ/pyrouge"]
    perl = [e for e in report.evidence if e.package == "ROUGE-1.5.5"]
    assert perl and all(e.superseded for e in perl)


def test_evaluate_and_datasets_loaders_mean_rougescore(tmp_path):
    repo = make_repo(tmp_path / "r", {
        "a.py": "import evaluate\nmetric = evaluate.load('rouge')\n",
        "b.py": "from datasets import load_metric\nrouge = load_metric(\"rouge\")\n",
    })
    report = scan(repo)
    assert report.packages == ["GL/rougescore"]
    assert {(e.file, e.line) for e in report.evidence} == {("a.py", 2), ("b.py", 2)}


def test_dependency_file_formats(tmp_path):
    files = {
        "environment.yml": "name: summ\ndependencies:\n  - python=3.8\n  - pip:\n    - rouge-score==0.0.4\n",
        "pyproject.toml": "[tool.poetry.dependencies]\npython = \"^3.8\"\nrouge_score = \"^0.1.2\"\n",
        "setup.py": "from setuptools import setup\nsetup(name='x', description='compute rouge scores',\n"
                    "      install_requires=['pyrouge>=0.1.3', 'nltk'])\n",
        "Pipfile": "[packages]\nsumeval = \"*\"\n",
        "setup.cfg": "[options]\ninstall_requires =\n    rouge-metric>=1.0\n",
    }
    report = scan(make_repo(tmp_path / "r", files))
    by_file = {e.file: e.package for e in report.evidence if e.source == "requirements"}
    assert by_file == {"environment.yml": "GL/rougescore", "pyproject.toml": "GL/rougescore",
                       "setup.py": "BZ/pyrouge", "Pipfile": "CW/sumeval", "setup.cfg": "LP/rougemetric"}
    # 'compute rouge scores' in a description is not the PyPI package `rouge`
    assert "PT/rouge" not in report.packages


def test_notebooks_code_shell_and_markdown_cells(tmp_path):
    nb = notebook([
        ("markdown", "# Evaluation\nWe report ROUGE with the rouge-score package."),
        ("code", "!pip install -q rouge_score evaluate\nimport evaluate"),
        ("code", "rouge = evaluate.load(\"rouge\")\nrouge.compute(predictions=p, references=r)"),
    ])
    report = scan(make_repo(tmp_path / "r", {"notebooks/eval.ipynb": nb}))
    assert report.packages == ["GL/rougescore"]
    cells = {(e.cell, e.line, e.source) for e in report.evidence}
    assert (2, 1, "install") in cells and (3, 1, "call") in cells and (1, 2, "readme") in cells
    assert all(e.file == "notebooks/eval.ipynb" for e in report.evidence)


def test_broken_notebook_is_counted_not_fatal(tmp_path):
    report = scan(make_repo(tmp_path / "r", {"x.ipynb": "{not json", "r.txt": "rouge"}))
    assert report.skipped["bad_notebook"] == 1 and report.prelim


def test_several_packages_and_commented_out_alternatives(tmp_path):
    repo = make_repo(tmp_path / "r", {
        "requirements.txt": "rouge-score\npycocoevalcap\n# pyrouge\n",
        "eval.py": "from rouge_score import rouge_scorer\n# from rouge import Rouge\n"
                   "from pycocoevalcap.rouge.rouge import Rouge as CocoRouge\n",
    })
    report = scan(repo)
    assert report.packages == ["GL/rougescore", "MS/rouge"]
    assert report.anti_feature_names == ["commented_out_alternative", "several_packages"]
    commented = {(a.file, a.line) for a in report.anti_features if a.feature == "commented_out_alternative"}
    assert commented == {("requirements.txt", 3), ("eval.py", 2)}


def test_imports_of_modules_missing_from_the_release(tmp_path):
    repo = make_repo(tmp_path / "r", {
        "src/train.py": "from utils.rouge_eval import evaluate\nfrom .rouge_helper import x\nfrom rouge_local import y\n",
        "src/rouge_local.py": "def y(): pass\n",
    })
    report = scan(repo)
    missing = [(a.file, a.line) for a in report.anti_features if a.feature == "missing_module"]
    assert missing == [("src/train.py", 1), ("src/train.py", 2)]


def test_negatives_nothing_about_rouge(tmp_path):
    repo = make_repo(tmp_path / "r", {"main.py": "import torch\nprint('bleu')\n", "README.md": "# A parser\n"})
    report = scan(repo)
    assert report.packages == [] and not report.prelim and report.anti_features == []


def test_negatives_rouge_mentioned_but_no_package(tmp_path):
    repo = make_repo(tmp_path / "r", {"README.md": "We report ROUGE-L and ROUGE-2 F1.\n",
                                      "results.py": "rouge_l = 0.41  # from the paper\nimport rouge_utils\n",
                                      "rouge_utils.py": "def avg(x): return sum(x) / len(x)\n"})
    report = scan(repo)
    assert report.packages == [] and report.prelim and report.anti_features == []


def test_hostile_checkout_is_contained(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("from rouge_score import rouge_scorer\n")
    big = b"# rouge\n" + b"x" * 3_000_000
    repo = make_repo(tmp_path / "r", {
        "model.bin": b"\x00\x01rouge_score\x00" * 100,
        "latin1.py": "# Évaluation\nfrom sumeval.metrics.rouge import RougeCalculator\n".encode("latin-1"),
        "huge.txt": big,
    }, symlinks={"escape.py": str(outside / "secret.py"), "escape_dir": str(outside), "inner.py": "latin1.py"})
    report = scan(repo, max_file_bytes=2_000_000)
    assert report.packages == ["CW/sumeval"]  # nothing read through the links, nor from the binary
    assert report.skipped["symlink_outside"] == 2 and report.skipped["symlink"] == 1
    assert report.skipped["binary"] == 1 and report.skipped["too_large_file"] == 1
    assert report.skipped["non_utf8_decoded_leniently"] == 1


def test_file_cap_truncates(tmp_path):
    repo = make_repo(tmp_path / "r", {f"f{i:02d}.py": "x = 1\n" for i in range(10)})
    report = scan(repo, max_files=4)
    assert report.truncated and report.files_seen == 4 and report.skipped["over_file_cap"] == 6


def test_shallow_clone_of_a_local_repository_then_cache(tmp_path):
    src = make_repo(tmp_path / "src", CASES["PT/rouge"])
    settings = Settings(data_dir=tmp_path / "data")
    report = scan_target(settings, f"file://{src}")
    assert report.packages == ["PT/rouge"] and report.commit and len(report.commit) == 40
    clones = list((tmp_path / "data" / "clones").rglob("review-complete"))
    assert len(clones) == 1


def test_clone_size_cap_and_failure_leave_no_partial_clone(tmp_path):
    src = make_repo(tmp_path / "src", {"blob.bin": os.urandom(1_500_000)})
    dest = tmp_path / "cache" / "x"
    with pytest.raises(FetchFailed) as err:
        git_clone(f"file://{src}", dest, timeout=60, max_bytes=1_000_000)
    assert err.value.reason == "too_large" and not dest.exists()
    with pytest.raises(FetchFailed) as err:
        git_clone(f"file://{tmp_path / 'nope'}", dest, timeout=60, max_bytes=10_000_000)
    assert err.value.reason in ("not_found", "clone_failed") and not dest.exists()


def test_clone_timeout_against_a_server_that_never_answers(tmp_path, local_server):
    from review.localserver import Reply

    local_server.route("/", Reply(200, b"", delay=20), prefix=True)
    dest = tmp_path / "cache" / "slow"
    with pytest.raises(FetchFailed) as err:
        git_clone(f"{local_server.url}/owner/slow.git", dest, timeout=1.0, max_bytes=10_000_000)
    assert err.value.reason == "clone_timeout" and not dest.exists()


def test_archive_unpacked_safely(tmp_path):
    archive = tmp_path / "code.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("proj-main/requirements.txt", "rouge-score\n")
        zf.writestr("../evil.py", "from pyrouge import Rouge155\n")
        zf.writestr("/abs.py", "from pyrouge import Rouge155\n")
        link = zipfile.ZipInfo("proj-main/link")
        link.external_attr = (0o120777 << 16)
        zf.writestr(link, "/etc/passwd")
    settings = Settings(data_dir=tmp_path / "data")
    report = scan_target(settings, str(archive))
    assert report.packages == ["GL/rougescore"]
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "data" / "evil.py").exists()
    assert report.files_seen == 1


def test_cli_scan_one_directory_as_json(cli, tmp_path):
    repo = make_repo(tmp_path / "repo", {**CASES["GL/rougescore"], "# note.py": ""})
    code, out, err = cli("code", "scan", str(repo), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["packages"] == ["GL/rougescore"] and obj["prelim"] is True
    assert obj["anti_features"] == []
    ev = obj["evidence"][0]
    assert {"package", "file", "line", "text"} <= set(ev)


def test_cli_scan_bad_target(cli, tmp_path):
    code, _out, err = cli("code", "scan", str(tmp_path / "missing-dir"), "--json")
    assert code == 8 and "missing-dir" in err


def test_catalog_errors_name_the_key(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('schema = 1\n[[package]]\nlabel = "X"\nimportz = ["x"]\n')
    with pytest.raises(RuleFileError, match="importz"):
        load_catalog(bad)
    bad.write_text('schema = 1\n[[package]]\nlabel = "X"\ncalls = ["("]\n')
    with pytest.raises(RuleFileError, match="bad regex"):
        load_catalog(bad)
    bad.write_text('schema = 1\n[[package]]\nlabel = "X"\nsupersedes = ["Y"]\n')
    with pytest.raises(RuleFileError, match="unknown label"):
        load_catalog(bad)


def test_tar_archive_refuses_links_and_escapes(tmp_path):
    import io
    import tarfile

    archive = tmp_path / "code.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))

        add("proj/eval.sh", b"files2rouge ref hyp\n")
        add("../../escape.py", b"import pyrouge\n")
        link = tarfile.TarInfo("proj/passwd")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    report = scan_target(Settings(data_dir=tmp_path / "data"), str(archive))
    assert report.packages == ["PT/files2rouge"] and report.files_seen == 1
    assert not (tmp_path / "escape.py").exists()


def test_github_url_is_cloned_through_git_base_url(tmp_path):
    remote = tmp_path / "remote"
    make_repo(remote / "alice" / "summ.git", CASES["TG/pythonrouge"])
    settings = Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"})
    report = scan_target(settings, "https://github.com/alice/summ/tree/main/src")
    assert report.packages == ["TG/pythonrouge"]
    assert (tmp_path / "data" / "clones").exists()
