"""Every Table 5 rule of patterns/rouge.toml: positive and negative examples.

Each text mentions ROUGE (the preliminary gate), so only the rule under test decides.
The fast engine and the naive reference must agree on every example (see rules_support).
"""

from __future__ import annotations

import itertools

import pytest

from tests.rules_support import labels, packages, rules

PREFIX = "We evaluate with ROUGE. "

PACKAGE_CASES = [
    # label, positive texts, negative texts
    ("DD/sacrerouge", ["scores from SacreROUGE (Deutsch and Roth, 2020)"], ["sacre rouge is not it"]),
    ("ND/easyrouge", ["the easy-rouge package", "easy_rouge", "neural-dialogue-metrics/EasyROUGE",
                      "Neural Dialogue Metrics"], ["an easy task", "neural dialogue models and metrics of"]),
    ("CW/sumeval", ["chakki-works/sumeval", "Chakki Works", "we use sumeval"], ["chakki went to work", "sum eval"]),
    ("JG/pyrougezh", ["py_rouge_zh"], ["py rouge zh"]),
    ("AR/gingo", ["asahi-research/Gingo", "asahi-research Gingo"], ["asahi research gingo", "asahi-research, the big Gingo"]),
    ("DF/gerouge", ["GeRouge for German"], ["ge rouge"]),
    ("GL/seq2seq", ["google/seq2seq/metrics/rouge.py", "seq2seq.metrics.rouge"], ["seq2seq models; metrics such as rouge"]),
    ("GL/rougescore", ["pip install rouge-score", "google-research/rouge",
                       "github.com/google-research/google-research/tree/master/rouge"], ["rouge_score", "google and research rouge"]),
    ("PT/files2rouge", ["files2rouge", "file2rouge"], ["files to rouge"]),
    ("PC/pyrouge", ["github.com/pcyin/PyRouge"], ["p c yin"]),
    ("KZ/rougepapier", ["rouge_papier", "rouge-papier"], ["rouge papers"]),
    ("DI/pyrouge", ["py-rouge", "Diego999/py-rouge"], ["py rouge", "diego99 rouge"]),
    ("PT/pyrouge", ["pltrdy/pyrouge", "pltrdy pyrouge"], ["pltrdy and many others used pyrouge"]),
    ("PT/rouge", ["pltrdy/rouge", "pypi.org/project/rouge/", "pypi/project/rouge"],
     ["pltrdy/pyrouge", "pypi.org/project/some-other-rouge"]),
    ("AJ/pyrouge", ["andersjo/pyrouge"], ["anders jo"]),
    ("BZ/pyrouge", ["bheinzerling/pyrouge", "pypi.org/project/pyrouge", "pypi pyrouge"], ["pyrouge on pip", "heinzerling"]),
    ("TG/pythonrouge", ["tagucci/pythonrouge", "pythonrouge", "by tagucci"], ["python rouge"]),
    ("KG/rouge2", ["kavgan/ROUGE-2.0", "rxnlp.com", "ROUGE 2.0 (Ganesan, 2018)", "JRouge", "Java ROUGE",
                   "kavita-ganesan.com"], ["ROUGE-2 of 20.0", "java and rouge", "kavita ganesan"]),
    ("MS/rouge", ["Maluuba/nlg-eval", "tuetschek/e2e-metrics", "qgevalcap", "nmtpytorch", "pycocoevalcap",
                  "tylin/coco-caption", "by tylin", "coco-caption"], ["nlg eval", "tylinx", "coco caption"]),
    ("github rouge", ["https://github.com/neural-dialogue-metrics/rouge", "github.com/x/y/rouge"],
     ["github.com/" + "a" * 60 + "rouge", "github repository; rouge"]),
    ("unknown pyrouge", ["we use pyrouge"], ["py rouge"]),
    ("ROUGE-1.5.5", ["the official ROUGE script", "the ROUGE toolkit", "ROUGE-1.5.5", "ROUGE155", "ROUGE 1.5.5",
                     "ROUGE (version 1.5.5)", "ROUGEeval", "berouge.com", "isi.edu/~cyl/ROUGE", "isi.edu/ROUGE",
                     "isi.edu/licensed-sw/see/rouge"],
     ["official results; rouge", "ROUGE-1 of 41.2", "rouge tool kit"]),
]


@pytest.mark.parametrize("label,positives,negatives", PACKAGE_CASES, ids=[c[0] for c in PACKAGE_CASES])
def test_package_rule(label: str, positives: list[str], negatives: list[str]) -> None:
    for text in positives:
        assert label in packages(PREFIX + text), f"{label} should match {text!r}"
    for text in negatives:
        assert label not in packages(PREFIX + text), f"{label} should not match {text!r}"


def test_every_package_label_of_table5_is_tested() -> None:
    tested = {c[0] for c in PACKAGE_CASES}
    assert tested == set(rules().package_labels)


def test_generic_and_specific_labels_both_kept_by_the_faithful_file() -> None:
    assert packages(PREFIX + "https://github.com/pltrdy/pyrouge") == {"PT/pyrouge", "unknown pyrouge", "github rouge"}


def test_known_false_positives_of_the_faithful_rules_stay() -> None:
    """Table 5 is high recall by design: these are kept so a rerun matches the paper."""
    assert "ROUGE-1.5.5" in packages("ROUGE-1 of 15.5")  # rouge.{0,15}1.?5.?5.?
    assert "abbrev" in labels("xrouge RX1").flags  # r.?1: any character between R and 1
    assert "GL/rougescore" in packages("higher ROUGE-scores")  # spec section 8, kryscinski
    assert "GL/rougescore" not in packages("higher ROUGE-scores", rules("rouge.toml", "rouge-score-package"))


def test_package_citations_count_anywhere_even_far_from_rouge() -> None:
    text = PREFIX + "x " * 5000 + "SacreROUGE"
    assert "DD/sacrerouge" in packages(text)
    assert packages("ROUGE " + "y " * 3000 + "github tylin coco-caption") >= {"MS/rouge"}


PROTOCOL_CASES = [
    ("protocol", "stemming", ["with stemming", "Porter stemmer", "stems", "a stem"], ["stemmed", "Porterfield", "systems"]),
    ("protocol", "tokenization", ["tokenized", "the tokenizer", "tokenization", "pre-tokenized", "detokenized", "tokenize"],
     ["tokens", "tokenizers"]),
    ("protocol", "sentence tokenization", ["sentence splitting", "split sentences", "sentence tokenization",
                                           "tokenize sentences"], ["sentence-level splits", "splitting the sentence"]),
    ("protocol", "stopword removal", ["stopwords removed", "stop words", "stop-word", "stop word"], ["stopping words", "stop"]),
    ("protocol", "bootstrapping", ["bootstrap resampling", "95% confidence interval", "confidence level"],
     ["boot strap", "confidence scores"]),
    ("variant", "precision", ["precision"], ["precisions", "imprecision"]),
    ("variant", "recall", ["recall"], ["recalls", "recalled"]),
    ("variant", "f-score", ["F1 score", "F-score", "f-measure", "F1-measures", "F1 ", "F-1,", "F1)"],
     ["F12", "F1a", "F score?".replace("?", "") + "board"]),
]


@pytest.mark.parametrize("kind,label,positives,negatives", PROTOCOL_CASES, ids=[c[1] for c in PROTOCOL_CASES])
def test_protocol_and_measure_rules_near_rouge(kind: str, label: str, positives: list[str], negatives: list[str]) -> None:
    field = "protocol" if kind == "protocol" else "variants"
    for text in positives:
        assert label in getattr(labels(PREFIX + text + " ."), field), f"{label} should match {text!r}"
        far = PREFIX + "z " * 400 + text + " ."
        assert label not in getattr(labels(far), field), f"{label} counted far from ROUGE: {text!r}"
    for text in negatives:
        assert label not in getattr(labels(PREFIX + text + " ."), field), f"{label} should not match {text!r}"


def _at_distance(before: int | None = None, after: int | None = None, term: str = "stemming") -> str:
    """ROUGE and a term with exactly `before`/`after` characters between them."""
    if before is not None:  # the term comes first, `before` characters before ROUGE starts
        gap = "." * before
        return f"{term}{gap}ROUGE"
    gap = "." * after  # type: ignore[operator]
    return f"ROUGE{gap}{term}"


@pytest.mark.parametrize("distance,counts", [(1, True), (499, True), (500, True), (501, False), (2000, False)])
def test_window_edges_after_the_mention(distance: int, counts: bool) -> None:
    assert ("stemming" in labels(_at_distance(after=distance)).protocol) is counts


@pytest.mark.parametrize("distance,counts", [(1, True), (500, True), (501, False)])
def test_window_edges_before_the_mention(distance: int, counts: bool) -> None:
    assert ("stemming" in labels(_at_distance(before=distance)).protocol) is counts


def test_window_is_measured_from_the_nearest_of_many_mentions() -> None:
    text = "ROUGE" + "." * 3000 + "precision" + "." * 500 + "rouge" + "." * 3000
    assert labels(text).variants == ("precision",)
    text = "ROUGE" + "." * 3000 + "precision" + "." * 501 + "rouge"
    assert labels(text).variants == ()


PARAMS = [" -c 95 -r 1000 -n 2 -m", " -n 2 -m", " -a -c 95 -m -n 4 -w 1.2"]


@pytest.mark.parametrize("params", PARAMS)
def test_parameter_strings_from_the_paper_are_captured_whole(params: str) -> None:
    text = f"ROUGE-1.5.5 with{params}, then"
    assert labels(text).params == (params,)


def test_parameter_string_capture_is_anywhere_and_keeps_every_distinct_string() -> None:
    text = "ROUGE. " + "w " * 2000 + "run ROUGE-1.5.5.pl -n 2 -m, later -a -c 95 -m -n 4 -w 1.2 again"
    assert labels(text).params == (" -n 2 -m", " -a -c 95 -m -n 4 -w 1.2")


@pytest.mark.parametrize("lookalike", [
    "pip install -U -q torch",                     # pip flags
    "tar -x -z -f data.tgz",                      # tar
    "python train.py -lr 0.1 -bs 32",            # multi-letter flags are not single-letter flags... but see below
    "ls -l -a",
])
def test_lookalike_flags_of_other_tools_are_captured_too_high_recall(lookalike: str) -> None:
    """Table 5's capture is deliberately high-recall: other tools' single-letter flags match
    (a human verifies P1). Multi-letter flags only match in part or not at all."""
    got = labels("ROUGE. " + lookalike).params
    if "-lr" in lookalike:
        assert got == ()  # '-l' must be followed by a space or another flag, so '-lr' is no flag
    else:
        assert got, lookalike


def test_a_single_flag_is_not_a_parameter_string() -> None:
    assert labels("ROUGE with -n 2 only").params == ()
    assert labels("ROUGE scores were 41.2 -1.3 lower").params == ()


def test_parameter_string_lookalikes_rejected_by_the_precise_option() -> None:
    prose = "ROUGE-1, -2 and -L F1 scores"
    assert labels(prose).params == (" -2 and -L F1",)  # what the faithful rule does (spec section 8)
    assert labels(prose, rules("rouge.toml", "params-not-prose")).params == ()
    assert labels("ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m", rules("rouge.toml", "params-not-prose")).params == (
        " -c 95 -r 1000 -n 2 -m",)


FLAG_EXAMPLES = {
    "full": "ROUGE-L",
    "abbrev": "R-1",
    "score": "rouge score",
    "verbatim": "rouge",
}


@pytest.mark.parametrize("full,abbrev,score,verbatim", list(itertools.product([False, True], repeat=4)))
def test_computed_flag_truth_table(full: bool, abbrev: bool, score: bool, verbatim: bool) -> None:
    """Build texts that trigger exactly the chosen flag inputs; computes = score || full || (abbrev && verbatim)."""
    parts = ["xrouge"]  # keeps the preliminary gate open without triggering any flag input
    if full:
        parts.append("ROUGE-L")  # also contains the verbatim word "ROUGE"? no: \brouge\b needs a boundary after
    if abbrev:
        parts.append("R-1")
    if score:
        parts.append("ROUGE scores")  # contains the word ROUGE, i.e. verbatim
    if verbatim:
        parts.append("the ROUGE metric")
    text = " ; ".join(parts)
    got = labels(text)
    present = set(got.flags)
    expected_inputs = {n for n, on in zip(("full", "abbrev", "score", "verbatim"), (full, abbrev, score, verbatim)) if on}
    # "ROUGE-L" and "ROUGE scores" contain the whole word ROUGE, so they imply verbatim
    if full or score:
        expected_inputs.add("verbatim")
    assert present == expected_inputs
    assert got.computes == (score or full or (abbrev and (verbatim or full or score)))


@pytest.mark.parametrize("present,expected", [
    (set(), False), ({"verbatim"}, False), ({"abbrev"}, False), ({"abbrev", "verbatim"}, True),
    ({"full"}, True), ({"score"}, True), ({"full", "abbrev"}, True), ({"score", "abbrev", "verbatim", "full"}, True),
])
def test_flag_expression_over_all_inputs(present: set[str], expected: bool) -> None:
    assert rules().flag_expression.evaluate(present) is expected


def test_flag_expression_full_truth_table() -> None:
    expr = rules().flag_expression
    for bits in itertools.product([False, True], repeat=4):
        names = {n for n, on in zip(("full", "abbrev", "score", "verbatim"), bits) if on}
        full, abbrev, score, verbatim = bits
        assert expr.evaluate(names) is (score or full or (abbrev and verbatim)), names


@pytest.mark.parametrize("text,flag", [
    ("ROUGE-1", "full"), ("ROUGE-2", "full"), ("ROUGE-L", "full"), ("ROUGE-SU", "full"), ("rouge_w", "full"),
    ("ROUGE-N", "full"), ("ROUGE 2", "full"), ("R-1", "abbrev"), ("R2", "abbrev"), ("RL", "abbrev"),
    ("R-SU", "abbrev"), ("ROUGE score", "score"), ("rouge scores", "score"), ("ROUGE", "verbatim"),
])
def test_flag_inputs_positive(text: str, flag: str) -> None:
    assert flag in labels(f"xrouge {text} b").flags


@pytest.mark.parametrize("text,flag", [
    ("ROUGE-12", "full"), ("ROUGE-LX", "full"), ("HROUGE-L", "full"), ("RX12", "abbrev"), ("PR-1", "abbrev"), ("R-10", "abbrev"),
    ("ROUGE-scores", "score"), ("HROUGE", "verbatim"), ("rouges", "verbatim"),
])
def test_flag_inputs_negative(text: str, flag: str) -> None:
    assert flag not in labels(f"xrouge {text} b").flags


def test_a_paper_without_rouge_leaves_the_review_with_no_labels() -> None:
    got = labels("We compute BLEU with sacrebleu; see github.com/x/y. Porter stemmer. R-1 -n 2 -m pyrou ge")
    assert not got.prelim and not got.computes and got.packages == () and got.params == () and got.code_urls == ()


def test_code_urls_found_and_trailing_punctuation_dropped() -> None:
    got = labels("ROUGE. Code: https://github.com/org/repo. Also gitlab.com/a/b), bitbucket.org/c/d")
    assert got.code_urls == ("https://github.com/org/repo", "gitlab.com/a/b", "bitbucket.org/c/d")
