"""`harvest_dblp` in both modes: the search API served locally (paging, faults), and the dump."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from review.db.models import Run
from review.errors import ConfigError, InputFileError
from review.harvest.dblp import harvest_dblp
from review.harvest.dblp_api import parse_hit
from review.harvest.dblp_venues import load_venues
from review.localserver import Reply
from tests.harvest_support import DBLP_DATA, DblpApi, counts_of, paper, settings_for


@pytest.fixture
def api(local_server):
    fake = DblpApi()
    fake.install(local_server)
    fake.url = local_server.url
    return fake


def _api_settings(tmp_path, api, **kw):
    return settings_for(tmp_path, dblp_api_url=api.url, **kw)


def test_api_mode_reads_every_json_shape(db, tmp_path, api):
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api")
    assert result.failed == 0
    assert result.added == 7  # 5 NeurIPS papers (not the Editorship), 1 ICLR, 1 CVPR
    assert result.not_papers == 1
    p = paper(db, "conf/nips/LopezPaz19")  # single-author object, ee list, entities, trailing period
    assert p.title == "Don't Stop & Learn: Café Priors"
    assert p.authors == ["David Lopez-Paz"]
    assert p.pdf_url == "https://proceedings.neurips.cc/paper/2019/file/0123456789abcdef0123456789abcdef-Paper.pdf"
    assert p.arxiv_id == "1906.00001" and (p.venue, p.venues, p.year) == ("neurips", ["neurips"], 2019)
    m = paper(db, "conf/nips/MullerKH19")  # author list, ee string
    assert m.authors == ["Rafael Müller", "Simon Kornblith", "Geoffrey E. Hinton"] and m.pages == "4696-4705"
    assert m.pdf_url.endswith("f1748d6b0fd9d439f71450117eba2725-Paper.pdf")
    closed = paper(db, "conf/nips/AnonymousB19")
    assert closed.pdf_url is None and "dl.acm.org" in closed.pdf_unresolved_reason
    assert closed.doi == "10.5555/3454287.3454300"
    nobody = paper(db, "conf/nips/Nobody19")
    assert nobody.authors == [] and nobody.pdf_unresolved_reason == "no ee link in the DBLP record"
    assert paper(db, "conf/iclr/PaulusXS18").pdf_url == "https://openreview.net/pdf?id=HkAClQgA-"
    hu = paper(db, "conf/cvpr/HuSS18")
    assert hu.pdf_url.endswith("/content_cvpr_2018/papers/Hu_Squeeze-and-Excitation_Networks_CVPR_2018_paper.pdf")
    assert hu.doi == "10.1109/cvpr.2018.00745"
    # one TOC query per venue and year, main conference only, up to the cut-off year
    assert api.calls["neurips2019"] == 1 and api.calls["nips2017"] == 1 and "nips2018" not in api.calls
    assert "cvpr2017" not in api.calls and "iclr2012" not in api.calls and "neurips2023" in api.calls
    assert "neurips2024" not in api.calls  # cut-off 2023-01-01


def test_api_pages_through_a_toc(db, tmp_path, api):
    s = _api_settings(tmp_path, api, dblp_page_size=2)
    result = harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    assert result.added == 5
    assert [(f, h) for toc, f, h in api.pages if toc == "neurips2019"] == [(0, 2), (2, 2), (4, 2)]


def test_api_rerun_is_unchanged_and_a_changed_hit_is_updated(db, tmp_path, api):
    s = _api_settings(tmp_path, api)
    harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"])
    again = harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"])
    assert (again.added, again.updated, again.unchanged) == (0, 0, 2)
    api.answers["iclr2018"]["result"]["hits"]["hit"][0]["info"]["title"] = "A Deep Reinforced Model, Revised."
    third = harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"])
    assert (third.added, third.updated, third.unchanged) == (0, 1, 1)
    assert paper(db, "conf/iclr/PaulusXS18").title == "A Deep Reinforced Model, Revised"
    assert counts_of(db) == {"papers": 2, "records": 2}


def test_api_429_with_retry_after_and_500_are_retried(db, tmp_path, api):
    api.faults["iclr2018"] = [Reply(429, "slow down", {"Retry-After": "1"})]
    api.faults["cvpr2018"] = [Reply(500, "oops"), Reply(503, "busy")]
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr", "cvpr"])
    assert result.failed == 0 and result.added == 2
    assert api.calls["iclr2018"] == 2 and api.calls["cvpr2018"] == 3


def test_api_toc_that_keeps_failing_is_recorded_and_the_rest_goes_on(db, tmp_path, api):
    api.faults["iclr2018"] = [Reply(500, "down")] * 10
    api.faults["cvpr2019"] = [Reply(200, "<html>maintenance</html>", {"Content-Type": "text/html"})]
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr", "cvpr"])
    assert result.failed == 2 and result.added == 1  # CVPR 2018 still harvested
    assert any(f.startswith("toc:db/conf/iclr/iclr2018.bht:: gave_up_after_retries") for f in result.failures)
    assert any("cvpr2019" in f and "bad_response" in f for f in result.failures)
    with db.session() as s:
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.counts["failed"] == 2 and run.summary.endswith(f"(run {run.id})")


def test_api_uses_the_user_agent_of_the_http_layer(db, tmp_path, api, local_server):
    harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr"], from_year=2018, cutoff="2019-01-01")
    agents = {r.headers.get("User-Agent", "") for r in local_server.requests}
    assert agents and all(a.startswith("review/") for a in agents)


def test_parse_hit_shapes():
    hit = {"info": {"authors": {"author": {"@pid": "1", "text": "Solo Author 0042"}}, "title": "T.",
                    "year": "2020", "type": "Conference and Workshop Papers", "key": "conf/x/A20",
                    "ee": "https://openreview.net/forum?id=z"}}
    pub = parse_hit(hit, "x2020")
    assert pub.authors == ["Solo Author"] and pub.ee == ["https://openreview.net/forum?id=z"] and pub.year == 2020
    assert parse_hit({"info": {"type": "Editorship", "key": "conf/x/2020"}}, "x2020") is None
    with pytest.raises(ValueError):
        parse_hit({"info": {"title": "no key"}}, "x2020")


# -- dump mode ---------------------------------------------------------------------------------

def _dump(tmp_path, gz: bool = True):
    folder = tmp_path / "dump"
    folder.mkdir(exist_ok=True)
    shutil.copy(DBLP_DATA / "dblp.dtd", folder / "dblp.dtd")
    if gz:
        target = folder / "dblp.xml.gz"
        with gzip.open(target, "wb") as out:
            out.write((DBLP_DATA / "dblp.xml").read_bytes())
    else:
        target = folder / "dblp.xml"
        shutil.copy(DBLP_DATA / "dblp.xml", target)
    return target


@pytest.mark.parametrize("gz", [True, False])
def test_dump_mode_streams_with_entities_from_the_dtd(db, tmp_path, gz):
    result = harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=_dump(tmp_path, gz))
    assert result.failed == 0 and result.added == 8
    assert dict(result.skipped) == {"main_conference": 1, "year": 2, "cutoff": 1}
    assert result.not_papers == 1  # the proceedings volume
    lopez = paper(db, "conf/nips/LopezPaz19")
    assert lopez.title == "Café et al.: Learning with Naïve Priors" and lopez.authors == ["David Lopez-Paz"]
    assert paper(db, "conf/nips/MullerKH19").authors[0] == "Rafael Müller"
    assert paper(db, "conf/nips/Sutskever10").pdf_url == \
        "http://papers.nips.cc/paper/3940-sequence-learning-with-old-style-links.pdf"
    assert paper(db, "conf/icml/ZhangGMO19").pdf_url == "http://proceedings.mlr.press/v97/zhang19d/zhang19d.pdf"
    assert paper(db, "conf/ijcai/Liu19").pdf_url == "https://www.ijcai.org/proceedings/2019/0517.pdf"
    assert paper(db, "conf/ijcai/Liu19").authors == ["François Liu"]
    closed = paper(db, "conf/icml/Closed04")
    assert closed.pdf_url is None and closed.pdf_unresolved_reason.startswith("only publisher DOI links")
    assert closed.doi == "10.1145/1015330.1015332"
    again = harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=_dump(tmp_path, gz))
    assert (again.added, again.unchanged) == (0, 8)


def test_dump_never_fetches_the_dtd_from_the_network(db, tmp_path):
    dump = tmp_path / "dblp.xml"
    text = (DBLP_DATA / "dblp.xml").read_text(encoding="iso-8859-1")
    dump.write_text(text.replace('SYSTEM "dblp.dtd"', 'SYSTEM "https://dblp.org/xml/dblp.dtd"'), encoding="iso-8859-1")
    result = harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=dump, dtd=DBLP_DATA / "dblp.dtd")
    assert result.added == 8


def test_dump_without_dtd_or_file_is_an_input_error(db, tmp_path):
    dump = tmp_path / "alone" / "dblp.xml"
    dump.parent.mkdir()
    shutil.copy(DBLP_DATA / "dblp.xml", dump)
    with pytest.raises(InputFileError) as err:
        harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=dump)
    assert "dblp.dtd" in str(err.value)
    with pytest.raises(InputFileError):
        harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=tmp_path / "missing.xml.gz")
    with pytest.raises(ConfigError):
        harvest_dblp(db, settings_for(tmp_path), mode="dump")


def test_dump_memory_stays_flat(tmp_path):
    """Finished records are dropped from the tree: only the current one and the parser's
    bounded read-ahead stay in memory, however long the dump."""
    from review.harvest import dblp_dump

    dump = tmp_path / "big.xml"
    with dump.open("w", encoding="iso-8859-1") as fh:
        fh.write('<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE dblp SYSTEM "dblp.dtd">\n<dblp>\n')
        for i in range(3000):
            fh.write(f'<inproceedings key="conf/nips/P{i}"><author>A M&uuml;ller</author><title>T {i}.</title>'
                     f'<year>2019</year><url>db/conf/nips/neurips2019.html#P{i}</url></inproceedings>\n'
                     f'<article key="journals/x/J{i}"><title>J</title></article>\n')
        fh.write("</dblp>\n")
    seen = []
    original = dblp_dump._classify

    def spy(elem, key, by_stream):
        seen.append((elem.getparent().index(elem), len(elem.getparent())))
        return original(elem, key, by_stream)

    dblp_dump._classify = spy
    try:
        out = list(dblp_dump.iter_dump(dump, DBLP_DATA / "dblp.dtd", load_venues()))
    finally:
        dblp_dump._classify = original
    assert len(out) == 3000
    assert max(before for before, _ in seen) <= 1  # nothing finished is kept
    assert max(total for _, total in seen) < 600  # read-ahead is bounded, not the 6000 records


def test_bad_venue_table_names_the_entry(tmp_path):
    bad = tmp_path / "venues.toml"
    bad.write_text('[[venue]]\nid = "x"\nstream = "conf/x"\n')
    with pytest.raises(ConfigError) as err:
        load_venues(bad)
    assert "venue #1" in str(err.value)


def test_edited_venue_table_changes_the_scope(db, tmp_path, api):
    table = tmp_path / "venues.toml"
    table.write_text('[[venue]]\nid = "iclr"\nstream = "conf/iclr"\nfrom_year = 2018\nto_year = 2018\n'
                     'tocs = [{ from = 2018, names = ["iclr{year}"] }]\n')
    s = _api_settings(tmp_path, api, dblp_venues=str(table))
    result = harvest_dblp(db, s, mode="api")
    assert result.added == 1 and set(api.calls) == {"iclr2018"}
    with pytest.raises(ConfigError):
        harvest_dblp(db, s, mode="api", venues=["neurips"])


def test_api_answers_are_real_shaped_json():
    data = json.loads((DBLP_DATA / "api" / "neurips2019.json").read_text(encoding="utf-8"))
    hits = data["result"]["hits"]["hit"]
    assert isinstance(hits[1]["info"]["authors"]["author"], dict) and isinstance(hits[1]["info"]["ee"], list)
    assert isinstance(hits[0]["info"]["ee"], str)
