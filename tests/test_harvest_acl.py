"""`harvest_acl` against anthology-shaped XML: fields, filters, reruns, broken files, git update."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from lxml import etree
from sqlalchemy import func, select

from review.db.models import Paper, Run, SourceRecord
from review.errors import ConfigError, FetchError, InputFileError
from review.harvest.acl import harvest_acl
from review.harvest.records import HarvestRecord
from review.harvest.result import HarvestResult
from review.harvest.store import RecordStore
from tests.conftest import shared_path
from tests.harvest_support import ACL_DATA, counts_of, git, paper, settings_for


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
    assert dict(result.skipped) == {"year": 3, "cutoff": 1}  # W01 (2001), the 2023 volume
    more = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, from_year=2000, cutoff="")
    assert more.added == 4 and more.unchanged == 9
    assert paper(db, "W01-0101").venues == ["ws"]  # venue from the ws.yaml volumes list (W01-01)


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
    assert (second.added, second.unchanged) == (3, 9)
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
    assert runs[0].counts["acl_added"] == 9 and runs[0].counts["acl_skipped_by_filter"] == 4


# -- old-style identifiers: four digits after the dash, two-digit volumes take two-digit numbers ---

def test_two_digit_volumes_take_the_id_of_their_url(db, tmp_path):
    """W01 volume 1 paper 1 is W01-0101 and volume 10 paper 1 is W01-1001: an older release
    stored the first as W01-1001 (the second paper's id) and the second as W01-10001."""
    harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, from_year=2000)
    first, tenth = paper(db, "W01-0101"), paper(db, "W01-1001")
    assert first.title == "A Paper Before 2002" and first.url == "https://aclanthology.org/W01-0101/"
    assert tenth.title == "The First Paper of Volume Ten" and tenth.pdf_url == "https://aclanthology.org/W01-1001.pdf"
    nourl = paper(db, "W01-1002")  # no <url>: the id comes from the Anthology's rule
    assert nourl.title == "A Volume Ten Paper Without a URL" and nourl.pdf_url is None
    assert tenth.venues == ["ws"]  # the venue list names the padded volume id W01-10
    with db.session() as s:
        assert not s.scalars(select(Paper.ident).where(Paper.ident.like("W01-1000%"))).all()
        raw = s.scalars(select(SourceRecord.raw).where(SourceRecord.source_id == "W01-1001")).one()
    assert raw["volume"] == "W01-10"


def _papers_by_url(xml: Path) -> tuple[dict[str, str], int]:
    """{<url> text: title text} of every paper of a real collection file, and the paper count."""
    titles, count = {}, 0
    for paper_elem in etree.parse(str(xml)).getroot().iter("paper"):
        count += 1
        url = paper_elem.find("url")
        if url is not None and "://" not in (url.text or ""):
            titles[url.text] = " ".join("".join(paper_elem.find("title").itertext()).split())
    return titles, count


def test_real_w02_and_d19_identifiers_equal_their_urls(db, tmp_path):
    root = shared_path("acl-anthology-oldstyle")
    result = harvest_acl(db, settings_for(tmp_path), data_dir=root, cutoff="")
    expected: dict[str, str] = {}
    total = 0
    for name in ("W02.xml", "D19.xml"):
        titles, count = _papers_by_url(root / "data" / "xml" / name)
        expected.update(titles)
        total += count
    assert (result.added, result.failed, total) == (366 + 1103, 0, 1469)
    with db.session() as s:
        stored = dict(s.execute(select(Paper.ident, Paper.title)).all())
        assert s.scalar(select(func.count(func.distinct(SourceRecord.source_id)))) == total  # no id shared
    assert len(stored) == total
    assert {ident: stored.get(ident) for ident in expected} == expected  # every <url> names its own paper
    assert stored["W02-0101"].startswith("Teaching NLP/CL through Games")
    assert stored["W02-1001"].startswith("Discriminative Training Methods for Hidden Markov Models")
    assert paper(db, "D19-5001").url == "https://aclanthology.org/D19-5001/"  # workshop volume 50
    assert paper(db, "D19-2001").title == "Dive into Deep Learning for Natural Language Processing"  # no <url>
    assert paper(db, "W02-1001").doi == "10.3115/1118693.1118694"


# -- --as-of: the data repository as it was ---------------------------------------------------------

def _two_commit_repository(tmp_path: Path) -> tuple[Path, str, str]:
    """An anthology data repository whose first commit (June 2022) lacks the P02 and W01 files
    and has an older title; the second (February 2023) adds them and renames a paper."""
    repo = tmp_path / "anthology"
    shutil.copytree(ACL_DATA, repo)
    xml = repo / "data" / "xml"
    held = {name: (xml / name).read_text(encoding="utf-8") for name in ("P02.xml", "W01.xml")}
    for name in held:
        (xml / name).unlink()
    tiny = xml / "2019.tiny.xml"
    current = tiny.read_text(encoding="utf-8")
    tiny.write_text(current.replace("A Removed Paper", "A Paper, As It Was in 2022"), encoding="utf-8")
    git(repo, "init", "-q", "-b", "master")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "2022 state", when="2022-06-01T12:00:00+00:00")
    first = git(repo, "rev-parse", "HEAD")
    for name, text in held.items():
        (xml / name).write_text(text, encoding="utf-8")
    tiny.write_text(current, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "2023 state", when="2023-02-01T12:00:00+00:00")
    return repo, first, git(repo, "rev-parse", "HEAD")


def test_as_of_harvests_the_last_commit_before_the_date(db, tmp_path):
    repo, first, second = _two_commit_repository(tmp_path)
    old = harvest_acl(db, settings_for(tmp_path), data_dir=repo, as_of="2022-12-29", from_year=2000)
    assert old.added == 7 and old.skipped["cutoff"] == 1  # 2019.tiny only (its 2023 volume is cut off)
    assert paper(db, "2019.tiny-1.5").title == "A Paper, As It Was in 2022"
    with db.session() as s:
        assert not s.scalars(select(Paper).where(Paper.ident.like("P02%"))).all()
        run = s.get(Run, old.run_id)
        assert run.signature["acl_data_commit"] == first and run.signature["acl_as_of"] == "2022-12-29"
        assert run.arguments["as_of"] == "2022-12-29"
    assert git(repo, "rev-parse", "HEAD") == second  # the checkout is never switched
    assert "A Removed Paper</title>" in (repo / "data" / "xml" / "2019.tiny.xml").read_text(encoding="utf-8")
    now = harvest_acl(db, settings_for(tmp_path), data_dir=repo, from_year=2000)  # the files on disk
    assert (now.added, now.updated) == (5, 1) and paper(db, "2019.tiny-1.5").title == "A Removed Paper"
    with db.session() as s:
        assert s.get(Run, now.run_id).signature["acl_data_commit"] == second


def test_as_of_fetches_the_history_a_shallow_clone_lacks(db, tmp_path):
    repo, first, _ = _two_commit_repository(tmp_path)
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True, capture_output=True)
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    result = harvest_acl(db, settings_for(tmp_path), data_dir=clone, as_of="2023-01-01", from_year=2000)
    assert result.added == 7
    with db.session() as s:
        assert s.get(Run, result.run_id).signature["acl_data_commit"] == first


def test_as_of_setting_update_and_errors(db, tmp_path):
    repo, first, _ = _two_commit_repository(tmp_path)
    s = settings_for(tmp_path, acl_repo_url=str(repo), acl_as_of="2022-12-29")
    result = harvest_acl(db, s, update=True)  # a full clone into <data_dir>/acl-anthology, then its 2022 state
    assert result.added == 7
    clone = tmp_path / "data" / "acl-anthology"
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"
    with db.session() as s2:
        assert s2.get(Run, result.run_id).signature["acl_data_commit"] == first
    with pytest.raises(InputFileError, match="no commit before 2020-01-01"):
        harvest_acl(db, settings_for(tmp_path), data_dir=repo, as_of="2020-01-01")
    with pytest.raises(InputFileError, match="needs a git clone"):
        harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, as_of="2022-12-29")
    with pytest.raises(ConfigError, match="as-of is not a date"):
        harvest_acl(db, settings_for(tmp_path), data_dir=repo, as_of="end of 2022")


# -- publisher links, DOIs, code links, over-long values --------------------------------------------

_PUBLISHER_XML = """<?xml version='1.0' encoding='UTF-8'?>
<collection id="R17">
  <volume id="1">
    <meta><booktitle>Proceedings of RANLP 2017</booktitle><month>September</month><year>2017</year></meta>
    <paper id="104">
      <title>A RANLP Paper</title>
      <doi>10.26615/978-954-452-049-6_104</doi>
      <url hash="00112233">https://doi.org/10.26615/978-954-452-049-6_104</url>
    </paper>
    <paper id="105">
      <title>An AMTA Chapter</title>
      <url>https://link.springer.com/chapter/10.1007/978-3-540-30194-3_13</url>
    </paper>
    <paper id="106">
      <title>An Old Anthology Page</title>
      <url>https://www.aclweb.org/anthology/R17-1106</url>
      <doi>10.1162/COLI_a_00106</doi>
      <pwccode url="" additional="true"/>
      <pwccode url="https://github.com/someone/real" additional="false">someone/real</pwccode>
    </paper>
  </volume>
</collection>
"""


def test_publisher_landing_pages_are_never_pdf_candidates(db, tmp_path):
    data = tmp_path / "acl"
    shutil.copytree(ACL_DATA, data)
    (data / "data" / "xml" / "R17.xml").write_text(_PUBLISHER_XML, encoding="utf-8")
    result = harvest_acl(db, settings_for(tmp_path), data_dir=data)
    ranlp, amta, page = paper(db, "R17-1104"), paper(db, "R17-1105"), paper(db, "R17-1106")
    assert ranlp.pdf_url is None and ranlp.pdf_crc32 is None
    assert ranlp.pdf_unresolved_reason.startswith("publisher DOI link, not a PDF")
    assert amta.pdf_url is None and "Springer chapter" in amta.pdf_unresolved_reason
    assert amta.doi == "10.1007/978-3-540-30194-3_13"  # the DOI the chapter link spells
    assert page.pdf_url == "https://aclanthology.org/R17-1106.pdf"  # an anthology page resolves offline
    assert page.doi == "10.1162/COLI_a_00106" and page.doi_key == "10.1162/coli_a_00106"  # as given
    assert page.pwc_code == [{"url": "https://github.com/someone/real", "name": "someone/real", "official": True}]
    assert result.pdf_unresolved == 1 + 2  # 2019.tiny-1.7 has no <url>
    with db.session() as s:
        raw = s.scalars(select(SourceRecord.raw).where(SourceRecord.source_id == "R17-1105")).one()
    assert raw["publisher_url"] == "https://link.springer.com/chapter/10.1007/978-3-540-30194-3_13"


def test_dois_are_kept_as_given_and_matched_ignoring_case(db):
    acl = HarvestResult(source="acl")
    with RecordStore(db, acl) as store:
        store.add(HarvestRecord(source="acl", source_id="J11-1001", ident="J11-1001", title="An ACL Title",
                                year=2011, doi="10.1162/COLI_a_00001"))
    dblp = HarvestResult(source="dblp")
    with RecordStore(db, dblp) as store:
        store.add(HarvestRecord(source="dblp", source_id="journals/coli/X11", ident="journals/coli/X11",
                                title="Another Title Entirely", year=2011, doi="https://doi.org/10.1162/coli_a_00001"))
    assert (dblp.added, dblp.duplicates, dict(dblp.duplicate_reasons)) == (0, 1, {"doi": 1})
    assert paper(db, "J11-1001").doi == "10.1162/COLI_a_00001"


def test_over_long_values_are_cut_and_the_cut_is_recorded(db, tmp_path, caplog):
    data = tmp_path / "acl"
    shutil.copytree(ACL_DATA, data)
    huge = "Summarization " * 357_144  # 5,000,016 characters
    (data / "data" / "xml" / "X19.xml").write_text(
        "<?xml version='1.0' encoding='UTF-8'?>\n<collection id=\"X19\"><volume id=\"1\"><meta><year>2019</year>"
        f"</meta><paper id=\"1\"><title>{huge}</title><pages>{'1-' * 100}</pages>"
        "<url hash=\"0123456789abcdef\">X19-1001</url></paper></volume></collection>\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="review"):
        result = harvest_acl(db, settings_for(tmp_path), data_dir=data)
    assert result.failed == 0 and result.added == 10
    p = paper(db, "X19-1001")
    assert len(p.title) == 2000 and p.title.startswith("Summarization Summarization")
    assert len(p.pages) == 64 and p.pdf_crc32 is None  # a cut checksum would fail every download
    with db.session() as s:
        raw = s.scalars(select(SourceRecord.raw).where(SourceRecord.source_id == "X19-1001")).one()
        counts = s.get(Run, result.run_id).counts
    assert raw["truncated"] == {"title": len(huge.strip()), "pages": 200, "pdf_crc32": 16}
    assert counts["truncated_title"] == 1 and counts["truncated_pages"] == 1
    assert any("X19-1001" in r.getMessage() and "title of 5,000,015" in r.getMessage() for r in caplog.records)
    again = harvest_acl(db, settings_for(tmp_path), data_dir=data)
    assert again.unchanged == 10  # the cut is deterministic: a rerun sees the same record


def test_every_harvester_gets_the_caps_and_overlong_ids_are_refused(db):
    result = HarvestResult(source="dblp")
    with RecordStore(db, result) as store:
        store.add(HarvestRecord(source="dblp", source_id="conf/x/Long", ident="conf/x/Long", title="T" * 9000,
                                year=2020, authors=["A"] * 5000, venues=["v" * 300], raw={"note": "n" * 30_000}))
        store.add(HarvestRecord(source="dblp", source_id="k" * 300, ident="k" * 300, title="Fine", year=2020))
    assert (result.added, result.failed) == (1, 1) and "identifier longer than 250" in result.failures[0]
    p = paper(db, "conf/x/Long")
    assert (len(p.title), len(p.authors), len(p.venues[0])) == (2000, 2000, 255)


# -- Papers With Code links: the anthology removed them upstream ----------------------------------

def test_code_link_says_loudly_when_the_anthology_has_no_code_links(db, tmp_path, caplog):
    from review.codebases.link import run_link

    data = tmp_path / "acl"
    shutil.copytree(ACL_DATA, data)
    tiny = data / "data" / "xml" / "2019.tiny.xml"
    text = tiny.read_text(encoding="utf-8")
    tiny.write_text("\n".join(line for line in text.splitlines() if "<pwccode" not in line), encoding="utf-8")
    harvest_acl(db, settings_for(tmp_path), data_dir=data)
    with caplog.at_level(logging.WARNING, logger="review"):
        result = run_link(db, settings_for(tmp_path), sources=["anthology_pwccode"])
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "the anthology source is empty on this checkout" in warning and "of the 9 ACL Anthology records" in warning
    assert "pwc-archive/links-between-paper-and-code" in warning and "--as-of" in warning
    assert result.counts["anthology_source_empty"] == 1 and "anthology source is empty" in result.summary()


def test_empty_pwccode_urls_stored_by_earlier_releases_are_no_links(db, tmp_path, caplog):
    from review.codebases.link import run_link

    harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA)
    with db.session() as s:  # as an earlier release stored <pwccode url="" additional="true"/>
        s.scalars(select(Paper).where(Paper.ident == "2019.tiny-1.2")).one().pwc_code = [
            {"url": "", "name": None, "official": False}]
    with caplog.at_level(logging.WARNING, logger="review"):
        result = run_link(db, settings_for(tmp_path), sources=["anthology_pwccode"])
    assert result.counts["anthology_empty_url"] == 1 and result.counts["anthology_links"] == 2
    assert not result.counts["anthology_source_empty"] and "source is empty" not in caplog.text
