"""Which package a repository uses, from each package's signatures, on real git repositories
built by the tests (no network); fetching targets (clones, archives) and the CLI."""

from __future__ import annotations

import json
import os
import zipfile

import pytest

from code_support import main_script, make_repo, scan
from review.codebases.catalog import load_catalog
from review.codebases.fetch import FetchFailed, git_clone
from review.codebases.runner import scan_target
from review.errors import RuleFileError
from review.settings import Settings

CATALOG = load_catalog()
PERL = "ROUGE-1.5.5"

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

# label -> (files of a repository whose evaluation uses exactly that package, expected packages_used)
CASES: dict[str, tuple[dict[str, str], list[str]]] = {
    PERL: ({"score.sh": "#!/bin/bash\nexport ROUGE_EVAL_HOME=$HOME/ROUGE/data\n"
                        "perl $HOME/ROUGE/ROUGE-1.5.5.pl -e $ROUGE_EVAL_HOME -n 2 -m -a -c 95 config.xml\n"}, [PERL]),
    "BZ/pyrouge": ({"requirements.txt": "pyrouge==0.1.3\n",
                    "rouge_eval.py": main_script("from pyrouge import Rouge155", "r = Rouge155()", "r.system_dir = 'sys'",
                                                 "print(r.convert_and_evaluate())")}, [PERL, "BZ/pyrouge"]),
    "PT/pyrouge": ({"requirements.txt": "git+https://github.com/pltrdy/pyrouge\n",
                    "metric.py": main_script("from pyrouge import Rouge155", "r = Rouge155()",
                                             "print(r.output_to_dict(r.convert_and_evaluate()))")}, [PERL, "PT/pyrouge"]),
    "AJ/pyrouge": ({"README.md": "## Evaluation\n\n    pip install git+https://github.com/andersjo/pyrouge.git\n",
                    "evaluate.py": main_script("from pyrouge import Rouge155",
                                               "print(Rouge155(n_words=100).score_summary(s, refs))")},
                   [PERL, "AJ/pyrouge"]),
    "PT/files2rouge": ({"scripts/run_eval.sh": "#!/bin/sh\nfiles2rouge test.target test.hypo --ignore_empty\n",
                        "README.md": "Install https://github.com/pltrdy/files2rouge first.\n"}, [PERL, "PT/files2rouge"]),
    "PT/rouge": ({"requirements.txt": "rouge==1.0.1\nnumpy\n",
                  "score.py": main_script("from rouge import Rouge", "print(Rouge().get_scores(hyps, refs, avg=True))")},
                 ["PT/rouge"]),
    "DI/pyrouge": ({"requirements.txt": "py-rouge==1.1\n",
                    "score.py": main_script("import rouge", "evaluator = rouge.Rouge(metrics=['rouge-n', 'rouge-l'],",
                                            "    max_n=2, limit_length=True, length_limit=100)",
                                            "print(evaluator.get_scores(hyps, refs))")}, ["DI/pyrouge"]),
    "GL/rougescore": ({"requirements.txt": "torch>=1.8\nrouge-score==0.1.2\n",
                       "evaluate.py": main_script("from rouge_score import rouge_scorer",
                                                  "scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'])",
                                                  "print(scorer.score(ref, hyp))")}, ["GL/rougescore"]),
    "GL/seq2seq": ({"utils/rouge.py": SEQ2SEQ_COPY,
                    "test.py": main_script("from utils.rouge import rouge_l_sentence_level",
                                           "print(rouge_l_sentence_level(hyp, ref))")}, ["GL/seq2seq"]),
    "MS/rouge": ({"requirements.txt": "git+https://github.com/Maluuba/nlg-eval.git@master\n",
                  "eval.py": main_script("from nlgeval import compute_metrics",
                                         "print(compute_metrics(hypothesis='hyp.txt', references=['ref.txt']))")},
                 ["MS/rouge"]),
    "DD/sacrerouge": ({"requirements.txt": "sacrerouge\n",
                       "eval.py": main_script("from sacrerouge.metrics import Rouge",
                                              "print(Rouge(max_ngram=2).score(summary, refs))")}, [PERL, "DD/sacrerouge"]),
    "CW/sumeval": ({"requirements.txt": "sumeval\n",
                    "eval.py": main_script("from sumeval.metrics.rouge import RougeCalculator",
                                           "print(RougeCalculator(stopwords=True).rouge_n(s, r, n=1))")}, ["CW/sumeval"]),
    "TG/pythonrouge": ({"requirements.txt": "pythonrouge\n",
                        "eval.py": main_script("from pythonrouge.pythonrouge import Pythonrouge",
                                               "print(Pythonrouge(summary_file_exist=False, summary=s, reference=r)"
                                               ".calc_score())")}, [PERL, "TG/pythonrouge"]),
    "KG/rouge2": ({"eval/run_rouge.sh": "java -jar rouge2-1.2.2.jar\n"}, ["KG/rouge2"]),
    "LP/rougemetric": ({"requirements.txt": "rouge-metric\n",
                        "eval.py": main_script("from rouge_metric import PyRouge",
                                               "print(PyRouge(rouge_n=(1, 2), rouge_l=True).evaluate(h, r))")},
                       ["LP/rougemetric"]),
    "KZ/rougepapier": ({"setup.py": "setup(install_requires=['rouge_papier'])\n",
                        "eval.py": main_script("import rouge_papier", "print(rouge_papier.compute_rouge(config))")},
                       [PERL, "KZ/rougepapier"]),
    "PC/pyrouge": ({"eval.py": main_script("from PyRouge.pyrouge import Rouge", "print(Rouge().rouge_l(s, r))")},
                   ["PC/pyrouge"]),
    "ND/easyrouge": ({"requirements.txt": "easy-rouge\n",
                      "eval.py": main_script("import easy_rouge", "print(easy_rouge.rouge_n(s, r))")}, ["ND/easyrouge"]),
    "JG/pyrougezh": ({"eval.py": main_script("from py_rouge_zh import Rouge", "print(Rouge().get_scores(s, r))")},
                     ["JG/pyrougezh"]),
    "DF/gerouge": ({"requirements.txt": "gerouge>=0.1\n",
                    "eval.py": main_script("import gerouge", "print(gerouge.score(s, r))")}, ["DF/gerouge"]),
    # named only by a link to its repository: declared, never called
    "AR/gingo": ({"README.md": "We score with https://github.com/asahi-research/Gingo.\n"}, []),
}
GENERIC = set(CATALOG.generic)


def test_every_catalogued_package_has_a_case():
    assert set(CASES) | GENERIC == set(CATALOG.labels)


@pytest.mark.parametrize("label", sorted(CASES))
def test_each_package_is_found_from_its_signatures(tmp_path, label):
    files, used = CASES[label]
    report = scan(make_repo(tmp_path / "repo", {**files, "model.py": "import torch\n"}))
    assert report.packages_used == used, [e.as_dict() for e in report.evidence]
    assert set(used) | set(report.packages_present) >= {label}
    assert all(e.file and e.text and e.role and e.reason for e in report.evidence if not e.superseded)
    assert "several_packages" not in report.anti_feature_names


def test_generic_labels_are_never_an_answer(tmp_path):
    repo = make_repo(tmp_path / "r", {"README.md": "See https://github.com/someone/my-rouge-tool and pyrouge.\n",
                                      "eval.py": "import pyrouge\n"})
    report = scan(repo)
    assert not (set(report.packages_used) | set(report.packages_present)) & GENERIC
    assert report.packages_present == [PERL, "BZ/pyrouge"]  # the bare name pyrouge is bheinzerling's, imported unused


def test_shallow_clone_of_a_local_repository_then_cache(tmp_path):
    src = make_repo(tmp_path / "src", CASES["PT/rouge"][0])
    settings = Settings(data_dir=tmp_path / "data")
    report = scan_target(settings, f"file://{src}")
    assert report.packages_used == ["PT/rouge"] and report.commit and len(report.commit) == 40
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
    assert report.packages_used == [] and report.packages_present == ["GL/rougescore"]  # declared, never called
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "data" / "evil.py").exists()
    assert report.files_seen == 1


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
    assert report.packages_used == [PERL, "PT/files2rouge"] and report.files_seen == 1
    assert not (tmp_path / "escape.py").exists()


def test_github_url_is_cloned_through_git_base_url(tmp_path):
    remote = tmp_path / "remote"
    make_repo(remote / "alice" / "summ.git", CASES["TG/pythonrouge"][0])
    settings = Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"})
    report = scan_target(settings, "https://github.com/alice/summ/tree/main/src")
    assert report.packages_used == [PERL, "TG/pythonrouge"]
    assert (tmp_path / "data" / "clones").exists()


def test_cli_scan_one_directory_as_json(cli, tmp_path):
    repo = make_repo(tmp_path / "repo", {**CASES["GL/rougescore"][0], "# note.py": ""})
    code, out, err = cli("code", "scan", str(repo), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["packages_used"] == obj["packages"] == ["GL/rougescore"] and obj["packages_present"] == []
    assert obj["eval_reproducible"] is True and [c["holds"] for c in obj["conditions"]] == [True] * 4
    assert obj["prelim"] is True and obj["anti_features"] == []
    roles = {(e["file"], e["role"]) for e in obj["evidence"]}
    assert ("requirements.txt", "declared") in roles and ("evaluate.py", "evaluation") in roles
    assert "C2: true" in err


def test_cli_scan_prints_repository_text_with_brackets(cli, tmp_path, monkeypatch):
    """Square brackets in repository text are text, not rich markup (was a MarkupError)."""
    monkeypatch.setenv("COLUMNS", "400")
    repo = make_repo(tmp_path / "repo", {
        "README.md": "# [bold]Model[/bold]\n\npip install rouge  [/]\n",
        "eval.py": main_script("from rouge import Rouge", "print(Rouge().get_scores(h['[/i]'], r[0]))"),
    })
    code, out, err = cli("code", "scan", str(repo))
    assert code == 0, err
    assert "[/i]" in out and "rouge  [/]" in out and "PT/rouge" in out
    assert "C2 true" in out


def test_cli_scan_bad_target(cli, tmp_path):
    code, _out, err = cli("code", "scan", str(tmp_path / "missing-dir"), "--json")
    assert code == 8 and "missing-dir" in err


def test_catalog_errors_name_the_key(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('schema = 2\n[[package]]\nlabel = "X"\nimportz = ["x"]\n')
    with pytest.raises(RuleFileError, match="importz"):
        load_catalog(bad)
    bad.write_text('schema = 2\n[[package]]\nlabel = "X"\napi = ["("]\n')
    with pytest.raises(RuleFileError, match="bad regex in 'api'"):
        load_catalog(bad)
    bad.write_text('schema = 2\n[[package]]\nlabel = "X"\nimplies = ["Y"]\n')
    with pytest.raises(RuleFileError, match="implies names unknown label 'Y'"):
        load_catalog(bad)
    bad.write_text('schema = 2\n[roles]\ntraining = "train"\n')
    with pytest.raises(RuleFileError, match="'training' must be a list"):
        load_catalog(bad)
    bad.write_text('schema = 1\n')
    with pytest.raises(RuleFileError, match="schema 1 is not supported"):
        load_catalog(bad)
