"""`harvest_dblp` in both modes: the search API served locally (paging, faults), and the dump."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from review.db.models import Run
from review.errors import ConfigError, InputFileError
from review.harvest.dblp import CoverageIncomplete, harvest_dblp
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


YEARS = {"from_year": 2017, "cutoff": "2021-01-01"}  # 2017-2020: every TOC of the fixtures


def test_api_mode_reads_every_json_shape(db, tmp_path, api):
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", **YEARS)
    assert result.failed == 0 and result.warnings == []
    assert result.added == 26 and result.not_papers == 17  # the proceedings volumes
    p = paper(db, "conf/nips/LopezPaz19")  # single-author object, ee list, entities, trailing period
    assert p.title == "Don't Stop & Learn: Café Priors"
    assert p.authors == ["David Lopez-Paz"]
    assert p.pdf_url == "https://proceedings.neurips.cc/paper/2019/file/0123456789abcdef0123456789abcdef-Paper.pdf"
    assert p.arxiv_id == "1906.00001" and (p.venue, p.venues, p.year) == ("neurips", ["neurips"], 2019)
    m = paper(db, "conf/nips/MullerKH19")  # author list, ee string
    assert m.authors == ["Rafael Müller", "Simon Kornblith", "Geoffrey E. Hinton"] and m.pages == "4696-4705"
    assert m.pdf_url.endswith("f1748d6b0fd9d439f71450117eba2725-Paper.pdf")
    lists = paper(db, "conf/nips/ListFields18")  # venue, pages, ee (one an object) and authors all lists
    assert (lists.booktitle, lists.pages) == ("NeurIPS", "101-110, 111-112")
    assert lists.authors == ["Lena List", "Otto Object"] and lists.doi == "10.5555/3327757.3327800"
    assert lists.pdf_url == "https://proceedings.neurips.cc/paper/2018/file/00112233445566778899aabbccddeeff-Paper.pdf"
    closed = paper(db, "conf/nips/AnonymousB19")
    assert closed.pdf_url is None and "dl.acm.org" in closed.pdf_unresolved_reason
    assert closed.doi == "10.5555/3454287.3454300"
    nobody = paper(db, "conf/nips/Nobody19")
    assert nobody.authors == [] and nobody.pdf_unresolved_reason == "no ee link in the DBLP record"
    assert paper(db, "conf/iclr/PaulusXS18").pdf_url == "https://openreview.net/pdf?id=HkAClQgA-"
    hu = paper(db, "conf/cvpr/HuSS18")
    assert hu.pdf_url.endswith("/content_cvpr_2018/papers/Hu_Squeeze-and-Excitation_Networks_CVPR_2018_paper.pdf")
    assert hu.doi == "10.1109/CVPR.2018.00745"  # kept as DBLP gives it; compared through doi_key
    # one TOC query per venue and year, by DBLP's own names, main conference only
    assert {t: api.calls[t] for t in ("nips2017", "nips2018", "nips2019", "neurips2020")} == dict.fromkeys(
        ("nips2017", "nips2018", "nips2019", "neurips2020"), 1)
    assert not {"neurips2018", "neurips2019", "nips2020", "cvpr2017", "iclr2016", "ijcai2021"} & set(api.calls)
    assert result.venue_years()["neurips"] == {"2017": {"found": 2, "kept": 2}, "2018": {"found": 2, "kept": 2},
                                               "2019": {"found": 5, "kept": 5}, "2020": {"found": 1, "kept": 1}}
    assert {v: len(ys) for v, ys in result.venue_years().items()} == {
        "neurips": 4, "icml": 4, "ijcai": 4, "iclr": 4, "cvpr": 3}
    assert "17 not a paper" in result.summary()


def test_cutoff_skips_the_tables_of_contents_past_it(db, tmp_path, api):
    s = _api_settings(tmp_path, api)
    harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    assert set(api.calls) == {"nips2019"}  # a DBLP record dated 2020 is past a 2020-01-01 cut-off
    api.calls.clear()
    result = harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-06-01")
    assert set(api.calls) == {"nips2019", "neurips2020"}
    assert result.skipped["cutoff"] == 0 and result.kept[("neurips", 2020)] == 1  # dated 2020-01-01: kept


def test_api_pages_through_a_toc(db, tmp_path, api):
    s = _api_settings(tmp_path, api, dblp_page_size=2)
    result = harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    assert result.added == 5
    assert [(f, h) for toc, f, h in api.pages if toc == "nips2019"] == [(0, 2), (2, 2), (4, 2)]


def test_api_rerun_is_unchanged_and_a_changed_hit_is_updated(db, tmp_path, api):
    s = _api_settings(tmp_path, api)
    harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"], **YEARS)
    again = harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"], **YEARS)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 7)
    api.answers["iclr2018"]["result"]["hits"]["hit"][0]["info"]["title"] = "A Deep Reinforced Model, Revised."
    third = harvest_dblp(db, s, mode="api", venues=["iclr", "cvpr"], **YEARS)
    assert (third.added, third.updated, third.unchanged) == (0, 1, 6)
    assert paper(db, "conf/iclr/PaulusXS18").title == "A Deep Reinforced Model, Revised"
    assert counts_of(db) == {"papers": 7, "records": 7}


def test_api_429_with_retry_after_and_500_are_retried(db, tmp_path, api):
    api.faults["iclr2018"] = [Reply(429, "slow down", {"Retry-After": "1"})]
    api.faults["cvpr2018"] = [Reply(500, "oops"), Reply(503, "busy")]
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr", "cvpr"], **YEARS)
    assert result.failed == 0 and result.added == 7
    assert api.calls["iclr2018"] == 2 and api.calls["cvpr2018"] == 3


def test_api_toc_that_keeps_failing_is_recorded_and_the_rest_goes_on(db, tmp_path, api):
    api.faults["iclr2018"] = [Reply(500, "down")] * 10
    api.faults["cvpr2019"] = [Reply(200, "<html>maintenance</html>", {"Content-Type": "text/html"})]
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr", "cvpr"], **YEARS)
    assert result.failed == 2 and result.added == 5  # the other TOCs still harvested
    assert any(f.startswith("toc:db/conf/iclr/iclr2018.bht:: gave_up_after_retries") for f in result.failures)
    assert any("cvpr2019" in f and "bad_response" in f for f in result.failures)
    assert result.warnings == []  # a failed TOC is a failure, not also an empty year
    with db.session() as s:
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.counts["failed"] == 2 and run.summary.endswith(f"(run {run.id})")


def test_api_uses_the_user_agent_of_the_http_layer(db, tmp_path, api, local_server):
    harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["iclr"], from_year=2018, cutoff="2019-01-01")
    assert set(api.calls) == {"iclr2018"}
    agents = {r.headers.get("User-Agent", "") for r in local_server.requests}
    assert agents and all(a.startswith("review/") for a in agents)


def _hit(**info):
    return {"info": {"type": "Conference and Workshop Papers", "key": "conf/x/A20", "title": "T.", "year": "2020",
                     **info}}


@pytest.mark.parametrize("field, value, expected", [
    # authors.author: one object, a list of objects, bare strings (older answers)
    ("authors", {"author": {"@pid": "1", "text": "Solo Author 0042"}}, ["Solo Author"]),
    ("authors", {"author": [{"@pid": "1", "text": "A One"}, {"@pid": "2", "text": "B Two"}]}, ["A One", "B Two"]),
    ("authors", {"author": ["Maria Knobelsdorf", "Ulrik Schroeder"]}, ["Maria Knobelsdorf", "Ulrik Schroeder"]),
])
def test_parse_hit_author_shapes(field, value, expected):
    assert parse_hit(_hit(**{field: value}), "x2020").authors == expected


@pytest.mark.parametrize("value, expected", [
    ("https://openreview.net/forum?id=z", ["https://openreview.net/forum?id=z"]),
    (["https://arxiv.org/abs/1", "https://doi.org/10.1/x"], ["https://arxiv.org/abs/1", "https://doi.org/10.1/x"]),
    ({"@type": "oa", "text": "https://openreview.net/forum?id=z"}, ["https://openreview.net/forum?id=z"]),
    ([{"@type": "oa", "text": "https://a.org/p"}, "https://doi.org/10.1/x"],
     ["https://a.org/p", "https://doi.org/10.1/x"]),
    (None, []),
])
def test_parse_hit_ee_shapes(value, expected):
    assert parse_hit(_hit(ee=value), "x2020").ee == expected


@pytest.mark.parametrize("venue, pages, booktitle, pages_text", [
    ("NeurIPS", "1-10", "NeurIPS", "1-10"),
    (["NeurIPS", "NeurIPS (Spotlight)"], ["1-10", "11-12"], "NeurIPS", "1-10, 11-12"),
    ({"@url": "db/conf/x/x2020.html#A20", "text": "X 2020: 1-10"}, {"text": "1-10"}, "X 2020: 1-10", "1-10"),
    (None, None, None, None),
])
def test_parse_hit_venue_and_pages_shapes(venue, pages, booktitle, pages_text):
    pub = parse_hit(_hit(venue=venue, pages=pages), "x2020")
    assert (pub.booktitle, pub.pages) == (booktitle, pages_text)


def test_parse_hit_title_year_and_what_is_not_a_paper():
    pub = parse_hit(_hit(title={"@ee": "http://doi.acm.org/10.1145/1", "text": "Old Shape. "}, year=2020), "x2020")
    assert (pub.title, pub.year) == ("Old Shape.", 2020)
    assert parse_hit({"info": {"type": "Editorship", "key": "conf/x/2020"}}, "x2020") is None
    assert parse_hit({"info": {"type": ["Editorship"], "key": "conf/x/2020"}}, "x2020") is None
    with pytest.raises(ValueError):
        parse_hit({"info": {"title": "no key"}}, "x2020")
    with pytest.raises(ValueError):
        parse_hit({"info": "not an object"}, "x2020")


@pytest.mark.parametrize("field, value, attr, expected", [
    # the remaining fields in each shape the API's XML-to-JSON conversion gives: string, object, list
    ("title", "Plain Title.", "title", "Plain Title."),
    ("title", ["Part One.", "Part Two."], "title", "Part One. Part Two."),
    ("year", {"text": "2019"}, "year", 2019),
    ("year", ["2019"], "year", 2019),
    ("doi", "10.1/a", "doi", "10.1/a"),
    ("doi", {"@type": "doi", "text": "10.1/a"}, "doi", "10.1/a"),
    ("doi", ["10.1/a", "10.1/b"], "doi", "10.1/a"),
    ("key", {"text": "conf/x/B20"}, "key", "conf/x/B20"),
    ("key", ["conf/x/C20"], "key", "conf/x/C20"),
])
def test_parse_hit_title_year_doi_and_key_shapes(field, value, attr, expected):
    assert getattr(parse_hit(_hit(**{field: value}), "x2020"), attr) == expected


def test_a_bad_hit_costs_one_record_not_the_toc(db, tmp_path, api):
    hits = api.answers["nips2019"]["result"]["hits"]["hit"]
    hits.insert(1, {"@score": "1", "@id": "1", "info": {"title": "A hit without a key."}})
    hits.insert(2, "not a hit")
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["neurips"],
                          from_year=2019, cutoff="2020-01-01")
    assert result.added == 5 and result.failed == 2
    assert all(f.startswith("toc:db/conf/nips/nips2019.bht: hit #") for f in result.failures)


# -- coverage: a year that comes back empty ------------------------------------------------------

def test_an_empty_year_between_full_ones_warns_and_fails_with_strict(db, tmp_path, api, caplog):
    api.answers.pop("nips2018")  # DBLP answers an unknown TOC with zero hits
    s = _api_settings(tmp_path, api)
    result = harvest_dblp(db, s, mode="api", venues=["neurips"], **YEARS)
    assert result.added == 8 and result.failed == 0
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert warning.startswith("neurips 2018: no papers (toc:db/conf/nips/nips2018.bht: returned nothing at all)")
    assert "while 2017 has 2 and 2019 has 5" in warning
    assert "DBLP coverage: neurips 2018" in caplog.text
    assert result.summary().endswith(f"1 coverage warning (run {result.run_id})")
    with pytest.raises(CoverageIncomplete) as err:
        harvest_dblp(db, s, mode="api", venues=["neurips"], strict=True, **YEARS)
    assert err.value.result.warnings == result.warnings and err.value.exit_code == 1
    with db.session() as sess:
        run = sess.get(Run, err.value.result.run_id)
        assert run.status == "failed" and "neurips 2018" in run.error and run.counts["coverage_warnings"] == 1
        assert run.counts["found_neurips_2019"] == 5 and run.counts["found_neurips_2018"] == 0


def test_a_year_with_only_the_proceedings_volume_warns_by_its_neighbours(db, tmp_path, api):
    hits = api.answers["nips2018"]["result"]["hits"]
    hits["hit"] = [h for h in hits["hit"] if h["info"]["type"] == "Editorship"]
    hits["@total"] = "1"
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["neurips"], **YEARS)
    assert result.warnings == ["neurips 2018: no papers (no record of its main table of contents), while 2017 has 2 "
                               "and 2019 has 5; check this year's TOC name in the venue table"]


def _old_table(tmp_path):
    """The venue table as it was: `neurips{year}` from 2018, names DBLP does not have."""
    table = tmp_path / "venues.toml"
    table.write_text('[[venue]]\nid = "neurips"\nstream = "conf/nips"\nfrom_year = 2002\ntocs = [\n'
                     '  { from = 2002, to = 2017, names = ["nips{year}"] },\n'
                     '  { from = 2018, names = ["neurips{year}"] },\n]\n')
    return str(table)


def test_a_wrong_toc_name_is_loud_in_api_mode(db, tmp_path, api):
    result = harvest_dblp(db, _api_settings(tmp_path, api, dblp_venues=_old_table(tmp_path)), mode="api", **YEARS)
    assert result.added == 3  # NIPS 2017 and NeurIPS 2020 only: 2018 and 2019 are lost
    assert [w.split(":")[0] for w in result.warnings] == ["neurips 2018", "neurips 2019"]
    assert "toc:db/conf/nips/neurips2019.bht: returned nothing at all" in result.warnings[1]


def test_a_wrong_toc_name_is_counted_per_toc_in_dump_mode(db, tmp_path):
    s = settings_for(tmp_path, dblp_venues=_old_table(tmp_path))
    result = harvest_dblp(db, s, mode="dump", dump=_dump(tmp_path), from_year=2017, cutoff="2021-01-01")
    assert dict(result.other_tocs) == {"nips2019": 2, "nips2018": 1, "nips2019w": 1}
    assert result.added == 1  # the neurips2020 record
    assert "not main conference: nips2019 \u00d72, nips2018 \u00d71, nips2019w \u00d71" in result.detail_lines()[-1]
    assert [w.split(":")[0] for w in result.warnings] == ["neurips 2019"]  # next to 2020, which has papers


def test_venue_table_names_dblp_tocs_in_every_era():
    table = {v.id: v for v in load_venues()}
    nips = table["neurips"]
    assert [nips.toc_names(y) for y in (2002, 2017, 2018, 2019, 2020, 2023)] == [
        ["nips2002"], ["nips2017"], ["nips2018"], ["nips2019"], ["neurips2020"], ["neurips2023"]]
    ijcai = table["ijcai"]
    assert [y for y in range(2003, 2019) if ijcai.has_proceedings(y)] == [
        2003, 2005, 2007, 2009, 2011, 2013, 2015, 2016, 2017, 2018]
    assert table["icml"].toc_names(2003) == ["icml2003"] and table["iclr"].toc_names(2013) == ["iclr2013"]
    assert table["cvpr"].toc_names(2017) == [] and table["cvpr"].toc_names(2018) == ["cvpr2018"]
    assert nips.main_toc_year("nips2019w") is None and table["cvpr"].main_toc_year("cvprw2018") is None


def test_biennial_years_are_neither_queried_nor_gaps(db, tmp_path, api):
    for year in (2013, 2015, 2016):
        api.answers[f"ijcai{year}"] = api.answers["ijcai2017"]
    result = harvest_dblp(db, _api_settings(tmp_path, api), mode="api", venues=["ijcai"], from_year=2013,
                          cutoff="2018-01-01")
    assert sorted(api.calls) == ["ijcai2013", "ijcai2015", "ijcai2016", "ijcai2017"]
    assert result.warnings == []


def test_cli_strict_prints_the_counts_and_exits_1(cli, tmp_path, local_server):
    fake = DblpApi()
    fake.answers.pop("nips2018")
    fake.install(local_server)
    (tmp_path / "review.toml").write_text(
        f'[http]\nper_host_rate = 0\n\n[harvest]\ndblp_api_url = "{local_server.url}"\ndblp_delay = 0\n')
    args = ("harvest", "dblp", "--venue", "neurips", "--from-year", "2017", "--cutoff", "2021-01-01", "--json")
    code, out, err = cli(*args)
    assert code == 0, err
    data = json.loads(out)
    assert data["venue_years"]["neurips"]["2019"] == {"found": 5, "kept": 5} and len(data["warnings"]) == 1
    assert "neurips: 2017 2, 2018 0, 2019 5, 2020 1" in err and "not a paper" in err
    code, out, err = cli(*args, "--strict")
    assert code == 1 and "coverage warning" in err and json.loads(out)["warnings"]


def test_cli_dump_mode_lists_the_tocs_left_out_by_name(cli, tmp_path):
    """--json and the summary both name the TOCs a wrong venue table leaves out."""
    (tmp_path / "review.toml").write_text(f'[harvest]\ndblp_venues = "{_old_table(tmp_path)}"\n')
    code, out, err = cli("harvest", "dblp", "--mode", "dump", "--dump", str(_dump(tmp_path)), "--venue", "neurips",
                         "--from-year", "2017", "--cutoff", "2021-01-01", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["not_main_conference"] == {"nips2019": 2, "nips2018": 1, "nips2019w": 1}
    assert data["venue_years"]["neurips"]["2020"] == {"found": 1, "kept": 1} and data["not_papers"] == 1
    assert "not main conference: nips2019 \u00d72, nips2018 \u00d71, nips2019w \u00d71" in err
    assert "1 not a paper" in err and "1 coverage warning" in err


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
    assert result.failed == 0 and result.added == 10
    assert dict(result.skipped) == {"main_conference": 2, "year": 2, "cutoff": 1}
    assert dict(result.other_tocs) == {"nips2019w": 1, "cvprw2018": 1}  # workshops, counted by TOC name
    assert result.not_papers == 1  # the proceedings volume
    assert "1 not a paper" in result.summary()
    years = result.venue_years()
    assert {y: n["found"] for y, n in years["neurips"].items() if n["found"]} == {
        "2010": 1, "2018": 1, "2019": 2, "2020": 1}
    assert years["cvpr"]["2023"] == {"found": 1, "kept": 0}  # past the cut-off
    assert paper(db, "conf/nips/ChenRBD18").pdf_url == \
        "https://proceedings.neurips.cc/paper/2018/file/69386f6bb1dfed68692a24c8686939b9-Paper.pdf"
    assert paper(db, "conf/nips/BrownMRSKDNSSAA20").year == 2020
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
    assert (again.added, again.unchanged) == (0, 10)


def test_dump_never_fetches_the_dtd_from_the_network(db, tmp_path):
    dump = tmp_path / "dblp.xml"
    text = (DBLP_DATA / "dblp.xml").read_text(encoding="iso-8859-1")
    dump.write_text(text.replace('SYSTEM "dblp.dtd"', 'SYSTEM "https://dblp.org/xml/dblp.dtd"'), encoding="iso-8859-1")
    result = harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=dump, dtd=DBLP_DATA / "dblp.dtd")
    assert result.added == 10


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
                     f'<year>2019</year><url>db/conf/nips/nips2019.html#P{i}</url></inproceedings>\n'
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
    data = json.loads((DBLP_DATA / "api" / "nips2019.json").read_text(encoding="utf-8"))
    hits = data["result"]["hits"]["hit"]
    assert isinstance(hits[1]["info"]["authors"]["author"], dict) and isinstance(hits[1]["info"]["ee"], list)
    assert isinstance(hits[0]["info"]["ee"], str)
    lists = json.loads((DBLP_DATA / "api" / "nips2018.json").read_text(encoding="utf-8"))["result"]["hits"]["hit"][1]
    assert all(isinstance(lists["info"][f], list) for f in ("venue", "pages", "ee"))
    assert isinstance(lists["info"]["ee"][0], dict)
    for path in (DBLP_DATA / "api").glob("*.json"):  # every answer is for a TOC of DBLP's own name
        query = json.loads(path.read_text(encoding="utf-8"))["result"]["query"]
        assert query == f"toc:db/{query.split('/', 1)[1].rsplit('/', 1)[0]}/{path.stem}.bht:*" or path.stem == "empty"
        assert "neurips2018" not in query and "neurips2019" not in query
