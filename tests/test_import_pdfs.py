"""`review import pdfs`: generated archives with good, broken and hostile members."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import Document, Paper, WorkItem
from review.db.models.documents import ImportedFile
from review.download.store import PdfStore
from review.importer import archive, verify
from review.importer.names import ids_in_name
from review.importer.pdfs import run_import_pdfs
from review.settings import DownloadSettings, Settings
from tests.import_support import add_paper, crc, make_pdf, sha, write_tar, write_zip, zip_bomb

CAP = 1_000_000


def settings_for(tmp_path: Path, **imports) -> Settings:
    s = Settings(data_dir=tmp_path / "data", download=DownloadSettings(max_bytes=CAP))
    for k, v in imports.items():
        setattr(s.imports, k, v)
    return s


def outcomes(report) -> dict[str, tuple[str, str | None, str | None]]:
    return {f["member"]: (f["outcome"], f["reason"], f["paper"]) for f in report.files}


def docs(db) -> dict[str, Document]:
    with db.session() as s:
        return dict(s.execute(select(Paper.ident, Document).join(Document, Document.paper_id == Paper.id)).all())


def assert_store_consistent(db, data_dir: Path) -> None:
    """Every ok document names a file in the store holding exactly its bytes; no temp left."""
    for ident, d in docs(db).items():
        if d.outcome == "ok":
            data = (data_dir / d.path).read_bytes()
            assert sha(data) == d.sha256 and len(data) == d.size, ident
            assert d.path == PdfStore.relpath(d.sha256)
    assert not PdfStore(data_dir).partial_files()


@pytest.fixture
def corpus(db):
    """Five harvested papers and the PDFs of some of them."""
    pdfs = {i: make_pdf(i, pad=3000 * i) for i in range(1, 8)}
    add_paper(db, "P19-1001", crc32=crc(pdfs[1]))
    add_paper(db, "2020.acl-main.2", crc32=crc(pdfs[2]))
    add_paper(db, "P19-1003", crc32="deadbeef")  # the record's hash is of another version
    add_paper(db, "D19-1004", sha256=sha(pdfs[4]))  # a record that gives the sha256 (found by content)
    add_paper(db, "P19-1005", crc32=crc(pdfs[5]))
    return pdfs


def hostile_members(pdfs: dict[int, bytes], escape: str) -> list[tuple]:
    return [
        ("bundle/P19-1001.pdf", pdfs[1]),  # name match, crc32 checked
        ("bundle/2020.acl-main.2v2.pdf", pdfs[2]),  # new-style id with a version suffix
        ("bundle/P19-1003.pdf", pdfs[3]),  # crc32 of the record differs
        ("bundle/renamed.pdf", pdfs[4]),  # no id in the name: sha256 of the record
        ("bundle/again/P19-1001.pdf", pdfs[1]),  # a duplicate: not even read
        ("bundle/P19-1005.pdf", pdfs[5][: len(pdfs[5]) // 2]),  # cut off: no %%EOF
        ("bundle/P19-1006.pdf", b"<html>not found</html>"),  # claims to be a PDF, is not
        ("bundle/README.md", b"# my papers\n"),  # a non-PDF file
        ("bundle/stranger.pdf", pdfs[7]),  # a valid PDF nobody harvested
        ("../../" + escape, pdfs[6]),  # climbs out
        ("/" + escape, pdfs[6]),  # absolute
    ]


EXPECTED = {
    "bundle/P19-1001.pdf": ("matched", None, "P19-1001"),
    "bundle/2020.acl-main.2v2.pdf": ("matched", None, "2020.acl-main.2"),
    "bundle/P19-1003.pdf": ("refused", "checksum_mismatch", "P19-1003"),
    "bundle/renamed.pdf": ("matched", None, "D19-1004"),
    "bundle/again/P19-1001.pdf": ("duplicate", "paper_has_pdf", "P19-1001"),
    "bundle/P19-1005.pdf": ("corrupt", "truncated", None),
    "bundle/P19-1006.pdf": ("corrupt", "not_pdf", None),
    "bundle/README.md": ("refused", "not_pdf", None),
    "bundle/stranger.pdf": ("unmatched", None, None),
}


@pytest.mark.parametrize("kind", ["tar", "tar.gz", "zip"])
def test_archive_with_good_broken_and_hostile_members(db, corpus, tmp_path, kind, monkeypatch):
    escape = f"escaped-{uuid.uuid4().hex}.pdf"
    members = hostile_members(corpus, escape)
    if kind == "zip":
        path = write_zip(tmp_path / "bundle.zip", members + [("bundle/link.pdf", "symlink", "/etc/passwd")])
    else:
        links = [("bundle/link.pdf", "symlink", "/etc/passwd"), ("bundle/hard.pdf", "hardlink", "bundle/P19-1001.pdf")]
        path = write_tar(tmp_path / f"bundle.{kind}", members + links, mode="w:gz" if kind == "tar.gz" else "w")
    settings = settings_for(tmp_path)
    work = tmp_path / "cwd" / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)  # `../../x` from here would land in tmp_path/cwd

    report = run_import_pdfs(db, settings, path, list_files=True)

    got = outcomes(report)
    for member, expected in EXPECTED.items():
        assert got[member] == expected, member
    assert got["../../" + escape][:2] == ("refused", "unsafe_path")
    assert got["/" + escape][:2] == ("refused", "unsafe_path")
    assert got["bundle/link.pdf"][:2] == ("refused", "link")
    if kind != "zip":
        assert got["bundle/hard.pdf"][:2] == ("refused", "link")
    assert report.counts["matched"] == 3 and report.counts["corrupt"] == 2 and report.failed >= 6
    for where in (tmp_path / "cwd" / escape, tmp_path / escape, Path("/") / escape, work / escape):
        assert not where.exists(), f"{where} was written"
    stored = docs(db)
    assert {i for i, d in stored.items() if d.outcome == "ok"} == {"P19-1001", "2020.acl-main.2", "D19-1004"}
    prov = stored["2020.acl-main.2"].provenance
    assert prov["via"] == "import" and prov["member"] == "bundle/2020.acl-main.2v2.pdf"
    assert prov["source"] == str(path) and prov["matched_by"] == "anthology_id"
    assert stored["D19-1004"].provenance["matched_by"] == "sha256"
    assert stored["P19-1001"].url.startswith(path.as_uri() + "#")
    assert sorted(p.name for p in (settings.data_dir / "pdfs").glob("??/??/*.pdf")) == sorted(
        f"{sha(corpus[i])}.pdf" for i in (1, 2, 4))
    assert_store_consistent(db, settings.data_dir)


def test_rerun_skips_every_settled_file_without_reading_it(db, corpus, tmp_path, monkeypatch):
    path = write_tar(tmp_path / "b.tar", hostile_members(corpus, "x.pdf"))
    settings = settings_for(tmp_path)
    first = run_import_pdfs(db, settings, path)
    stored = {p: p.stat().st_mtime_ns for p in (settings.data_dir / "pdfs").glob("??/??/*.pdf")}

    opened = []
    real = verify.copy_checked
    monkeypatch.setattr(verify, "copy_checked", lambda *a, **k: opened.append(1) or real(*a, **k))
    again = run_import_pdfs(db, settings, path, list_files=True)

    assert again.already == sum(first.counts.values()) == 11
    assert sum(again.counts.values()) == 0 and not opened
    assert {p: p.stat().st_mtime_ns for p in (settings.data_dir / "pdfs").glob("??/??/*.pdf")} == stored
    assert {f["member"]: f["outcome"] for f in again.files}["bundle/P19-1001.pdf"] == "matched"


def test_unmatched_files_are_matched_after_a_later_harvest_and_retry(db, corpus, tmp_path):
    path = write_zip(tmp_path / "b.zip", [("P19-1099.pdf", corpus[6])])
    settings = settings_for(tmp_path)
    assert run_import_pdfs(db, settings, path).counts["unmatched"] == 1
    add_paper(db, "P19-1099", crc32=crc(corpus[6]))
    assert run_import_pdfs(db, settings, path).already == 1  # settled: not looked at again by default
    assert run_import_pdfs(db, settings, path, retry_unmatched=True).counts["matched"] == 1
    assert docs(db)["P19-1099"].outcome == "ok"


def test_folder_import_matches_by_doi_arxiv_and_crc32_confirmed_by_title(db, tmp_path):
    pdfs = {i: make_pdf(i) for i in range(3)}
    add_paper(db, "dblp-kdd-1", doi="10.1145/3292500.3330701", pdf_url="https://dl.acm.org/doi/pdf/x")
    add_paper(db, "dblp-1", arxiv="1908.10383", pdf_url="https://arxiv.org/pdf/1908.10383")
    add_paper(db, "P19-1100", crc32=crc(pdfs[2]), title="A title the blank page does not show")
    folder = tmp_path / "papers"
    (folder / "sub").mkdir(parents=True)
    (folder / "10.1145_3292500.3330701.pdf").write_bytes(pdfs[0])
    (folder / "sub" / "1908.10383v2.pdf").write_bytes(pdfs[1])
    (folder / "unnamed.pdf").write_bytes(pdfs[2])  # crc32 matches P19-1100, but not its title
    (folder / "link.pdf").symlink_to(folder / "unnamed.pdf")
    report = run_import_pdfs(db, settings_for(tmp_path), folder, list_files=True)
    got = {f["member"]: (f["outcome"], f["matched_by"], f["reason"]) for f in report.files}
    assert got["10.1145_3292500.3330701.pdf"] == ("matched", "doi", None)
    assert got["sub/1908.10383v2.pdf"] == ("matched", "arxiv", None)
    assert got["unnamed.pdf"][0] == "unmatched"
    assert "crc32 collision" in next(f["detail"] for f in report.files if f["member"] == "unnamed.pdf")
    assert got["link.pdf"] == ("refused", None, "link")


def test_zip_bombs_stop_at_the_size_cap(db, tmp_path):
    add_paper(db, "P19-1200")
    declared = zip_bomb(tmp_path / "bomb.zip", "P19-1200.pdf", 60 * CAP)
    lying = zip_bomb(tmp_path / "liar.zip", "P19-1200.pdf", 60 * CAP, declared=CAP // 2)
    assert declared.stat().st_size < CAP  # 60 MB of zeros in well under 1 MB
    settings = settings_for(tmp_path)

    first = run_import_pdfs(db, settings, declared, list_files=True)
    assert outcomes(first)["P19-1200.pdf"][:2] == ("refused", "too_large")
    second = run_import_pdfs(db, settings, lying, list_files=True)
    outcome, reason, _ = outcomes(second)["P19-1200.pdf"]
    assert outcome == "corrupt" and reason in ("unreadable", "not_pdf")  # read stops at the declared size
    assert "P19-1200" not in docs(db)
    assert not list((settings.data_dir / "pdfs").glob("??/??/*.pdf")) and not PdfStore(settings.data_dir).partial_files()


def test_streamed_copy_stops_at_the_cap_whatever_the_member_claims(tmp_path):
    store = PdfStore(tmp_path)

    class Endless:
        def read(self, n: int) -> bytes:
            return b"%PDF-1.7 " + b"\0" * (n - 9)

    copied = verify.copy_checked(Endless(), store, max_bytes=5 * 65536)
    assert copied.reason == "too_large" and copied.temp is None and not store.partial_files()


def test_imported_pdf_closes_the_download_queue_item_and_replaces_a_failed_download(db, corpus, tmp_path):
    pid = add_paper(db, "P19-1300", crc32=crc(corpus[6]))
    with db.session() as s:
        s.add(Document(paper_id=pid, outcome="failed", reason="http_404", attempts=1))
        s.add(WorkItem(stage="download", item_id=pid, state="failed", last_error="http_404"))
    run_import_pdfs(db, settings_for(tmp_path), write_zip(tmp_path / "b.zip", [("P19-1300.pdf", corpus[6])]))
    with db.session() as s:
        doc = s.scalars(select(Document).where(Document.paper_id == pid)).one()
        item = s.scalars(select(WorkItem).where(WorkItem.item_id == pid)).one()
    assert (doc.outcome, doc.reason, doc.sha256) == ("ok", None, sha(corpus[6]))
    assert item.state == "done" and item.last_error is None


def test_create_makes_flagged_records_from_generated_pdfs(db, tmp_path):
    data = Path(__file__).parent / "data" / "pdfs"
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("rouge-paper.pdf", "plain-paper.pdf", "scanned.pdf"):
        (folder / name).write_bytes((data / name).read_bytes())
    settings = settings_for(tmp_path)
    settings.download.max_bytes = 50_000_000
    report = run_import_pdfs(db, settings, folder, create=True, list_files=True)
    assert report.counts["created"] == 3
    with db.session() as s:
        papers = {p.records[0].raw["member"]: p for p in s.scalars(select(Paper))}
        rouge = papers["rouge-paper.pdf"]
        assert rouge.title == "Effective and Efficient Classification with Fine-grained Affinity"
        assert rouge.authors == ["Matt Lindqvist", "Yuning Okafor", "Chidi Okafor"]
        assert rouge.source == "local" and rouge.ident.startswith("local-")
        raw = rouge.records[0].raw
        assert raw["created_by"] == "review import pdfs --create"
        assert raw["derived_from"] == {"title": "pdf_metadata", "authors": "pdf_metadata", "year": "creation_date"}
        scanned = papers["scanned.pdf"]  # metadata says "untitled", the page has no text
        assert scanned.title == "scanned.pdf" and scanned.records[0].raw["derived_from"]["title"] == "file_name"
    # the same files again under other names: found by their sha256, not created twice
    again = tmp_path / "again"
    again.mkdir()
    (again / "copy.pdf").write_bytes((data / "rouge-paper.pdf").read_bytes())
    second = run_import_pdfs(db, settings, again, create=True, list_files=True)
    assert outcomes(second)["copy.pdf"][:2] == ("duplicate", "same_bytes")


REAL = {  # file -> (title words, first author, year), from the fixture's SOURCE.md
    "acl2019-P19-1330-hardy-highres.pdf": ("HighRES: Highlight-based Reference-less Evaluation of Summarization", "Hardy", 2019),
    "acl2020-2020.acl-main.121-zhu-cross-lingual-summarization.pdf": ("Attend, Translate and Summarize: An Efficient Method for Neural Cross-Lingual Summarization", "Junnan Zhu", 2020),
    "acl2020-mao-facet-aware-evaluation.pdf": ("Facet-Aware Evaluation for Extractive Summarization", "Yuning Mao", 2020),
    "acl2020-papalampidi-screenplay-summarization.pdf": ("Screenplay Summarization Using Latent Narrative Structure", "Pinelopi Papalampidi", 2020),
    "emnlp2019-D19-1051-kryscinski-critical-evaluation.pdf": ("Neural Text Summarization: A Critical Evaluation", "Wojciech Kryscinski", 2019),
    "emnlp2019-D19-1298-xiao-carenini-long-doc-extractive.pdf": ("Extractive Summarization of Long Documents by Combining Global and Local Context", "Wen Xiao", 2019),
    "emnlp2019-D19-1620-grenander-lead-bias.pdf": ("Countering the Effects of Lead Bias in News Summarization via Multi-Stage Training and Auxiliary Losses", "Matt Grenander", 2019),
    "inlg2024-koyama-ngram-fscore-gec.pdf": ("n-gram F-score for Evaluating Grammatical Error Correction", "Shota Koyama", 2024),
    "newsum2019-antognini-faltings-semsentsum.pdf": ("Learning to Create Sentence Semantic Relation Graphs for Multi-Document Summarization", "Diego Antognini", 2019),
}


def test_create_on_the_real_fixture_pdfs(db, tmp_path):
    from tests.conftest import shared_path

    folder = shared_path("pdfs")
    settings = settings_for(tmp_path)
    settings.download.max_bytes = 50_000_000
    report = run_import_pdfs(db, settings, folder, create=True, list_files=True)
    got = outcomes(report)
    assert got["truncated-emnlp2019-D19-1620-grenander-lead-bias.pdf"][:2] == ("corrupt", "truncated")
    assert got["SOURCE.md"][:2] == ("refused", "not_pdf")
    with db.session() as s:
        papers = {p.records[0].raw["member"]: p for p in s.scalars(select(Paper))}
    assert set(papers) == set(REAL)
    for name, (title, first_author, year) in REAL.items():
        p = papers[name]
        assert p.title == title, name
        assert p.authors[0].replace("Hardy Hardy", "Hardy") == first_author, name
        assert p.year == year, name


def test_names_give_anthology_doi_and_arxiv_ids():
    assert ids_in_name("acl2019-P19-1330-hardy-highres.pdf").anthology == ("P19-1330",)
    assert ids_in_name("2020.acl-main.121v2.pdf").anthology == ("2020.acl-main.121",)
    assert ids_in_name("p19-1330v3.PDF").anthology == ("P19-1330",)
    assert ids_in_name("x/2021.findings-acl.12/paper.pdf").anthology == ("2021.findings-acl.12",)
    assert "10.18653/v1/d19-1620" in ids_in_name("10.18653%2Fv1%2FD19-1620.pdf").dois
    assert "10.1145/3292500.3330701" in ids_in_name("10.1145_3292500.3330701.pdf").dois
    assert ids_in_name("1908.10383.pdf").arxiv == ("1908.10383",)
    assert ids_in_name("hep-th_9901001v2.pdf").arxiv == ("hep-th/9901001",)
    assert not ids_in_name("2019_EMNLP_CAN.pdf") and not ids_in_name("acl2019.pdf")


def test_unsafe_names():
    for name in ("../x.pdf", "a/../../x.pdf", "/etc/x.pdf", "C:/x.pdf", "a\\..\\x.pdf", "x\x00.pdf"):
        assert archive.unsafe_name(name), name
    for name in ("a/b.pdf", "..a.pdf", "a..b/c.pdf"):
        assert archive.unsafe_name(name) is None, name


def test_cli_lists_every_file_and_fails_on_corrupt_ones(cli, db, db_url, tmp_path):
    pdf = make_pdf(1)
    add_paper(db, "P19-1001", crc32=crc(pdf))
    path = write_tar(tmp_path / "b.tar", [("P19-1001.pdf", pdf), ("P19-1002.pdf", b"%PDF-1.4 cut")])
    code, out, err = cli("--db", db_url, "import", "pdfs", str(path), "--json")
    assert code == 1, err
    result = json.loads(out)
    assert result["counts"]["matched"] == 1 and result["counts"]["corrupt"] == 1
    assert [f["member"] for f in result["files"]] == ["P19-1001.pdf", "P19-1002.pdf"]
    assert "import pdfs: 1 matched" in err
    with db.session() as s:
        assert s.scalar(select(ImportedFile.outcome).where(ImportedFile.member == "P19-1002.pdf")) == "corrupt"


def test_a_cut_off_archive_keeps_what_was_read_and_says_where_it_broke(db, tmp_path):
    pdfs = {i: make_pdf(i, pad=200_000 if i == 3 else 0) for i in range(1, 4)}
    for i in pdfs:
        add_paper(db, f"P19-140{i}", crc32=crc(pdfs[i]))
    whole = write_tar(tmp_path / "whole.tar.gz", [(f"P19-140{i}.pdf", pdfs[i]) for i in pdfs], mode="w:gz")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])  # ends inside the third, big member
    report = run_import_pdfs(db, settings_for(tmp_path), cut, list_files=True)
    got = outcomes(report)
    assert got["P19-1401.pdf"][0] == got["P19-1402.pdf"][0] == "matched"
    assert got["P19-1403.pdf"][:2] == ("corrupt", "unreadable")
    assert got["(rest of the archive)"][:2] == ("refused", "damaged_archive")
    assert not PdfStore(settings_for(tmp_path).data_dir).partial_files()


def test_create_cuts_over_long_metadata_and_records_the_cut(db, tmp_path, caplog):
    """Issue 18.5 for --create: a PDF's metadata is as untrusted as an anthology file. A
    5,000,000-character title (its words on the first page, so it is taken as the title) and
    2,500 authors are cut to the harvest's limits, and the original lengths are recorded."""
    import logging

    from reportlab.pdfgen import canvas

    from review.db.models import SourceRecord
    from review.harvest.records import LIST_LIMITS, TEXT_LIMITS

    folder = tmp_path / "in"
    folder.mkdir()
    pdf = canvas.Canvas(str(folder / "long.pdf"))
    pdf.setTitle("Summarization Evaluation " * 200_000)
    pdf.setAuthor("; ".join(["Ann Lee"] * 2500))
    pdf.drawString(72, 700, "Summarization Evaluation")
    pdf.drawString(72, 680, "Ann Lee")
    pdf.showPage()
    pdf.save()
    settings = settings_for(tmp_path)
    settings.download.max_bytes = 50_000_000
    with caplog.at_level(logging.WARNING, logger="review"):
        report = run_import_pdfs(db, settings, folder, create=True)
    assert report.counts["created"] == 1
    with db.session() as s:
        paper = s.scalars(select(Paper)).one()
        raw = s.scalars(select(SourceRecord.raw)).one()
        assert len(paper.title) == TEXT_LIMITS["title"] and paper.title.startswith("Summarization Evaluation")
        assert len(paper.authors) == LIST_LIMITS["authors"][0]
    assert raw["truncated"] == {"title": len(("Summarization Evaluation " * 200_000).strip()), "authors": 2500}
    assert len(raw["metadata"]["title"]) == TEXT_LIMITS["title"]
    assert len(raw["metadata"]["authors"]) == LIST_LIMITS["authors"][0]
    assert len(json.dumps(raw)) < 100_000
    assert any("long.pdf" in r.getMessage() and "title of 4,999,999" in r.getMessage() for r in caplog.records)
