"""Code links under rouge-precise.toml (option `own-code-urls`): only the paper's own code,
whatever the host, repaired where the extraction split the URL; the faithful file still
reports every GitHub/GitLab/Bitbucket link.

The sentences are short, real-shaped ones written for these tests; every check runs the
fast and the naive engine (`labels` asserts they agree).
"""

from __future__ import annotations

import pytest

from review.evaluate.score import url_key
from tests.rules_support import labels, rules

BODY = "We evaluate all systems with ROUGE-L F1 on the test set. " + "The model is trained for long. " * 30
FILLER = "The encoder and the decoder share their embeddings. " * 20


def own(text: str) -> set[str]:
    return {url_key(u) for u in labels(text, rules("rouge-precise.toml")).code_urls}


@pytest.mark.parametrize(("sentence", "key"), [
    ("Our implementation is publicly available at https://github.com/alice/fancy-sum.", "github.com/alice/fancy-sum"),
    ("1Our code is available at https://gitlab.com/bob/graphsum", "gitlab.com/bob/graphsum"),
    ("We release our models and code to support future work: https://github.com/carol/abs-rl",
     "github.com/carol/abs-rl"),
    ("We have released our codes, outputs and processed data in https://github.com/dan/matchit",
     "github.com/dan/matchit"),
    ("3Source code: https://bitbucket.org/erin/summ-tool", "bitbucket.org/erin/summ-tool"),
    ("2Data and code: https://github.com/fay/copy-model", "github.com/fay/copy-model"),
    ("The implementation of our model can be found at https://github.com/gus/treesum.", "github.com/gus/treesum"),
    # project or group pages, with or without a scheme
    ("All code for this paper can be accessed at: https://sumlab.github.io.", "sumlab.github.io"),
    ("1Our code is available at hana.github.io/SUMMIT.", "hana.github.io/summit"),
    ("4All code available at http://nlp.example.org/page/view/880", "nlp.example.org/page/view/880"),
])
def test_a_sentence_that_says_the_code_is_the_papers(sentence: str, key: str) -> None:
    assert own(BODY + sentence + " " + FILLER) == {key}


@pytest.mark.parametrize("sentence", [
    "4We use open code at https://github.com/ivan/basesum with default hyper-parameters.",
    "The baseline code is available as lstm-crf at https://github.com/jan/tagger.",
    "7Retrained with official code (https://github.com/kim/seqae), because of different test data.",
    "Our code is based on https://github.com/lee/transformer-lib and its examples.",
    "5Our BERT baseline is adapted from this implementation https://github.com/max/bert-pt",
    "The dataset is available at https://github.com/ned/news-data.",
    "All training data can be downloaded at https://github.com/oli/sent-data.",
    "2https://github.com/pat/tokenizer 3https://github.com/quinn/parser",
    "We compute ROUGE with the implementation released by the authors (https://github.com/rob/scorer).",
])
def test_other_works_code_tools_and_data_do_not_count(sentence: str) -> None:
    text = BODY + sentence + " " + FILLER
    assert labels(text).code_urls  # the faithful file reports the link
    assert own(text) == set()


def test_a_footnote_after_its_sentence() -> None:
    text = (BODY + "The code will be released on GitHub2. " + FILLER
            + "1https://github.com/someone/else 2https://github.com/sam/hetersum " + FILLER)
    assert own(text) == {"github.com/sam/hetersum"}


def test_a_footnote_on_another_works_code_does_not_count() -> None:
    text = (BODY + "For the extractive baseline we used the implementation provided by the authors9. " + FILLER
            + "9 https://github.com/uma/fast-ext " + FILLER)
    assert own(text) == set()


@pytest.mark.parametrize(("sentence", "url"), [
    ("1We make our code and models available at https: //github.com/vic/qa-rewards",
     "https://github.com/vic/qa-rewards"),
    ("2Data and code: https://github.com/wes/ copycat-opinion", "https://github.com/wes/copycat-opinion"),
    ("1Codes and results are in: https://github.com/ Xorg/Research/tree/master/NLP/ ACL-Graph",
     "https://github.com/Xorg/Research/tree/master/NLP/"),
    ("1Our code and outputs are available at: https://github.com/yan/HC_ Sentence_Summ",
     "https://github.com/yan/HC_Sentence_Summ"),
    ("The implementation can be found at https:// github.com/zoe/matinf.", "https://github.com/zoe/matinf"),
])
def test_urls_split_by_the_extraction_are_joined(sentence: str, url: str) -> None:
    found = labels(BODY + sentence + " " + FILLER, rules("rouge-precise.toml")).code_urls
    assert found == (url,)


def test_the_faithful_file_does_not_change() -> None:
    text = BODY + "Our code is available at https://github.com/alice/fancy-sum. We use https://github.com/nltk/nltk."
    assert "own-code-urls" not in rules().options and "own-code-urls" in rules("rouge-precise.toml").options
    assert labels(text).code_urls == ("https://github.com/alice/fancy-sum", "https://github.com/nltk/nltk")
