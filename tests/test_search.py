"""Full-text search on SQLite FTS5 and PostgreSQL, kept in sync with the texts table."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from review.db.models import Paper, PaperText
from review.search import HIT_END, HIT_START, SearchQueryError, parse_query, search
from review.searchquery import And, Near, Not, Or, Term

TEXTS = {
    "xiao": "We use ROUGE-1.5.5 with the options -c 95 -r 1000 -n 2 -m through the py-rouge package.",
    "gren": "Scores are computed with pyrouge; the lead bias of news summarization is strong.",
    "plain": "We report BLEU and chrF for machine translation; no summarization here.",
    # issue 20: the package's name against the words (real sentences, shortened)
    "pkg": "ROUGE scores are computed with the rouge_score package (pip install rouge-score) "
           "from github.com/google-research/google-research/tree/master/rouge.",
    "words": "We report the ROUGE score of each system; a higher ROUGE score is better.",
    "scorer": "Our own rouge_scorer wrapper calls ROUGE-1.5 as a baseline and ROUGE-1.5.5 -a for the rest.",
    "failed": None,
}


@pytest.fixture
def texts(db):
    ids = {}
    with db.session() as s:
        for i, (key, content) in enumerate(TEXTS.items()):
            p = Paper(ident=f"2019.{key}", source="local", title=f"Paper {key}", authors=[], year=2019 + i)
            s.add(p)
            s.flush()
            s.add(PaperText(paper_id=p.id, content=content, chars=len(content or ""), outcome="ok" if content else
                            "failed", reason=None if content else "encrypted"))
            ids[key] = p.id
    return ids


def idents(hits):
    return [h.ident for h in hits]


def test_words_phrases_and_punctuated_tokens(db, texts):
    assert idents(search(db, "pyrouge")) == ["2019.gren"]
    assert idents(search(db, "py-rouge")) == ["2019.xiao"]
    assert set(idents(search(db, "ROUGE-1.5.5"))) == {"2019.xiao", "2019.scorer"}
    assert idents(search(db, '"-c 95 -r 1000 -n 2"')) == ["2019.xiao"]
    assert idents(search(db, '"-c 95 -r 2000"')) == []
    assert set(idents(search(db, "summarization"))) == {"2019.gren", "2019.plain"}
    assert idents(search(db, "summarization BLEU")) == ["2019.plain"]  # words are ANDed
    assert search(db, "nothing-like-this") == []


def test_identifiers_are_exact(db, texts):
    """`rouge_score` names the package, not the words "ROUGE score" (issue 20, item 5)."""
    assert idents(search(db, "rouge_score")) == [ident("pkg")]
    # a word phrase is the index's: both split "rouge_score" into two words (PostgreSQL stems "scores" too)
    assert set(idents(search(db, '"ROUGE score"'))) == {ident("words"), ident("pkg")}
    assert idents(search(db, "rouge-score")) == [ident("pkg")]
    assert idents(search(db, "rouge_scorer")) == [ident("scorer")]
    # whole identifiers only: ROUGE-1.5 is in "scorer" on its own, and inside ROUGE-1.5.5 elsewhere
    assert idents(search(db, "ROUGE-1.5")) == [ident("scorer")]
    assert idents(search(db, '"ROUGE-1.5.5 -a"')) == [ident("scorer")]
    # inside a URL, dots and slashes kept
    assert idents(search(db, "google-research/tree/master/rouge")) == [ident("pkg")]
    assert idents(search(db, "github.com/google-research")) == [ident("pkg")]
    assert idents(search(db, "rouge")) and search(db, "rouge-s") == []  # "-" joins: rouge-score is not rouge-s


def test_boolean_operators_and_parentheses(db, texts):
    assert set(idents(search(db, "pyrouge OR py-rouge"))) == {ident("gren"), ident("xiao")}
    assert set(idents(search(db, "ROUGE NOT rouge_score"))) == {ident("xiao"), ident("words"), ident("scorer")}
    assert set(idents(search(db, "ROUGE AND NOT (rouge_score OR py-rouge)"))) == {ident("words"), ident("scorer")}
    assert set(idents(search(db, "(pyrouge OR rouge_score) AND summarization"))) == {ident("gren")}
    assert set(idents(search(db, "NOT ROUGE"))) == {ident("gren"), ident("plain")}  # texts only, not failed
    # lower-case words are words, and a quoted operator is searched for
    assert idents(search(db, "BLEU and chrF")) == [ident("plain")]
    assert search(db, '"OR"') == []


def test_near(db, texts):
    # word terms are the index's words: "rouge_score" holds "rouge" and "score" side by side
    assert set(idents(search(db, "NEAR(ROUGE score, 2)"))) == {ident("words"), ident("pkg")}
    assert idents(search(db, "NEAR(ROUGE better, 3)")) == [ident("words")]
    assert idents(search(db, "NEAR(rouge_score package, 1)")) == [ident("pkg")]
    assert search(db, "NEAR(computed package, 1)") == []  # "computed with the rouge_score package": 4 words apart
    assert idents(search(db, "NEAR(computed package, 4)")) == [ident("pkg")]
    assert idents(search(db, "NEAR(package computed)")) == [ident("pkg")]  # order free, 10 words by default
    assert idents(search(db, 'NEAR("-c 95" py-rouge, 12)')) == [ident("xiao")]
    assert search(db, 'NEAR("-c 95" py-rouge, 5)') == []
    assert idents(search(db, "NEAR(rouge package, 0)")) == [ident("xiao")]  # a word in "py-rouge", as indexed


def ident(key):
    return f"2019.{key}"


def test_snippet_highlights_the_match(db, texts):
    hit = search(db, "pyrouge")[0]
    assert f"{HIT_START}pyrouge{HIT_END}" in hit.snippet
    assert hit.as_dict()["snippet"].count("**pyrouge**") == 1
    assert (hit.title, hit.year, hit.paper_id) == ("Paper gren", 2020, texts["gren"])


def test_index_follows_updates_and_deletes(db, texts):
    with db.session() as s:
        t = s.scalar(select(PaperText).where(PaperText.paper_id == texts["plain"]))
        t.content = "Now we also use pyrouge."
    assert set(idents(search(db, "pyrouge"))) == {"2019.gren", "2019.plain"}
    assert idents(search(db, "chrF")) == []
    with db.session() as s:
        s.delete(s.scalar(select(PaperText).where(PaperText.paper_id == texts["gren"])))
    assert idents(search(db, "pyrouge")) == ["2019.plain"]


def test_limit(db, texts):
    assert len(search(db, "summarization", limit=1)) == 1


def test_query_syntax():
    assert parse_query('pyrouge "-c 95" x') == And((Term("pyrouge"), Term("-c 95"), Term("x")))
    assert parse_query("a OR b c") == Or((Term("a"), And((Term("b"), Term("c")))))  # AND binds tighter
    assert parse_query("NOT (a OR b)") == Not(Or((Term("a"), Term("b"))))
    assert parse_query('NEAR(rouge_score "py rouge", 3)') == Near((Term("rouge_score"), Term("py rouge")), 3)
    assert [t.exact for t in (Term("rouge_score"), Term("ROUGE-1.5.5"), Term("ROUGE score"), Term("pyrouge"))] \
        == [True, True, False, False]


@pytest.mark.parametrize(("query", "says"), [
    ('  "" -- ', "nothing to search for"),
    ("(pyrouge OR rouge_score", "'(' is not closed"),
    ("pyrouge)", "unexpected ')'"),
    ("pyrouge AND", "ends too early"),
    ("OR pyrouge", "unexpected 'OR'"),
    ("NEAR(pyrouge)", "two or more terms"),
    ("NEAR(a b, five)", "number of words"),
    ("NEAR a b", "parentheses"),
])
def test_bad_queries_are_refused_with_the_reason(query, says):
    with pytest.raises(SearchQueryError, match=re.escape(says)):
        parse_query(query)
