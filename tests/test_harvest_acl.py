"""`harvest_acl` against anthology-shaped XML: fields, filters, reruns, broken files, git update."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import Paper, Run, SourceRecord
from review.errors import FetchError, InputFileError
from review.harvest.acl import harvest_acl
from tests.conftest import shared_path
from tests.harvest_support import ACL_DATA, counts_of, paper, settings_for


def test_fields_of_a_new_style_paper(db, tmp_path):
    result = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA)
    p = paper(db, "2019.tiny-1.1")
    assert p.title == "ROUGE Scores for English and k-best Lists"  # no fixed-case / tex-math markup
    assert p.authors == ["Grace Hopper", "Ada Lovelace", "Alan Turing"]  # <last> before <first> too
    assert p.url == "https://aclanthology.org/2019.tiny-1.1/"
    assert p.pdf_url == "https://aclanthology.org/2019.tiny-1.1.pdf"
    assert p.pdf_crc32 == "a1b2c3d4"
    assert (p.venue, p.venues, p.year, p.month) == ("tiny", ["tiny", "ws"], 2019, "July")
    assert p.booktitle == "Proceedings of the First Tiny Workshop on Summarization"
    assert (p.address, p.publisher, p.pages) == ("Florence, Italy", "Association for Computational Linguistics", "1–10")
    assert (p.doi, p.bibkey) == ("10.18653/v1/2019.tiny-1.1", "hopper-etal-2019-rouge")
    assert p.pwc_code == [{"url": "https://github.com/example/rouge-lists", "name": "example/rouge-lists", "official": True},
                          {"url": "https://github.com/other/reimpl", "name": "other/reimpl", "official": False}]
    assert p.source == "acl" and not p.removed and not p.retracted
    assert result.run_id is not None


def test_status_frontmatter_external_and_missing_urls(db, tmp_path):
    result = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA)
    retracted, removed = paper(db, "2019.tiny-1.4"), paper(db, "2019.tiny-1.5")
    assert retracted.retracted and "2019-09-01" in retracted.status_note and "reproduced" in retracted.status_note
    assert removed.removed and "Duplicate submission" in removed.status_note
    assert paper(db, "2019.tiny-1.6").pdf_url == "https://example.org/papers/external.pdf"
    nourl = paper(db, "2019.tiny-1.7")
    assert nourl.pdf_url is None and "no <url>" in nourl.pdf_unresolved_reason
    with db.session() as s:
        idents = set(s.scalars(select(Paper.ident)))
    assert "2019.tiny-1.0" not in idents and "P02-1000" not in idents  # frontmatter is not a paper
    assert result.not_papers == 2
    old = paper(db, "P02-1040")
    assert old.title.startswith("Bleu: a Method") and old.venue == "acl" and old.year == 2002  # letter P
    assert result.pdf_unresolved == 1


def test_default_filters_and_overrides(db, tmp_path):
    result = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA)
    assert result.added == 9
    assert dict(result.skipped) == {"year": 1, "cutoff": 1}  # W01 (2001), the 2023 volume
    more = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, from_year=2000, cutoff="")
    assert more.added == 2 and more.unchanged == 9
    assert paper(db, "W01-1001").venues == ["ws"]  # venue from the ws.yaml volumes list


def test_venue_include_and_exclude(db, tmp_path):
    only = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, venues_include=["acl"])
    assert only.added == 2 and only.skipped["venue"] == 7
    s = settings_for(tmp_path, venues_exclude=["ws"])
    rest = harvest_acl(db, s, data_dir=ACL_DATA)
    assert rest.added == 0 and rest.unchanged == 2 and rest.skipped["venue"] == 7


def test_rerun_updates_changed_adds_new_never_duplicates(db, tmp_path):
    data = tmp_path / "acl"
    shutil.copytree(ACL_DATA, data)
    s = settings_for(tmp_path)
    first = harvest_acl(db, s, data_dir=data)
    assert (first.added, first.updated, first.unchanged) == (9, 0, 0)
    again = harvest_acl(db, s, data_dir=data)
    assert (again.added, again.updated, again.unchanged, again.duplicates) == (0, 0, 9, 0)
    xml = data / "data" / "xml" / "2019.tiny.xml"
    text = xml.read_text(encoding="utf-8").replace("<title>A Removed Paper</title>", "<title>A Removed Paper, Renamed</title>")
    text = text.replace('<paper id="7">', '<paper id="8">\n      <title>A New Paper</title>\n'
                        '      <url hash="01234567">2019.tiny-1.8</url>\n    </paper>\n    <paper id="7">')
    xml.write_text(text, encoding="utf-8")
    third = harvest_acl(db, s, data_dir=data)
    assert (third.added, third.updated, third.unchanged) == (1, 1, 8)
    assert paper(db, "2019.tiny-1.5").title == "A Removed Paper, Renamed"
    assert counts_of(db) == {"papers": 10, "records": 10}
    with db.session() as s2:
        rec = s2.scalars(select(SourceRecord).where(SourceRecord.source_id == "2019.tiny-1.5")).one()
        assert rec.run_id == third.run_id


def test_broken_file_is_recorded_and_the_rest_goes_on(db, tmp_path):
    data = tmp_path / "acl"
    shutil.copytree(ACL_DATA, data)
    (data / "data" / "xml" / "2020.broken.xml").write_text("<collection id='2020.broken'><volume id='1'><meta>",
                                                          encoding="utf-8")
    result = harvest_acl(db, settings_for(tmp_path), data_dir=data)
    assert result.failed == 1 and result.failures[0].startswith("2020.broken.xml: unreadable XML")
    assert result.added == 9
    with db.session() as s:
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.counts["failed"] == 1 and run.counts["added"] == 9


def test_missing_checkout_is_a_clear_input_error(db, tmp_path):
    with pytest.raises(InputFileError) as err:
        harvest_acl(db, settings_for(tmp_path), data_dir=tmp_path / "nowhere")
    assert "data/xml" in str(err.value)
    with db.session() as s:
        assert s.scalars(select(Run.status)).all() == ["failed"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def test_update_clones_then_pulls_a_git_repository(db, tmp_path):
    upstream = tmp_path / "upstream"
    shutil.copytree(ACL_DATA, upstream)
    (upstream / "data" / "xml" / "W01.xml").unlink()
    _git(upstream, "init", "-q", "-b", "master")
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-q", "-m", "first")
    s = settings_for(tmp_path, acl_repo_url=str(upstream))
    clone = tmp_path / "data" / "acl-anthology"
    first = harvest_acl(db, s, update=True)  # default place: <data_dir>/acl-anthology
    assert (clone / ".git").is_dir() and first.added == 9
    shutil.copy(ACL_DATA / "data" / "xml" / "W01.xml", upstream / "data" / "xml" / "W01.xml")
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-q", "-m", "second")
    second = harvest_acl(db, s, update=True, from_year=2001)
    assert (second.added, second.unchanged) == (1, 9)
    assert (clone / "data" / "xml" / "W01.xml").is_file()
    with db.session() as s2:
        run = s2.get(Run, second.run_id)
        assert len(run.signature["acl_data_commit"]) == 40


def test_update_refuses_a_folder_that_is_not_a_clone(db, tmp_path):
    target = tmp_path / "notaclone"
    (target / "keep.txt").parent.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(FetchError) as err:
        harvest_acl(db, settings_for(tmp_path, acl_repo_url=str(tmp_path / "x")), data_dir=target, update=True)
    assert err.value.reason == "not_a_clone" and (target / "keep.txt").read_text() == "mine"


# -- the real anthology files (../shared/fixtures; skipped on a fresh clone) -------------------

def test_real_fixture_collections(db, tmp_path):
    root = shared_path("acl-anthology")
    result = harvest_acl(db, settings_for(tmp_path), data_dir=root, cutoff="")
    # 16 gem + 24 mrl + 16 + 13 + 14 newsum + 60 inlg + 18 U03 + 21 U08 + 25 U14; 2018.inlg has no papers
    assert result.added == 207 and result.failed == 0
    assert result.not_papers == 11  # one frontmatter per volume
    newest = paper(db, "2025.newsum-main.1")
    assert newest.venues == ["newsum", "ws"] and newest.pdf_crc32 == "c0c725d7"
    assert newest.title.startswith("LLM-as-a-Judge Failures")
    assert paper(db, "2025.newsum-main.13").pdf_crc32 == "c0c725d7"  # same hash, still two papers
    mrl = paper(db, "2021.mrl-1.21")
    assert mrl.retracted and mrl.pdf_crc32 == "8996a24d"  # the current (v2) hash
    assert paper(db, "U03-1004").title == "An empirical study for generating zero pronoun in Korean based on Cost-based centering model"
    assert paper(db, "U03-1004").venue == "alta"
    with db.session() as s:
        assert sum(len(p.pwc_code) for p in s.scalars(select(Paper).where(Paper.ident.like("2021.newsum%")))) == 6
        assert s.scalars(select(Paper).where(Paper.retracted.is_(True))).all().__len__() == 2
    again = harvest_acl(db, settings_for(tmp_path), data_dir=root, cutoff="")
    assert (again.added, again.unchanged) == (0, 207)


def test_real_fixture_default_cutoff_leaves_out_2023_on(db, tmp_path):
    result = harvest_acl(db, settings_for(tmp_path), data_dir=shared_path("acl-anthology"))
    assert result.skipped["cutoff"] == 13 + 60 + 14 and result.added == 207 - 87


def test_a_callers_run_gets_prefixed_counts(db, tmp_path):
    """`review survey` passes its own run; the harvest adds `acl_*` counts to it."""
    from review.runs import record_run

    with record_run(db, "survey", {}) as run:
        result = harvest_acl(db, settings_for(tmp_path), run=run, data_dir=ACL_DATA)
    assert result.run_id == run.id
    with db.session() as s:
        runs = s.scalars(select(Run)).all()
    assert [r.command for r in runs] == ["survey"]
    assert runs[0].counts["acl_added"] == 9 and runs[0].counts["acl_skipped_by_filter"] == 2
