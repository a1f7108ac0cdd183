"""Full-text search on SQLite FTS5 and PostgreSQL, kept in sync with the texts table."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from review.db.models import Paper, PaperText
from review.search import HIT_END, HIT_START, SearchQueryError, parse_query, search

TEXTS = {
    "xiao": "We use ROUGE-1.5.5 with the options -c 95 -r 1000 -n 2 -m through the py-rouge package.",
    "gren": "Scores are computed with pyrouge; the lead bias of news summarization is strong.",
    "plain": "We report BLEU and chrF for machine translation; no summarization here.",
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
    assert idents(search(db, "ROUGE-1.5.5")) == ["2019.xiao"]
    assert idents(search(db, '"-c 95 -r 1000 -n 2"')) == ["2019.xiao"]
    assert idents(search(db, '"-c 95 -r 2000"')) == []
    assert set(idents(search(db, "summarization"))) == {"2019.gren", "2019.plain"}
    assert idents(search(db, "summarization BLEU")) == ["2019.plain"]  # words are ANDed
    assert search(db, "nothing-like-this") == []


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


def test_empty_query_is_refused():
    with pytest.raises(SearchQueryError):
        parse_query('  "" -- ')
    assert parse_query('pyrouge "-c 95" x') == ["pyrouge", "-c 95", "x"]
