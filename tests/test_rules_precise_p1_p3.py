"""The precise file's P1 (parameter strings whole), P3 (significance tests, tokenization by
its unit, stop-word decisions) and computed-flag rules, on sentences of our own in the
shapes of issues 20 and 23; the faithful file's captures stay as Table 5 makes them; and
`review label` stores the attached mention and the rejected matches with their reasons.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import Paper, PaperLabel, PaperText
from review.rules import Engine, load_ruleset
from review.rules.stage import run_label
from review.settings import load_settings
from tests.rules_support import labels, pattern, rules


def precise(text: str):  # type: ignore[no-untyped-def]
    return labels(text, rules("rouge-precise.toml"))


# --------------------------------------------------------------------------- P1

@pytest.mark.parametrize("sentence, expected", [
    ("Scores come from the ROUGE script run with “-c 95 -r 1000 -n 2 -a”.", "-c 95 -r 1000 -n 2 -a"),
    ("Our ROUGE settings were -n 2 -x -a Mode of scoring is the average.", "-n 2 -x -a"),
    ("ROUGE-1.5.5 was run with -m -n 2 -s 4The models are trained on one GPU.", "-m -n 2 -s"),
    ("We call ROUGE with the options -a -c 95 -n 4 -w 1.2.", "-a -c 95 -n 4 -w 1.2"),
    ("ROUGE-1.5.5 arguments: -n 4 -2 -4 -u -m -s -f A.", "-n 4 -2 -4 -u -m -s -f A"),
    ("The ROUGE flags are \"-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m\" for every run.",
     "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"),
])
def test_precise_parameter_strings_are_whole(sentence: str, expected: str) -> None:
    assert precise(sentence).params == (expected,)


FAR = " Training takes two days on one GPU and the learning rate decays linearly." * 12  # > 300 characters


def test_a_footnote_of_rouge_options_far_from_rouge_counts_once() -> None:
    """A footnote lands pages from the sentence naming ROUGE; two of the script's own option
    pairs (-c 95, -r 1000, -w 1.2, -l 100, -n 2) say whose options they are."""
    text = "We evaluate with ROUGE-1 and ROUGE-2." + FAR + " 4with options -n 2 -m -w 1.2 -c 95 -r 1000 -l 100\n"
    assert precise(text).params == ("-n 2 -m -w 1.2 -c 95 -r 1000 -l 100",)
    near = "ROUGE scores are computed with options -n 2 -m -w 1.2 -c 95 -r 1000 -l 100 throughout."
    assert precise(near).params == ("-n 2 -m -w 1.2 -c 95 -r 1000 -l 100",)  # both rules, one string


@pytest.mark.parametrize("far", ["run the tool with -n 2 -m to list files", "use -x 3 -y 4 -z for the parser"])
def test_flags_far_from_rouge_without_two_rouge_pairs_do_not_count(far: str) -> None:
    assert precise("We evaluate with ROUGE-1 and ROUGE-2." + FAR + " " + far + ".").params == ()


def test_precise_prose_with_dashes_is_no_parameter_string() -> None:
    assert precise("ROUGE-2 and -L F1 improve; the -2 and -1 variants of ROUGE are discussed.").params == ()


def test_the_faithful_capture_is_still_table_5s() -> None:
    # Table 5's pattern needs a space before each flag: after a quote the first flag is lost, as published
    assert labels("ROUGE with “-c 95 -r 1000 -n 2 -a”.").params == (" -r 1000 -n 2 -a",)


# --------------------------------------------------------------------------- P0 (issue 20.3)

def test_precise_paper_reporting_rouge_precision_and_recall_in_a_table_computes_rouge() -> None:
    text = ("We report ROUGE results for both systems against the full article. Model Unigram Bigram "
            "Prec Rec Prec Rec ROUGE (full article) SysA 71.2 4.1 25.3 1.3 SysB 70.4 4.8 27.9 1.6")
    assert precise(text).computes
    assert not precise("Many summarizers are tuned for ROUGE, a metric we do not use here.").computes


# --------------------------------------------------------------------------- P3

@pytest.mark.parametrize("sentence", [
    "Our model beats the baselines on ROUGE-1 and ROUGE-L (paired t-test, p < 0.05).",
    "Gains in ROUGE-2 are significant under approximate randomization.",
    "All ROUGE differences in Table 2 have p-values below 0.01 (Wilcoxon signed-rank).",
])
def test_precise_significance_tests_of_rouge_results_are_bootstrapping(sentence: str) -> None:
    assert precise(sentence).protocol == ("bootstrapping",)


def test_precise_a_human_evaluations_significance_is_not_rouges() -> None:
    text = ("We evaluate with ROUGE-1 and ROUGE-2 F1. " + "Outputs are long and fluent overall. " * 8
            + "In the human study, annotators preferred our summaries (t-test, p < 0.05).")
    assert "bootstrapping" not in precise(text).protocol


FILLER = " The model is trained for ten epochs with a learning rate of 0.001 on two GPUs." * 9  # ~750 characters


@pytest.mark.parametrize("note", [
    "Numbers in bold indicate statistical significance based on bootstrap resampling (p = 0.05).",
    "Table 3: Comparison of the three systems with 95% confidence intervals.",
    "To test whether our gains over the baselines are significant, we ran a Wilcoxon signed-rank test.",
])
def test_precise_a_named_test_counts_far_from_the_rouge_table_it_describes(note: str) -> None:
    """A table note or caption floats away from the ROUGE header of its table (over 500
    characters): a named test still counts when nothing else is named in its sentence."""
    assert precise(note + FILLER + " Table 2 reports ROUGE-1, ROUGE-2 and ROUGE-L F1.").protocol == ("bootstrapping",)
    assert precise("We report ROUGE-1, ROUGE-2 and ROUGE-L F1." + FILLER + " 5.1 Setup " + note).protocol == (
        "bootstrapping",)


@pytest.mark.parametrize("far", [
    "Significance is tested with a paired t-test over the human ratings.",
    "Five annotators rated each summary from 1 to 5. The mean score and confidence interval at 95% are shown.",
    "The BLEU gains are significant under a paired bootstrap test.",
    "Differences are significant (p < 0.05).",  # a bare p-value reaches no farther than before
])
def test_precise_a_far_test_of_something_else_does_not_count(far: str) -> None:
    text = far + FILLER + " Table 2 reports ROUGE-1, ROUGE-2 and ROUGE-L F1."
    assert "bootstrapping" not in precise(text).protocol


@pytest.mark.parametrize("sentence", [
    "Differences between systems are all significant, using a one-way ANOVA with posthoc Tukey HSD tests "
    "(p < 0.01). ROUGE-1 and ROUGE-2 F1 are reported in Table 2.",
    "Entries whose correlation with ROUGE-2 is significant (p < 0.05) are marked.",
])
def test_precise_significance_of_ratings_or_correlations_is_not_rouges(sentence: str) -> None:
    assert "bootstrapping" not in precise(sentence).protocol


@pytest.mark.parametrize("sentence", [
    "For Chinese, ROUGE is computed on the character level.",
    "Japanese ROUGE scores use MeCab to split the words first.",
    "The metric is ROUGE F1 (Lin, 2004) calculated on the character level.",
    "Each Chinese word gets a unique id, and we report the ROUGE scores based on these word ids.",
])
def test_precise_tokenization_for_rouge_without_the_word(sentence: str) -> None:
    assert precise(sentence).protocol == ("tokenization",)


def test_precise_a_model_working_at_the_word_level_is_no_rouge_tokenization() -> None:
    text = ("Our extractor reaches 41.2 ROUGE-1 on CNN/DM. Earlier systems applied RL on the word-level, which "
            "can game the metric.")
    assert precise(text).protocol == ()


def test_precise_stop_words_count_only_with_what_was_done_to_them() -> None:
    assert precise("We compute ROUGE-1 after removing stop words.").protocol == ("stopword removal",)
    assert precise("Predicting stopwords is easy, which inflates the ROUGE-1 score.").protocol == ()


def test_precise_stem_from_is_a_verb() -> None:
    assert precise("The ROUGE-L gains stem from better content selection.").protocol == ()


# --------------------------------------------------------------------------- trim and storage

def test_a_trim_pattern_cuts_text_out_of_a_captured_value(tmp_path: Path) -> None:
    path = tmp_path / "trim.toml"
    path.write_text("""schema = 1
name = "trim"
[prelim]
pattern = 'rouge'
[flag]
expression = "named"
[[rules]]
id = "flag.named"
kind = "flag"
label = "named"
patterns = ['rouge']
[[rules]]
id = "params"
kind = "params"
label = "params"
group = 1
patterns = ['rouge options: ([^;]+);']
trim = '\\s*\\(default\\)'
""")
    rs = load_ruleset(path)
    (hit,) = [h for h in Engine(rs).scan("rouge options: -n 2 (default) -m;").hits if h.kind.value == "params"]
    assert hit.value == "-n 2 -m"


def test_label_stores_the_attached_mention_and_rejected_matches(db) -> None:  # type: ignore[no-untyped-def]
    text = ("We report ROUGE-2 recall for all systems. The salience classifier has a precision of 0.8 on "
            "held-out data.")
    with db.session() as s:
        p = Paper(ident="p-attach", source="local", title="t")
        s.add(p)
        s.flush()
        s.add(PaperText(paper_id=p.id, content=text, chars=len(text), outcome="ok", extractor="test"))
    result = run_label(db, load_settings(None), rules_path=pattern("rouge-precise.toml"))
    with db.session() as s:
        row = s.scalars(select(PaperLabel).where(PaperLabel.rule_set_id == result.rule_set_id)).one()
        assert row.variants == ["recall"]
        assert row.extra["attached"][0]["label"] == "recall" and "ROUGE" in row.extra["attached"][0]["attached"]
        (rej,) = [r for r in row.extra["rejected"] if r["label"] == "precision"]
        assert "classifier" in rej["reason"] and rej["snippet"]
