"""`review import texts`: ACL OCL's parquet and JSON Lines beside the PDFs' texts, and which
text the labels, the export and the status then use."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

from review.db.models import PaperLabel, PaperText
from review.errors import ConfigError, InputFileError
from review.importer import text_source
from review.importer.texts import OCL_COLUMNS, run_import_texts
from review.search import search
from review.settings import Settings
from review.status import build_status
from tests.import_support import add_paper

ROUGE = ("We evaluate with the py-rouge package and ROUGE-1.5.5 using -c 95 -r 1000 -n 2 -m. "
         "The eﬃcient evalu-\nation of summaries is a well known problem.")
PLAIN = "We train a parser on the Penn Treebank and report labeled attachment scores."


def ocl_table(rows: list[dict]) -> pa.Table:
    """A table in ACL OCL's column shape and types (bibtex fields as strings, S2 ids as integers)."""
    ints = {"corpus_paper_id", "numcitedby"}
    cols = {c: pa.array([r.get(c) for r in rows], type=pa.int64() if c in ints else pa.string()) for c in OCL_COLUMNS}
    return pa.table(cols)


def ocl_row(acl_id: str, text: str | None, n: int = 0) -> dict:
    return {"acl_id": acl_id, "full_text": text, "abstract": (text or "")[:40], "title": f"Paper {acl_id}",
            "corpus_paper_id": 1000 + n, "pdf_hash": f"{n:040x}", "numcitedby": n, "year": "2019",
            "author": "Doe, Jane  and\nRoe, Richard", "url": f"https://aclanthology.org/{acl_id}",
            "ENTRYTYPE": "inproceedings", "ID": f"doe-etal-2019-{n}", "booktitle": "Proceedings of ACL",
            "doi": f"10.18653/v1/{acl_id}", "pages": "1--9", "month": "July", "publisher": "ACL"}


def write_ocl(path: Path, rows: list[dict], row_group_size: int | None = None) -> Path:
    pq.write_table(ocl_table(rows), path, row_group_size=row_group_size)
    return path


@pytest.fixture
def settings(tmp_path) -> Settings:
    s = Settings(data_dir=tmp_path / "data")
    s.imports.text_batch = 3
    s.imports.workers = 2
    return s


def texts(db, source: str | None = None) -> dict[int, PaperText]:
    with db.session() as s:
        q = select(PaperText)
        if source:
            q = q.where(PaperText.source == source)
        return {t.paper_id: t for t in s.scalars(q)}


def add_pdf_text(db, paper_id: int, content: str) -> None:
    with db.session() as s:
        s.add(PaperText(paper_id=paper_id, content=content, chars=len(content), outcome="ok", extractor="pypdfium2",
                        extractor_version="5", normalizer_version="1"))


def test_ocl_parquet_is_streamed_normalized_and_stored_beside_pdf_texts(db, settings, tmp_path):
    ids = {f"P19-{1000 + i}": add_paper(db, f"P19-{1000 + i}") for i in range(8)}
    add_pdf_text(db, ids["P19-1000"], "the text of the PDF itself")
    rows = [ocl_row(acl_id, ROUGE if i % 2 else PLAIN, i) for i, acl_id in enumerate(ids)]
    rows += [ocl_row("P19-9999", PLAIN, 99), ocl_row("P19-1001", PLAIN, 100), ocl_row("X", None, 101)]
    rows[3]["full_text"] = "   "
    path = write_ocl(tmp_path / "acl-publication-info.74k.v2.parquet", rows, row_group_size=4)

    report = run_import_texts(db, settings, path)

    assert report.corpus_version == "74k.v2" and report.source == "acl-ocl-grobid"
    assert report.counts == {"imported": 7, "empty": 1, "unmatched": 2, "duplicate": 1}
    assert report.unmatched_examples == ["P19-9999", "X"]
    ocl = texts(db, "acl-ocl-grobid")
    assert set(ocl) == {ids[a] for a in ids if a != "P19-1003"}
    t = ocl[ids["P19-1001"]]
    assert "efficient evaluation of summaries" in t.content and "ﬃ" not in t.content  # same normalization as PDFs
    assert t.content == text_source_normalized(ROUGE)
    assert (t.extractor, t.extractor_version, t.outcome, t.pages) == ("acl-ocl-grobid", "74k.v2", "ok", None)
    assert t.provenance["pdf_hash"] == f"{1:040x}" and t.provenance["corpus_paper_id"] == 1001
    assert t.provenance["corpus_version"] == "74k.v2" and t.provenance["id"] == "P19-1001"
    assert texts(db, "pdf")[ids["P19-1000"]].content == "the text of the PDF itself"  # untouched

    again = run_import_texts(db, settings, path)
    assert again.counts["unchanged"] == 7 and "imported" not in again.counts
    newer = run_import_texts(db, settings, path, corpus_version="2024-01")
    assert newer.counts["updated"] == 7
    assert {t.id for t in texts(db, "acl-ocl-grobid").values()} == {t.id for t in ocl.values()}  # rows updated in place
    assert {t.extractor_version for t in texts(db, "acl-ocl-grobid").values()} == {"2024-01"}


def text_source_normalized(text: str) -> str:
    from review.extract.normalize import normalize

    return normalize(text)


def test_parquet_without_the_ocl_columns_is_refused_with_the_columns_named(db, settings, tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": ["a"], "body": ["x"]}), path)
    with pytest.raises(InputFileError, match="no column acl_id, full_text"):
        run_import_texts(db, settings, path)


def test_jsonl_texts_with_a_malformed_line(db, settings, tmp_path):
    pid = add_paper(db, "2021.newsum-1.3")
    local = add_paper(db, "local-abc", pdf_url=None)
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join([json.dumps({"ident": "2021.newsum-1.3", "text": ROUGE}), "{not json",
                               json.dumps({"ident": "local-abc", "text": PLAIN}),
                               json.dumps({"id": "x", "text": "no ident"})]) + "\n")
    report = run_import_texts(db, settings, path, source="mine", corpus_version="1")
    assert report.counts == {"imported": 2, "malformed": 2}
    got = texts(db, "mine")
    assert set(got) == {pid, local} and got[pid].extractor == "mine" and got[pid].extractor_version == "1"


def test_text_source_setting_parses_and_rejects():
    assert text_source.parse("prefer-pdf") == ["pdf", "*"]
    assert text_source.parse("prefer-acl-ocl-grobid") == ["acl-ocl-grobid", "*"]
    assert text_source.parse("acl-ocl-grobid") == ["acl-ocl-grobid"]
    assert text_source.parse("acl-ocl-grobid, pdf") == ["acl-ocl-grobid", "pdf"]
    for bad in ("", "pdf,pdf"):
        with pytest.raises(ConfigError):
            text_source.parse(bad)


def label(db, settings, choice: str):
    from review.rules.stage import run_label

    settings.label.text_source = choice
    return run_label(db, settings)


def labels(db) -> dict[int, PaperLabel]:
    with db.session() as s:
        return {pl.paper_id: pl for pl in s.scalars(select(PaperLabel))}


def test_labels_use_the_chosen_text_say_which_and_follow_a_changed_choice(db, settings, tmp_path):
    both = add_paper(db, "P19-2001")  # PDF text says nothing, the corpus text cites py-rouge
    ocl_only = add_paper(db, "P19-2002")
    pdf_only = add_paper(db, "P19-2003")
    add_pdf_text(db, both, PLAIN)
    add_pdf_text(db, pdf_only, ROUGE)
    path = write_ocl(tmp_path / "acl-publication-info.74k.v2.parquet",
                     [ocl_row("P19-2001", ROUGE, 1), ocl_row("P19-2002", ROUGE, 2)])
    run_import_texts(db, settings, path)

    first = label(db, settings, "prefer-pdf")
    assert first.labeled == 3 and first.text_sources == {"pdf": 2, "acl-ocl-grobid@74k.v2": 1}
    got = labels(db)
    assert got[both].extra["text_source"] == "pdf" and got[both].prelim is False
    assert got[ocl_only].extra["text_source"] == "acl-ocl-grobid" and got[ocl_only].extra["text_version"] == "74k.v2"
    assert got[ocl_only].extra["text_id"] == texts(db, "acl-ocl-grobid")[ocl_only].id
    assert "texts: acl-ocl-grobid@74k.v2 1, pdf 2" in first.summary()

    assert label(db, settings, "prefer-pdf").labeled == 0  # nothing changed

    second = label(db, settings, "acl-ocl-grobid")  # only the corpus: the paper with both is labeled again
    assert second.labeled == 1 and second.text_sources == {"acl-ocl-grobid@74k.v2": 1}
    got = labels(db)
    assert got[both].extra["text_source"] == "acl-ocl-grobid" and got[both].prelim is True
    assert "ROUGE-1.5.5" in got[both].packages and got[both].params
    assert got[pdf_only].extra["text_source"] == "pdf"  # its old label stays; no corpus text to use


def test_export_says_which_text_the_labels_came_from(db, settings, tmp_path):
    from review.compute import run_compute
    from review.export.dataset import read_records

    both = add_paper(db, "P19-3001")
    add_paper(db, "P19-3002")
    add_pdf_text(db, both, ROUGE)
    run_import_texts(db, settings, write_ocl(tmp_path / "acl-publication-info.74k.v2.parquet",
                                             [ocl_row("P19-3001", PLAIN, 1), ocl_row("P19-3002", ROUGE, 2)]))
    label(db, settings, "prefer-pdf")
    run_compute(db, settings)
    with db.session() as s:
        rows = {r.values["paper_ident"]: r for r in read_records(s)}
    assert len(rows) == 2  # one row per paper, whatever the number of texts
    assert rows["P19-3001"].values["text_source"] == "pdf"
    assert rows["P19-3002"].values["text_source"] == "acl-ocl-grobid@74k.v2"
    assert rows["P19-3002"].text_ok and rows["P19-3002"].document_ok  # full text retrieved, from the corpus
    assert rows["P19-3002"].values["error_extract"] is None


def test_imported_texts_are_searchable_and_counted_apart(db, settings, tmp_path):
    pid = add_paper(db, "P19-4001")
    add_pdf_text(db, pid, PLAIN)
    run_import_texts(db, settings, write_ocl(tmp_path / "x.parquet", [ocl_row("P19-4001", ROUGE, 1)]),
                     corpus_version="t")
    hits = search(db, '"py-rouge"')
    assert [h.ident for h in hits] == ["P19-4001"]
    with db.session() as s:
        status = build_status(s)
    stages = {(r["stage"], r["outcome"]): r["count"] for r in status.stages}
    assert stages[("extract", "ok")] == 1 and stages[("import texts", "acl-ocl-grobid")] == 1


def test_check_says_which_text_it_read():
    from review.check import check_file
    from review.rules.stage import resolve_rules

    data = Path(__file__).parent / "data" / "pdfs"
    ruleset = resolve_rules(Settings())
    assert check_file(data / "rouge-paper.txt", ruleset).as_dict()["text_source"] == "text file"
    assert check_file(data / "rouge-paper.pdf", ruleset).as_dict()["text_source"] == "pdf"


def test_cli_imports_texts_and_reports_json(cli, db, db_url, tmp_path):
    add_paper(db, "P19-5001")
    path = write_ocl(tmp_path / "acl-publication-info.74k.v2.parquet", [ocl_row("P19-5001", ROUGE, 1)])
    code, out, err = cli("--db", db_url, "import", "texts", str(path), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["counts"] == {"imported": 1} and result["corpus_version"] == "74k.v2"
    assert "import texts (acl-ocl-grobid 74k.v2): 1 imported" in err
    code, _, err = cli("--db", db_url, "import", "texts", str(tmp_path / "missing.parquet"))
    assert code == 8 and "no such file" in err
