"""A console script declared by the repository's packaging file is an entry point when a
documented command runs it (summ_eval's `calc-scores`): its module is followed like a script."""

from __future__ import annotations

from code_support import make_repo, scan

SCORER = """from rouge_score import rouge_scorer


def main():
    scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'])
    print(scorer.score('a', 'a'))
"""

PYPROJECT = """[project]
name = "textkit"
version = "0.1"
dependencies = ["rouge-score"]

[project.scripts]
evalkit-score = "textkit.metrics:main"
"""

SETUP = """from setuptools import setup

setup(name="textkit", install_requires=["rouge-score"],
      entry_points={"console_scripts": ["evalkit-score = textkit.metrics:main"]})
"""


def _repo(tmp_path, packaging: dict[str, str], readme: str):  # type: ignore[no-untyped-def]
    return make_repo(tmp_path / "r", {"README.md": readme, "textkit/__init__.py": "",
                                      "textkit/metrics.py": SCORER, **packaging})


def test_a_documented_console_script_of_pyproject_reaches_its_module(tmp_path):
    readme = "# Kit\n\n## Evaluation\n\n```\npip install .\nevalkit-score --pred out.txt\n```\n"
    report = scan(_repo(tmp_path, {"pyproject.toml": PYPROJECT}, readme))
    assert report.packages_used == ["GL/rougescore"]
    assert report.eval_reproducible is True


def test_a_documented_console_script_of_setup_py_reaches_its_module(tmp_path):
    readme = "# Kit\n\n## Evaluation\n\n```\n$ evalkit-score --pred out.txt\n```\n"
    report = scan(_repo(tmp_path, {"setup.py": SETUP}, readme))
    assert report.packages_used == ["GL/rougescore"]


def test_a_console_script_no_command_runs_is_not_an_entry_point(tmp_path):
    readme = "# Kit\n\n## Training\n\n```\npython train.py\n```\n"
    report = scan(_repo(tmp_path, {"setup.py": SETUP, "train.py": "print('training')\n"}, readme))
    assert report.packages_used == []
    assert "GL/rougescore" in report.packages_present
