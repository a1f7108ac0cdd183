"""`review survey --plan`, the import stages of the survey, an Anthology mirror and per-host rates."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

from review.db.models import Document
from review.download import run_download
from review.download.runner import anthology_mirror_url
from review.http import host_rate
from review.importer.plan import plan_survey
from review.localserver import Reply
from review.settings import DownloadSettings, HttpSettings, Settings
from review.survey import run_survey
from tests.import_support import add_paper, crc, make_pdf, write_tar


@pytest.fixture
def papers(db):
    """Four Anthology PDFs to fetch (one failed before), two arXiv ones, one done, one without URL."""
    ids = {ident: add_paper(db, ident) for ident in ("P19-1001", "P19-1002", "P19-1003", "P19-1004", "P19-1005")}
    ids["arx-1"] = add_paper(db, "arx-1", pdf_url="https://arxiv.org/pdf/1908.10383")
    ids["arx-2"] = add_paper(db, "arx-2", pdf_url="https://arxiv.org/pdf/1908.10384")
    ids["none"] = add_paper(db, "none", pdf_url=None)
    with db.session() as s:
        s.add(Document(paper_id=ids["P19-1004"], outcome="failed", reason="http_404"))
        s.add(Document(paper_id=ids["P19-1005"], outcome="ok", path="pdfs/x.pdf", sha256="0" * 64))
    return ids


def test_plan_counts_per_stage_and_host_and_the_politeness_bound(db, papers, tmp_path):
    settings = Settings(data_dir=tmp_path / "d", http=HttpSettings(per_host_rate=0.5, host_rates={"arxiv.org": 2}))
    plan = plan_survey(db, settings)
    stages = {s["stage"]: s for s in plan.stages}
    assert stages["download"]["remaining"] == 5  # P19-1001..1003, arx-1, arx-2
    assert "1 failed earlier" in stages["download"]["note"] and "1 papers have no PDF URL" in stages["download"]["note"]
    assert stages["extract"]["remaining"] == 1  # the downloaded one has no text
    hosts = {h.host: h for h in plan.hosts}
    assert (hosts["aclanthology.org:443"].pdfs, hosts["aclanthology.org:443"].seconds) == (3, 6.0)
    assert (hosts["arxiv.org:443"].pdfs, hosts["arxiv.org:443"].rate, hosts["arxiv.org:443"].seconds) == (2, 2, 1.0)
    assert plan.download_seconds == 6.0  # hosts run in parallel: the slowest one bounds the download
    assert "at least 6 s" in plan.summary()


def test_plan_with_a_mirror_and_what_imports_would_save(db, papers, tmp_path):
    settings = Settings(data_dir=tmp_path / "d",
                        http=HttpSettings(per_host_rate=1, host_rates={"mirror.example:8080": 10}),
                        download=DownloadSettings(anthology_pdf_base="http://mirror.example:8080/anthology/"))
    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / "P19-1001.pdf").write_bytes(make_pdf(1))
    (folder / "P19-1002v2.pdf").write_bytes(make_pdf(2))
    (folder / "notes.pdf").write_bytes(make_pdf(3))
    corpus = tmp_path / "acl-publication-info.74k.v2.parquet"
    pq.write_table(pa.table({"acl_id": ["P19-1001", "P19-1003", "X"], "full_text": ["a", "b", "c"]}), corpus)

    plan = plan_survey(db, settings, pdfs=folder, texts=corpus)

    hosts = {h.host: h for h in plan.hosts}
    mirror = hosts["mirror.example:8080"]  # the Anthology's PDFs come from the mirror, at its own rate
    assert (mirror.pdfs, mirror.rate, mirror.seconds) == (3, 10, 0.3)
    assert (mirror.saved_by_import, mirror.seconds_after_import) == (2, pytest.approx(0.1))
    assert plan.imports["pdfs"]["files"] == 3 and plan.imports["pdfs"]["downloads_saved"] == 2
    texts = plan.imports["texts"]
    assert texts["papers_in_corpus"] == 2 and texts["labels_without_waiting"] == 2
    assert texts["downloads_not_needed_for_labels"] == 0  # labels prefer the PDF's text
    settings.label.text_source = "prefer-acl-ocl-grobid"
    again = plan_survey(db, settings, texts=corpus).imports["texts"]
    assert again["downloads_not_needed_for_labels"] == 2
    settings.label.text_source = "pdf"
    assert plan_survey(db, settings, texts=corpus).imports["texts"]["usable_by_labels"] is False


def test_plan_cli_json(cli, db, db_url, papers):
    code, out, err = cli("--db", db_url, "survey", "--plan", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert {s["stage"] for s in result["stages"]} >= {"download", "extract", "label", "human"}
    assert result["download_seconds"] == 3.0  # three Anthology PDFs at the default one per second
    assert "downloads need at least 3 s" in err


def test_mirror_rewrite_and_host_rates():
    base = "http://127.0.0.1:9/anthology"
    assert anthology_mirror_url("https://aclanthology.org/P19-1330.pdf", base) == base + "/P19-1330.pdf"
    assert anthology_mirror_url("http://aclanthology.org/W02-0401.pdf", base + "/") == base + "/W02-0401.pdf"
    assert anthology_mirror_url("https://arxiv.org/pdf/1908.10383", base) == "https://arxiv.org/pdf/1908.10383"
    assert anthology_mirror_url("https://aclanthology.org/P19-1330.pdf", "") == "https://aclanthology.org/P19-1330.pdf"
    http = HttpSettings(per_host_rate=1, host_rates={"Mirror.local": 0, "arxiv.org:443": 0.2})
    assert host_rate(http, "mirror.local:8080") == 0 and host_rate(http, "arxiv.org:443") == 0.2
    assert host_rate(http, "aclanthology.org:443") == 1


def test_download_fetches_anthology_pdfs_from_the_mirror(db, tmp_path, local_server):
    data = make_pdf(7)
    add_paper(db, "P19-1330", crc32=crc(data))  # the record names https://aclanthology.org/P19-1330.pdf
    local_server.route("/mirror/P19-1330.pdf", Reply(200, data, {"Content-Type": "application/pdf"}))
    settings = Settings(data_dir=tmp_path / "d", http=HttpSettings(per_host_rate=1, retries=0, timeout=5,
                                                                   host_rates={"127.0.0.1": 0}),
                        download=DownloadSettings(anthology_pdf_base=local_server.url + "/mirror"))
    report = run_download(db, settings)
    assert report.counts == {"ok": 1}
    with db.session() as s:
        doc = s.scalars(select(Document)).one()
    assert doc.url == local_server.url + "/mirror/P19-1330.pdf" and doc.sha256


def test_survey_imports_before_downloading(db, tmp_path):
    data = make_pdf(9)
    add_paper(db, "P19-1001", crc32=crc(data))
    add_paper(db, "P19-1002", pdf_url=None)
    bundle = write_tar(tmp_path / "b.tar", [("P19-1001.pdf", data)])
    corpus = tmp_path / "t.jsonl"
    corpus.write_text(json.dumps({"ident": "P19-1002", "text": "We use pyrouge to compute ROUGE-L."}) + "\n")
    settings = Settings(data_dir=tmp_path / "d", exports_dir=tmp_path / "e")
    result = run_survey(db, settings, sources=(), github=False, human="skip", pdfs=bundle, texts=corpus)
    names = [s.name for s in result.stages]
    assert names[:4] == ["harvest", "import pdfs", "import texts", "download"]
    status = {s.name: s for s in result.stages}
    assert status["import pdfs"].status == "ok" and "1 matched" in status["import pdfs"].summary
    assert status["import texts"].status == "ok" and "1 imported" in status["import texts"].summary
    assert status["download"].summary.startswith("downloaded 0 PDFs")  # nothing left to fetch
    assert "no_text 1" in status["extract"].summary  # the imported PDF is extracted (a blank page here)
    assert status["label"].status == "ok" and "labeled 1 papers" in status["label"].summary
    assert "texts: jsonl@sha256:" in status["label"].summary  # the imported text, named in the labels
