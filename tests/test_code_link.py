"""Linking papers to code: URL normal forms, the Papers With Code dump, and the merge (SQLite and PostgreSQL)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from code_support import add_paper
from review.codebases.link import run_link
from review.codebases.pwc import arxiv_key, doi_key, read_dump, title_key
from review.codebases.pwc_match import PaperIndex, PaperKeys
from review.codebases.urls import find_repo_urls, normalize_repo_url
from review.db.models import Codebase, CodebaseLink, Paper, Run
from review.errors import InputFileError
from review.settings import Settings

DUMP = Path(__file__).parent / "data" / "pwc" / "links-between-papers-and-code.json"


@pytest.mark.parametrize("url, expected", [
    ("https://github.com/abisee/pointer-generator", "https://github.com/abisee/pointer-generator"),
    ("http://www.github.com/Abisee/Pointer-Generator.git", "https://github.com/Abisee/Pointer-Generator"),
    ("git@github.com:abisee/pointer-generator.git", "https://github.com/abisee/pointer-generator"),
    ("github.com/nlpyang/PreSumm/tree/master/src).", "https://github.com/nlpyang/PreSumm"),
    ("https://github.com/nlpyang/PreSumm#readme", "https://github.com/nlpyang/PreSumm"),
    ("HTTPS://GitLab.COM/Group/Sub/Project.git", "https://gitlab.com/Group/Sub/Project"),
    ("https://BitBucket.org/Owner/Repo/src/master/", "https://bitbucket.org/Owner/Repo"),
    ("https://raw.githubusercontent.com/owner/repo/main/x.py", "https://github.com/owner/repo"),
    ("https://gitlab.com/group/sub/project/-/tree/main", "https://gitlab.com/group/sub/project"),
    ("https://bitbucket.org/owner/repo/src/master/", "https://bitbucket.org/owner/repo"),
    ("https://github.com/orgs/acl-org", None),
    ("https://github.com/abisee", None),
    ("https://example.org/code", None),
    ("", None),
])
def test_normalize_repo_urls(url, expected):
    assert normalize_repo_url(url) == expected


def test_find_urls_in_pdf_text():
    text = ("Our code is available at https://github.com/ abisee/pointer-generator. We score with "
            "files2rouge (github.com/pltrdy/files2rouge) and compare with https://gitlab.com/a/b/c/-/blob/x.py; "
            "see https://github.com/abisee/pointer-generator again and https://github.com/about.")
    links = find_repo_urls(text)
    assert [lk.ref.url for lk in links] == ["https://github.com/abisee/pointer-generator",
                                             "https://github.com/pltrdy/files2rouge", "https://gitlab.com/a/b/c"]
    assert "Our code" in links[0].context


def test_identifier_keys():
    assert arxiv_key("arXiv:1704.04368v2") == "1704.04368"
    assert arxiv_key("http://arxiv.org/abs/cs/0112017v1") == "cs/0112017"
    assert doi_key("https://doi.org/10.1162/tacl_a_00373") == "10.1162/tacl_a_00373"
    assert title_key("{BART}: Denoising Sequence-to-Sequence Pre-training") == \
        title_key("BART - denoising sequence to sequence pre training")
    assert title_key("Résumé générique") == "resume generique"


def test_read_dump_formats_agree(tmp_path):
    records = list(read_dump(DUMP))
    gz = tmp_path / "links.json.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        json.dump(json.loads(DUMP.read_text()), fh)
    jsonl = tmp_path / "links.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in json.loads(DUMP.read_text())) + "\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(json.loads(DUMP.read_text())), tmp_path / "links.parquet")
    assert len(records) == 10  # the record without a repository is counted malformed
    for other in (gz, jsonl, tmp_path / "links.parquet"):
        assert list(read_dump(other)) == records


def test_read_dump_rejects_what_is_not_a_dump(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('[{"title": "no repo field"}]')
    with pytest.raises(InputFileError, match="repo_url"):
        list(read_dump(bad))
    bad.write_text("[{broken")
    with pytest.raises(InputFileError, match="not valid JSON"):
        list(read_dump(bad))
    with pytest.raises(InputFileError, match="not found"):
        list(read_dump(tmp_path / "missing.json"))


def test_matching_by_identifier_then_unique_title():
    idx = PaperIndex.build([
        PaperKeys(1, "P17-1099", "Get To The Point: Summarization with Pointer-Generator Networks", None, "1704.04368"),
        PaperKeys(2, "2020.acl-main.552", "Extractive Summarization as Text Matching", None, None),
        PaperKeys(3, "D19-1387", "Text Summarization with Pretrained Encoders", "10.18653/v1/D19-1387", None),
        PaperKeys(4, "W01-0100", "Evaluation of Summaries", None, None),
        PaperKeys(5, "W04-1000", "Evaluation of summaries.", None, None),
        PaperKeys(6, "conf/icml/X20", "A Paper Known By Its DOI Only", "10.5555/3524938.3525989", None),
    ])
    recs = {r["paper_title"]: r for r in read_dump(DUMP)}
    assert idx.match(recs["Get To The Point: Summarization with Pointer-Generator Networks"]) == (1, "arxiv")
    assert idx.match(recs["Extractive Summarization as Text Matching"]) == (2, "anthology")
    assert idx.match(recs["Text Summarization with Pretrained Encoders"]) == (3, "title")
    assert idx.match(recs["Evaluation of Summaries"]) == (None, "ambiguous_title")
    assert idx.match(recs["Attention Is All You Need"]) == (None, "unmatched")
    assert idx.match({"paper_title": "x", "paper_url_abs": "https://doi.org/10.5555/3524938.3525989"}) == (6, "doi")


def _papers(db):  # type: ignore[no-untyped-def]
    ids = {}
    ids["p17"] = add_paper(db, "P17-1099", "Get To The Point: Summarization with Pointer-Generator Networks",
                           arxiv_id="1704.04368",
                           pwc_code=[{"url": "https://github.com/abisee/pointer-generator", "name": "abisee/pointer-generator",
                                      "official": True}],
                           text="... Our code is available at https://github.com/abisee/pointer-generator. We compute "
                                "ROUGE with pyrouge and files2rouge (https://github.com/pltrdy/files2rouge).")
    ids["d19"] = add_paper(db, "D19-1387", "Text Summarization with Pretrained Encoders",
                           text="Code: https://github.com/NLPyang/presumm and data from https://bitbucket.org/Lab/Data.")
    ids["acl20"] = add_paper(db, "2020.acl-main.552", "Extractive Summarization as Text Matching")
    ids["p16"] = add_paper(db, "P16-1046", "Neural Summarization by Extracting Sentences and Words")
    ids["n18"] = add_paper(db, "N18-1158", "Ranking Sentences for Extractive Summarization with Reinforcement Learning.")
    ids["w01"] = add_paper(db, "W01-0100", "Evaluation of Summaries")
    ids["w04"] = add_paper(db, "W04-1000", "Evaluation of Summaries")
    return ids


def _codebases(db):  # type: ignore[no-untyped-def]
    with db.session() as s:
        out = {}
        for cb in s.scalars(select(Codebase)):
            links = {lk.source: lk.official for lk in s.scalars(select(CodebaseLink).where(CodebaseLink.codebase_id == cb.id))}
            out[(cb.paper_id, cb.url)] = (cb.official, links)
        return out


def test_link_merges_three_sources_with_provenance(db, tmp_path):
    ids = _papers(db)
    settings = Settings(data_dir=tmp_path)
    result = run_link(db, settings, pwc_path=DUMP)
    got = _codebases(db)
    assert got[(ids["p17"], "https://github.com/abisee/pointer-generator")] == (
        True, {"anthology_pwccode": True, "pwc_dump": True, "paper_text": True})
    assert got[(ids["p17"], "https://github.com/atulkum/pointer_summarizer")] == (False, {"pwc_dump": False})
    # the dump's case is kept; the text's NLPyang/presumm is the same GitHub repository (case-insensitive)
    assert got[(ids["d19"], "https://github.com/nlpyang/PreSumm")] == (True, {"pwc_dump": True, "paper_text": True})
    assert got[(ids["d19"], "https://bitbucket.org/Lab/Data")] == (None, {"paper_text": None})
    assert (ids["acl20"], "https://github.com/maszhongming/MatchSum") in got
    assert (ids["p16"], "https://github.com/cheng6076/NeuralSum") in got
    assert (ids["n18"], "https://github.com/EdinburghNLP/Refresh") in got
    assert not any(url.endswith("files2rouge") for _pid, url in got)  # a cited tool, not the paper's code
    assert not any(pid in (ids["w01"], ids["w04"]) for pid, _url in got)  # ambiguous title: no guess
    c = result.counts
    assert c["pwc_records"] == 10 and c["pwc_malformed"] == 1 and c["pwc_ambiguous_title"] == 1
    assert c["pwc_matched"] == 6 and c["text_links_ignored"] == 1
    assert c["codebases_new"] == len(got) == 7
    with db.session() as s:
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.counts["codebases_new"] == 7 and run.command == "code link"

    again = run_link(db, settings, pwc_path=DUMP)
    assert again.counts["codebases_new"] == 0 and again.counts["links_new"] == 0
    assert _codebases(db) == got


def test_link_dry_run_writes_nothing(db, tmp_path):
    _papers(db)
    result = run_link(db, Settings(data_dir=tmp_path), pwc_path=DUMP, dry_run=True)
    assert result.counts["codebases_new"] == 7
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Codebase)) == 0
        assert s.scalar(select(func.count()).select_from(CodebaseLink)) == 0


def test_cli_link_with_dump_and_bad_dump(cli, tmp_path):
    shutil.copy(DUMP, tmp_path / "dump.json")
    code, out, err = cli("--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "code", "link", "--pwc", str(tmp_path / "dump.json"), "--json")
    assert code == 0, err
    assert json.loads(out)["counts"]["pwc_records"] == 10
    assert "linked 0 new codebases" in err  # empty database: nothing to match
    (tmp_path / "bad.json").write_text('[{"x": 1}]')
    code, _out, err = cli("--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "code", "link", "--pwc", str(tmp_path / "bad.json"))
    assert code == 8 and "bad.json" in err


# -- DBLP papers: exact keys before titles ---------------------------------------------------------

DBLP_LINKS = DUMP.parent / "links-dblp-papers.json"


@pytest.fixture
def dblp_papers(db, tmp_path, local_server):
    """The DBLP fixtures harvested through the loopback search API: proceedings pages, no arXiv ids."""
    from review.harvest.dblp import harvest_dblp
    from tests.harvest_support import DblpApi, settings_for

    DblpApi().install(local_server)
    result = harvest_dblp(db, settings_for(tmp_path, dblp_api_url=local_server.url), mode="api",
                          from_year=2017, cutoff="2021-01-01")
    assert result.added == 26
    with db.session() as s:
        return {p.ident: p.id for p in s.scalars(select(Paper))}


def test_pwc_links_find_dblp_papers_by_pdf_url_and_abstract_page(db, tmp_path, dblp_papers):
    result = run_link(db, Settings(data_dir=tmp_path), pwc_path=DBLP_LINKS, sources=["pwc_dump"])
    with db.session() as s:
        got = {(lk.raw["paper_title"], lk.raw["matched_by"]): cb.paper_id
               for cb, lk in s.execute(select(Codebase, CodebaseLink)
                                       .join(CodebaseLink, CodebaseLink.codebase_id == Codebase.id))}
    ids = dblp_papers
    assert got == {
        ("Neural Ordinary Differential Equations", "arxiv"): ids["conf/nips/ChenRBD18"],
        ("Self-Attention GANs", "pdf_url"): ids["conf/icml/ZhangGMO19"],
        ("Label Smoothing: When Does It Help?", "pdf_url"): ids["conf/nips/MullerKH19"],
        ("BigGAN: Large Scale GAN Training for High Fidelity Natural Image Synthesis", "pdf_url"):
            ids["conf/iclr/BrockDS19"],
        ("StyleGAN: A Style-Based Generator", "abstract_page"): ids["conf/cvpr/KarrasLA19"],
        ("Pretrained Encoders for Summarization", "abstract_page"): ids["conf/ijcai/Liu19"],
        ("Fields As Lists", "doi"): ids["conf/nips/ListFields18"],
        ("ALBERT: A Lite BERT for Self-supervised Learning of Language Representations", "title"):
            ids["conf/iclr/LanCGGSS20"],
    }
    c = result.counts
    assert (c["pwc_records"], c["pwc_matched"], c["pwc_unmatched"]) == (10, 8, 2)
    assert {k: c[f"pwc_matched_by_{k}"] for k in ("arxiv", "pdf_url", "abstract_page", "doi", "title")} == {
        "arxiv": 1, "pdf_url": 3, "abstract_page": 2, "doi": 1, "title": 1}
    assert result.unmatched_titles == ["Attention is All you Need", "Wasserstein GAN"]
    assert ("pwc dump: 8 of 10 records matched (arxiv 1, pdf_url 3, abstract_page 2, doi 1, title 1), "
            "2 unmatched, 0 ambiguous titles") in result.summary()


def test_title_match_checks_year_and_first_author(db, tmp_path):
    ids = {"w01": add_paper(db, "W01-0100", "Evaluation of Summaries", year=2001, authors=["Someone Else"]),
           "w04": add_paper(db, "W04-1000", "Evaluation of summaries.", year=2004, authors=["Chin-Yew Lin"])}
    links = DUMP.parent / "links-same-title.json"
    alone = run_link(db, Settings(data_dir=tmp_path), pwc_path=links, sources=["pwc_dump"], dry_run=True)
    assert alone.counts["pwc_ambiguous_title"] == 2 and alone.counts["pwc_matched"] == 0  # no year, no author: no guess
    result = run_link(db, Settings(data_dir=tmp_path), pwc_path=links, sources=["pwc_dump"],
                      pwc_papers_path=DUMP.parent / "papers-with-abstracts.json")
    assert result.counts["pwc_matched_by_title"] == 1 and result.counts["pwc_unmatched"] == 1
    with db.session() as s:
        assert [(cb.paper_id, cb.url) for cb in s.scalars(select(Codebase))] == [
            (ids["w04"], "https://github.com/example/eval04")]  # 2004, Lin: the W04 paper; 2001, Known: none


def test_url_keys_and_arxiv_years():
    from review.codebases.pwc_match import arxiv_year, url_key

    assert url_key("http://papers.nips.cc/paper/2019/file/x-Paper.pdf") == \
        url_key("https://proceedings.neurips.cc/paper/2019/file/x-Paper.pdf/")
    assert url_key("https://www.ijcai.org/proceedings/2019/0517.pdf") == url_key("http://ijcai.org/proceedings/2019/0517.pdf")
    assert url_key("https://openreview.net/forum?id=B1x") != url_key("https://openreview.net/pdf?id=B1x")
    assert url_key("https://openreview.net/pdf?id=B1x&noteId=B1x") == "openreview.net/pdf?id=B1x"
    assert url_key("") is None and url_key("not a url") is None
    assert (arxiv_year("1706.03762v5"), arxiv_year("cs/0112017"), arxiv_year(None)) == (2017, 2001, None)


def test_cli_link_json_lists_unmatched_titles(cli, tmp_path):
    code, out, err = cli("--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "code", "link", "--pwc", str(DBLP_LINKS),
                         "--source", "pwc_dump", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["counts"]["pwc_unmatched"] == 10 and len(data["pwc_unmatched_titles"]) == 10
    assert "0 of 10 records matched, 10 unmatched" in err
