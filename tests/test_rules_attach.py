"""Attachment (`attach = "NAME"`, `[attachments.NAME]`): a measure or protocol match counts
only when it refers to a mention of the metric, and a rejected match keeps its reason.

The sentences are written for these tests in the shapes issue 23 lists (another metric's
or task's P/R/F1, ROUGE in general, the training data's tokenization, METEOR's stemming).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from review.check import check_text
from review.errors import RuleFileError
from review.rules import Engine, NaiveEngine, label_scan, load_ruleset
from tests.rules_support import labels, rules

MINI = """\
schema = 1
name = "mini"
metric = "ROUGE"

[prelim]
pattern = 'rouge'

[anchors.rouge]
pattern = 'rouge'

[anchors.rival]
pattern = '\\b(?:bleu|meteor|exact match|classifier)\\b'

[anchors.general]
pattern = 'recall[- ]oriented'

[regions.refs]
start = '(?-i:References)'
which = "last"

[attachments.own]
anchor = "rouge"
window = 60
sentence_end = '[.!?]\\s+(?=(?-i:[A-Z]))'
closer = ["rival"]
reject_sentence = ["general"]
reject_regions = ["refs"]

[flag]
expression = "named"

[[rules]]
id = "flag.named"
kind = "flag"
label = "named"
patterns = ['rouge']

[[rules]]
id = "variant.recall"
kind = "variant"
label = "recall"
patterns = ['\\brecall\\b']
near = "rouge"
window = 500
attach = "own"
"""


def mini(tmp_path: Path, text: str = MINI, name: str = "mini.toml"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_ruleset(path)


def scan(ruleset, text: str):  # type: ignore[no-untyped-def]
    fast, slow = Engine(ruleset).scan(text), NaiveEngine(ruleset).scan(text)
    assert fast.hits == slow.hits and fast.rejected == slow.rejected
    return fast


# --------------------------------------------------------------------------- the mechanism

def test_a_match_in_the_sentence_of_a_mention_is_attached_to_it(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    s = scan(rs, "Our systems are compared by ROUGE-2 recall on the test set.")
    (hit,) = [h for h in s.hits if h.kind.value == "variant"]
    assert hit.attached.startswith("rouge 'ROUGE'") and not s.rejected
    assert label_scan(s, rs).labels.variants == ("recall",)


def test_another_metric_named_closer_rejects_the_match_with_its_name(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    s = scan(rs, "We report ROUGE-L for the summaries and the classifier recall for the filter.")
    assert label_scan(s, rs).labels.variants == ()
    (rej,) = s.rejected
    assert "rival ('classifier') is named closer than rouge ('ROUGE')" in rej.reason


def test_a_mention_in_the_sentence_beats_a_closer_rival_in_the_next_one(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    s = scan(rs, "Summaries are scored by ROUGE, and we give its recall. BLEU is reported too.")
    assert label_scan(s, rs).labels.variants == ("recall",)


def test_no_mention_in_the_sentence_or_the_window_rejects(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    text = "We use ROUGE. " + "Filler words go here without the name. " * 4 + "Recall is high for entities."
    s = scan(rs, text)
    assert [r.reason for r in s.rejected] == ["no rouge mention in its sentence or within 60 characters"]


def test_a_cue_in_the_sentence_and_a_region_reject(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    s = scan(rs, "ROUGE is recall-oriented by design. " + "x " * 400 + "References Lin. ROUGE recall study.")
    reasons = [r.reason for r in s.rejected]
    assert reasons == ["its sentence names general ('recall-oriented')", "in the refs region"]


def test_rules_without_attach_are_untouched_and_the_faithful_file_has_no_policy() -> None:
    rs = rules()
    assert not rs.attachments and not any(r.attach for r in rs.rules)
    s = Engine(rs).scan("We report ROUGE recall and BLEU precision.")
    assert not s.rejected and all(h.attached == "" for h in s.hits)


def test_check_shows_the_attached_mention_and_the_rejected_matches_with_reasons(tmp_path: Path) -> None:
    rs = mini(tmp_path)
    result = check_text("ROUGE-1 recall is reported. Our exact match recall is lower than ROUGE.", rs)
    assert [e.label for e in result.evidence if e.kind == "variant"] == ["recall"]
    assert result.evidence[-1].attached or any(e.attached for e in result.evidence)
    out = result.as_dict()
    assert out["rejected"][0]["reason"].startswith("rival ('exact match')") and out["variants"] == ["recall"]


# --------------------------------------------------------------------------- validation

def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(RuleFileError) as info:
        mini(tmp_path, text, "bad.toml")
    return f"{info.value.item}: {info.value}"


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_a_rule_attached_to_an_undeclared_policy_is_named_with_its_line(tmp_path: Path) -> None:
    bad = MINI.replace('attach = "own"', 'attach = "owm"')
    msg = _error(tmp_path, bad)
    assert f"bad.toml:{_line(bad, 'attach = ')}" in msg
    assert "rule 'variant.recall': `attach` names 'owm', which is not declared in [attachments]" in msg


def test_an_option_patch_with_an_undeclared_policy_is_named_with_its_line(tmp_path: Path) -> None:
    bad = MINI.replace('attach = "own"\n', "") + '\n[options.x]\npatch = [{ select_kinds = ["variant"], attach = "nope" }]\n'
    bad = bad.replace('name = "mini"', 'name = "mini"\nenable = ["x"]')
    path = tmp_path / "bad.toml"
    path.write_text(bad)
    with pytest.raises(RuleFileError) as info:
        load_ruleset(path, ["x"])
    assert info.value.item == f"{path}:{_line(bad, 'attach = ')}" and "'nope'" in str(info.value)


@pytest.mark.parametrize("change, message", [
    (('anchor = "rouge"', 'anchor = "rogue"'), "`anchor` must name an anchor declared in [anchors]"),
    (('closer = ["rival"]', 'closer = ["rivals"]'), "`closer` names 'rivals', which is not declared in [anchors]"),
    (('reject_sentence = ["general"]', 'reject_sentence = ["genral"]'), "`reject_sentence` names 'genral'"),
    (('reject_regions = ["refs"]', 'reject_regions = ["bib"]'), "`reject_regions` names 'bib'"),
    (("window = 60", "window = -1"), "`window` must be a number of characters"),
    (("window = 60", "widow = 60"), "unknown key 'widow' in attachment 'own'"),
    (("sentence_end = '[.!?]\\s+(?=(?-i:[A-Z]))'\n", ""), "needs `sentence_end`"),
    (("sentence_end = '[.!?]\\s+(?=(?-i:[A-Z]))'", "sentence_end = '(['"), "invalid regex"),
])
def test_a_bad_attachment_policy_is_named_with_its_line(tmp_path: Path, change: tuple[str, str],
                                                         message: str) -> None:
    assert change[0] in MINI, change
    bad = MINI.replace(*change)
    msg = _error(tmp_path, bad)
    assert message in msg and "attachment 'own'" in msg
    assert f"bad.toml:{_line(bad, '[attachments.own]')}" in msg


# --------------------------------------------------------------------------- the precise file, per error class

def precise(text: str):  # type: ignore[no-untyped-def]
    return labels(text, rules("rouge-precise.toml"))


def test_precise_measures_of_a_qa_task_are_not_rouge_measures() -> None:
    lb = precise("Generated questions are scored by ROUGE-L, while the reader is scored by exact match and F1 "
                 "on the answer spans.")
    assert "f-score" not in lb.variants


def test_precise_a_classifiers_precision_and_recall_are_not_rouge_measures() -> None:
    lb = precise("Our content selector is a binary classifier whose precision and recall on the validation "
                 "data are 71.2 and 64.0; the final summaries reach 40.1 ROUGE-1.")
    assert lb.variants == ()


def test_precise_bertscore_measures_in_a_caption_are_not_rouge_measures() -> None:
    lb = precise("We also evaluate with ROUGE. Table 4: BERTScore precision, recall and F1 of each system.")
    assert lb.variants == ()


def test_precise_rouge_in_general_is_not_the_papers_choice() -> None:
    lb = precise("Since ROUGE is a recall-oriented measure, longer outputs tend to be rewarded.")
    assert lb.variants == ()


def test_precise_the_training_datas_tokenization_is_not_a_rouge_decision() -> None:
    lb = precise("The source articles are tokenized with Stanford CoreNLP and lower-cased. "
                 "Outputs are evaluated with ROUGE-1 and ROUGE-2.")
    assert "tokenization" not in lb.protocol


def test_precise_meteors_stemming_is_not_rouge_stemming() -> None:
    lb = precise("Besides ROUGE-L we report METEOR with its stemming and synonym modules enabled.")
    assert "stemming" not in lb.protocol


def test_precise_keeps_the_papers_own_measures_and_decisions() -> None:
    lb = precise("We compute ROUGE-1, ROUGE-2 and ROUGE-L F1 scores with Porter stemming, and also report "
                 "ROUGE-2 recall.")
    assert lb.variants == ("f-score", "recall") and lb.protocol == ("stemming",)


@pytest.mark.parametrize("sentence, expected", [
    ("Sentences are labelled greedily by the ROUGE-Lrecall of each candidate.", ("recall",)),
    ("The reward is r = ROUGE-LF1 (y, y*) at the end of each episode.", ("f-score",)),
    ("Our oracle maximizes ROUGE-1F (s, g) between sentence pairs.", ("f-score",)),
    ("The extractor is scored by ROUGE-2P and the abstractor by ROUGE-LF.", ("f-score", "precision")),
    ("We use the full-length ROUGE F11 and METEOR2 as our metrics.", ("f-score",)),
])
def test_precise_a_measure_glued_to_its_rouge_variant_counts(sentence: str, expected: tuple[str, ...]) -> None:
    """The extraction glues a subscript measure ("ROUGE-LF") or a footnote marker ("F11") to ROUGE."""
    assert precise(sentence).variants == expected


def test_precise_a_glued_variant_is_not_read_as_a_measure_inside_a_word() -> None:
    assert precise("ROUGE-1 and ROUGE-Lfamily scores are compared; ROUGE-2 F123 is a run id.").variants == ()


def test_precise_the_recall_rouge_is_based_on_is_no_reported_measure() -> None:
    lb = precise("ROUGE-L is used in this paper, which is based on the recall of the longest common subsequence "
                 "and F-measure.")
    assert lb.variants == ("f-score",)


def test_precise_crowd_sourced_measures_in_a_table_are_not_rouge_measures() -> None:
    lb = precise("We align sentences by ROUGE before training. Method P R F1 Greedy 48.4 48.7 48.5 Stable 52.8 "
                 "52.6 52.7 Table 3: Crowd sourced evaluation of content overlap.")
    assert "precision" not in lb.variants and "recall" not in lb.variants


def test_precise_human_written_references_are_no_human_judgement() -> None:
    """"human-written summaries" are what ROUGE compares against, not a human evaluation's rival measure."""
    lb = precise("We report ROUGE on both sets; outputs are truncated to the length of the human-written summaries "
                 "and we compute the F1 score.")
    assert lb.variants == ("f-score",)
    assert precise("ROUGE-1 is reported. Human judges gave an F1 of 0.71 to the fluency labels.").variants == ()
