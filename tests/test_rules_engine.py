"""The fast engine equals the naive reference: literal prefilters, windows, odd text."""

from __future__ import annotations

import random

import pytest

from review.rules import Engine, NaiveEngine, label_scan
from review.rules.prefilter import Literals, begins_at_word, leading_literals, plan_for, required_literals, windows
from tests.rules_support import rules


@pytest.mark.parametrize("source,literals", [
    (r"\b(?:stems?|stemming|stemmer|porter)\b", ("porter", "stem")),  # at word starts: "stem" of "system" opens none
    (r"github.com.{0,50}rouge", ("github",)),
    (r"asahi-research.{0,5}Gingo", ("asahi-research",)),
    (r"berouge\..{0,2}com", ("berouge.",)),
    (r"\b(?:report|reported|compute|computed|calculate)\s(?:\w{1,20}\s){0,2}?rouge\b", ("rouge",)),  # one word, not three
])
def test_plans_find_required_literals(source: str, literals: tuple[str, ...]) -> None:
    plan = plan_for(source)
    assert plan is not None and plan.literals == literals


@pytest.mark.parametrize("source", [
    r"\br.?(?:1|2|l|n|w|s|su)\b",     # literals shorter than 3 characters
    r"(?:https?://)?github\.com/\w+",  # unbounded width
    r"(?:abc)?def|x",                  # a branch without a literal
    r"\p{Lu}rouge",                    # regex-module syntax the standard parser does not know
    r"(?<=\w+)rouge",                  # unbounded lookbehind
])
def test_patterns_without_a_safe_plan_are_scanned_whole(source: str) -> None:
    assert plan_for(source) is None


@pytest.mark.parametrize("source,literals", [
    (r"\b(?:bleu|meteor|human(?! written)|f1@\d|distinct-?\d)\b", {"bleu", "meteor", "human", "f1@", "distinct"}),
    (r"(?<!\bh)rouge|\b(?-i:R-?[12])\b", {"rouge", "r-1", "r-2", "r1", "r2"}),  # the optional dash spelled out
    (r"\b(?:is|are) (?:an? )?recall", {"is recall", "is a recall", "is an recall", "are recall",
                                        "are a recall", "are an recall"}),
    (r"[.!?](?<=[a-z][.!?])\s+", {".", "!", "?"}),
    (r"\b(?!rouge)(?-i:[A-Z][a-z]+)[- ]F1\b", None),  # may begin with any capital
    (r"(?:bleu)?meteor|x?", None),  # may match the empty string
])
def test_leading_literals_begin_every_match(source: str, literals: set[str] | None) -> None:
    assert leading_literals(source) == (None if literals is None else frozenset(literals))


def test_literals_found_in_one_pass_overlap_and_stay_in_the_stretch() -> None:
    found = Literals(["stem", "stemming", "system"]).find("systems stemming")
    assert found == {"stem": [2, 8], "system": [0], "stemming": [8]}
    assert Literals(["stem", "stemming"]).starts("stemming stem", 1, 13) == [9]
    text = "a stem, systems, stem"
    assert Literals(["stem"]).starts(text, 4, len(text)) == [10, 17]  # positions in the text, not the stretch
    assert Literals(["stem"]).starts(text, 4, len(text), at_word=True) == [17]  # "stem" in "systems" follows "y"
    assert Literals(["stem"]).starts(text, 2, 17) == [2, 10]  # wholly inside the stretch only
    assert Literals(["stem"]).starts(text, -5, 7) == [2]  # a stretch before the text's start is clipped


def test_judge_searches_at_leading_literals_equal_finditer() -> None:
    """The anchors tried only where their leading literals begin find what `finditer` finds,
    in any stretch, whatever the case, the neighbours and the overlaps."""
    ruleset = rules("rouge-precise.toml")
    rng = random.Random(11)
    pieces = ["BLEU", "bleu", "Sacre", "sacreBLEU", "self-bleu", "human", "Human-written", "HUMAN evaluation",
              "acc", "accuracy", "ter", "after", "nli", "NER", "entity", "entities", "f1@5", "distinct-2", "Ä",
              "\u212aappa", "ſpan", "crowd-workers", "crowdsourced", "training data", "data sets", "BPE",
              "word pieces", "ROUGE", "hrouge", "R-1", "R2", "r2", "RG-L", "R-SU4", "EM", "QA", "item", "_QA", "3EM",
              "is recall-oriented", "this recall", "is", "been", "has been shown", "-", ".", " ", " ", "\n",
              "x" * 30, "İ"]
    engine = Engine(ruleset)
    names = [n for n, a in ruleset.anchors.items() if leading_literals(a.source, 2)]
    assert {"other-metric", "training-data", "human-study", "rouge-mention", "short-names", "rouge-in-general"} <= set(names)
    for i in range(40):
        some = pieces if i % 4 == 0 else pieces[:-1]  # "İ" folds to two characters: then no candidates
        text = "".join(rng.choice(some) + rng.choice(["", " "]) for _ in range(300))
        folded = text.casefold()
        find = engine._context_finder(text, folded if len(folded) == len(text) else None, [])
        for name in names:
            compiled = ruleset.anchors[name].compiled
            for _ in range(10):
                lo = rng.randrange(len(text))
                hi = min(len(text), lo + rng.randrange(1, 600))
                assert find(f"anchor:{name}", lo, hi) == [m.span() for m in compiled.finditer(text, lo, hi)]


def test_a_short_beginning_at_a_word_start_is_a_plan_whose_windows_skip_inner_occurrences() -> None:
    plan = plan_for(r"\br[-_]?(?:1|2|l|w)\b")
    assert plan is not None and plan.at_word and {"r1", "r-1", "rl", "rw"} <= set(plan.literals)
    words = ["world", "url_rl", "early", "R1", "xr1", "(R-2)", "9rl", "_r1", "rw."]
    text = (" " * 40).join(words)
    wins = windows(plan, text.casefold(), len(text))
    assert [w for w in words if any(lo <= text.index(w) < hi for lo, hi in wins)] == ["R1", "(R-2)", "rw."]
    assert plan_for(r"\b(?-i:R-?[12])\b") is None  # case-sensitive: the regex module finds it fast itself
    assert not begins_at_word(r"(?<!\bh)rouge|\b(?-i:R-?[12])\b")  # one branch may begin inside a word


def test_required_literals_are_few_and_long_enough() -> None:
    assert required_literals(r"\bstop[ -]?words?\W+(?:[\w-]+\W+){0,3}removed") == frozenset({"removed"})
    assert required_literals(r"\b(?:remov\w*|exclud\w*)\W+stop") == frozenset({"stop"})  # one word, not two
    assert required_literals(r"[<=] ?0?\.\d") is None  # "." alone is everywhere
    assert required_literals(r"\b(?:a1|b2|c3|d4|e5|f6|g7)x") is None  # too many to look for one by one


def test_fast_and_naive_agree_where_short_beginnings_and_required_literals_prefilter() -> None:
    """Word-start windows (flag.abbrev's R1/RL) and windows skipped for lack of a required
    literal (stop words, ids) find what a whole-text search finds, letters or digits before
    the literal, Unicode case variants and all."""
    rng = random.Random(17)
    pieces = ["ROUGE", "R1", "r-1", "R_2", "RL", "rl", "world", "xR1", "_R1", "9RL", "\u212aR1", "ſR1", "éRL", "R-SU4",
              "RG-L", "rg2", "stop words", "stopwords were removed", "removed", "ids", "mapped to ids", "token",
              "ROUGE on ids", "-", ".", " ", "\n", "x" * 200, "y " * 150]
    ruleset = rules("rouge-precise.toml")
    fast, naive = Engine(ruleset), NaiveEngine(ruleset)
    for _ in range(150):
        text = "".join(rng.choice(pieces) + rng.choice(["", " "]) for _ in range(rng.randint(1, 150)))
        a, b = fast.scan(text), naive.scan(text)
        assert a.hits == b.hits and a.rejected == b.rejected, text


def test_windows_merge_and_clip() -> None:
    plan = plan_for("pyrouge")
    assert plan is not None
    text = "pyrouge " + "x" * 100 + "pyrouge pyrouge"
    wins = windows(plan, text.casefold(), len(text))
    assert wins[0][0] == 0 and wins[-1][1] == len(text) and len(wins) == 2


def test_fast_and_naive_agree_on_random_texts_with_case_and_unicode_oddities() -> None:
    rng = random.Random(5)
    pieces = ["ROUGE", "rouge", "ROUGE-L", "R-1", "stem", "sySTEMs", "Porter", "ſtemming", "KAVGAN", "\u212aavgan",
              "straße", "pyrouge", "PyROUGE", "pltrdy/pyrouge", "github.com/a/rouge", "-n", "2", "-m", " -c 95",
              "precision", "recall", "F1", "F-1,", "bootstrap", "stop words", "HROUGE", "İ", "é", ".", "\n",
              "files2rouge", "rouge_papier", "ROUGE 2.0", "nlg-eval", "x" * 300, "y " * 200]
    for faithful_or_precise in (rules(), rules("rouge-precise.toml")):
        fast, naive = Engine(faithful_or_precise), NaiveEngine(faithful_or_precise)
        for _ in range(150):
            text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 120)))
            a = label_scan(fast.scan(text), faithful_or_precise)
            b = label_scan(naive.scan(text), faithful_or_precise)
            assert a.labels == b.labels, text
            assert [(h.rule_id, h.start, h.end) for h in a.hits] == [(h.rule_id, h.start, h.end) for h in b.hits], text


def test_unicode_case_variants_match_like_the_regex_does() -> None:
    # KELVIN SIGN folds to k, LONG S to s: the literal prefilter must not hide these matches
    for text in ("ROUGE with \u212aavgan", "ROUGE and ſtemming"):
        a = label_scan(Engine(rules()).scan(text), rules()).labels
        b = label_scan(NaiveEngine(rules()).scan(text), rules()).labels
        assert a == b
