"""Package citations (P4) under rouge-precise.toml: the error classes of issue 11 and their
near misses, each against the faithful file (whose labels must not change).

The sentences are short, real-shaped ones written for these tests; every check runs the
fast and the naive engine (`labels` asserts they agree).
"""

from __future__ import annotations

import pytest

from tests.rules_support import labels, packages, rules

BODY = "We evaluate all systems with ROUGE-L F1 on the test set. " + "The model is trained for long. " * 40


def precise():  # type: ignore[no-untyped-def]
    return rules("rouge-precise.toml")


@pytest.mark.parametrize("numbers", [
    "the lead baseline reaches ROUGE of (38.15, 15.52, 35.10), which is strong",
    "decay ROUGE-2 0.155 0.157 0.159 0.161 0.163",
    "ROUGE-1 41.55 and ROUGE-2 18.55 on CNN/DM",
])
def test_numbers_after_rouge_are_not_a_version(numbers: str) -> None:
    text = BODY + numbers + "."
    assert "ROUGE-1.5.5" in packages(text)  # Table 5's pattern reads them as 1.5.5
    assert "ROUGE-1.5.5" not in packages(text, precise())


@pytest.mark.parametrize("version", [
    "scores are computed with ROUGE-1.5.5 using its default options",
    "we call the ROUGE-1.5.5.pl script",
    "we use ROUGE v1.5.5 with stemming",
    "the scores come from ROUGE (version 1.5.5)",
    "we run ROUGE155 for evaluation",
    "scored by applying ROUGE ver. 1.55 to the outputs",
])
def test_a_written_version_still_counts(version: str) -> None:
    assert "ROUGE-1.5.5" in packages(BODY + version + ".", precise())


@pytest.mark.parametrize("phrase", [
    "We report ROUGE-1 and ROUGE-L F1 measured by the official script.",
    "Gains are significant by the 95% confidence interval of the ROUGE script.",
    "Summaries are scored using the ROUGE software (Lin, 2004) with its usual options.",
])
def test_lins_script_named_without_a_version(phrase: str) -> None:
    assert "ROUGE-1.5.5" not in packages(BODY + phrase)
    assert "ROUGE-1.5.5" in packages(BODY + phrase, precise())


@pytest.mark.parametrize("phrase", [
    # a wrapper called official is the wrapper, not Lin's script
    "Scores come from the official package pyrouge, run on the outputs.",
    # ROUGE named as a family of metrics, describing the field
    "Most work reports scores of the ROUGE package (Lin, 2004) on news.",
    # another metric's official script, far from any ROUGE mention
    "x " * 150 + "BLEU is computed with the official script of the shared task.",
])
def test_script_phrases_that_are_not_lins_package(phrase: str) -> None:
    assert "ROUGE-1.5.5" not in packages(BODY + phrase, precise())


def test_a_pypi_link_names_its_own_project() -> None:
    text = BODY + "1We use the package pyrouge https://pypi.org/project/pyrouge/ for scoring."
    assert {"BZ/pyrouge", "PT/rouge"} <= packages(text)  # faithful: both
    assert "PT/rouge" not in packages(text, precise())
    assert "BZ/pyrouge" in packages(text, precise())
    assert "PT/rouge" in packages(BODY + "we install https://pypi.org/project/rouge/ for it", precise())
    assert "PT/rouge" in packages(BODY + "we use https://github.com/pltrdy/rouge as the scorer", precise())
    assert "PT/rouge" not in packages(BODY + "see pypi.org/project/rouge-score for details", precise())


def test_github_rouge_needs_rouge_in_the_repository_path() -> None:
    text = BODY + "7https://github.com/someone/textsumm; https://github.com/other/Model ROUGE implementation by them."
    assert "github rouge" in packages(text)
    assert "github rouge" not in packages(text, precise())
    assert "github rouge" in packages(BODY + "we score with https://github.com/someone/rouge-eval here.", precise())


def test_the_faithful_file_does_not_change() -> None:
    faithful = rules()
    assert not any(name in faithful.options for name in ("versions-not-numbers", "rouge-script-names",
                                                         "pypi-package-names", "github-rouge-repository"))
    assert {"versions-not-numbers", "rouge-script-names", "pypi-package-names",
            "github-rouge-repository"} <= set(precise().options)
    assert labels(BODY + "ROUGE of (38.15, 15.52").packages == ("ROUGE-1.5.5",)
