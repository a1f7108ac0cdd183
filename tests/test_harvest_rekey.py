"""Upgrading a database harvested with the wrong old-style identifiers (schema 0007 -> 0008).

The previous release stored W01 volume 1 paper 1 as W01-1001, the identifier of volume 10
paper 1, which it stored as W01-10001. The upgrade gives every paper the identifier of its
own `<url>`; paper rows keep their ids, so every downstream row (documents, texts, labels,
findings, human decisions, codebases, reproducibility labels, work items) stays attached to
the same paper. The next harvest then updates those records instead of adding papers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lxml import etree
from sqlalchemy import func, select

from review.db import migrate
from review.db.models import (Codebase, CodebaseLink, Document, Finding, HumanDecision, Paper, PaperLabel, PaperText,
                              Reproducibility, SourceRecord, WorkItem)
from review.db.session import Database
from review.harvest.acl import harvest_acl
from review.labelstudio.offline import import_annotations
from tests.conftest import shared_path
from tests.harvest_support import ACL_DATA, insert_row, paper, previous_release_ident, settings_for
from tests.labelstudio_support import choices

SITE = "https://aclanthology.org"
DOWNSTREAM = (Document, PaperText, PaperLabel, Finding, HumanDecision, Codebase, Reproducibility, WorkItem)


def _old_release_records(xml: Path) -> list[dict[str, Any]]:
    """Each paper of a collection file as the previous release keyed and stored it."""
    root = etree.parse(str(xml)).getroot()
    out = []
    for vol in root.iter("volume"):
        year = int(vol.find("meta/year").text)
        for p in vol.iterfind("paper"):
            url = p.find("url")
            doi = p.find("doi")
            ident = previous_release_ident(root.get("id"), vol.get("id"), p.get("id"))
            out.append({"ident": ident, "title": " ".join("".join(p.find("title").itertext()).split()), "year": year,
                        "url": f"{SITE}/{ident}/", "pdf_url": f"{SITE}/{url.text}.pdf" if url is not None else None,
                        "doi": doi.text.lower() if doi is not None else None,
                        "true": url.text if url is not None else None})
    return out


def _old_database(db_url: str, rows: list[dict[str, Any]]) -> tuple[Database, dict[str, int]]:
    """A database at schema 0007 holding `rows` as harvested by the previous release."""
    db = Database(db_url)
    migrate.upgrade(db, "0007")
    ids = {}
    with db.engine.begin() as conn:
        for row in rows:
            pid = insert_row(conn, "papers", ident=row["ident"], source="acl", title=row["title"], year=row["year"],
                             url=row["url"], pdf_url=row["pdf_url"], doi=row["doi"])
            insert_row(conn, "source_records", paper_id=pid, source="acl", source_id=row["ident"], raw={},
                       content_hash="hash-of-the-previous-release")
            ids[row["ident"]] = pid
    return db, ids


def _downstream(db: Database, pid: int, tag: str) -> None:
    """One row of every kind that hangs off a paper, as the later stages would have written it."""
    with db.engine.begin() as conn:
        rule_set = insert_row(conn, "rule_sets", name=f"rules-{tag}", metric="rouge", sha256=tag * 64, content="")
        insert_row(conn, "documents", paper_id=pid, outcome="ok", url=f"pdf-of-{tag}")
        insert_row(conn, "texts", paper_id=pid, outcome="ok", content=f"text of {tag}")
        insert_row(conn, "paper_labels", paper_id=pid, rule_set_id=rule_set, prelim=True, computes=True)
        insert_row(conn, "findings", paper_id=pid, rule_set_id=rule_set, rule_id="r1", kind="metric", label="rouge",
                   start=0, end=5, match="ROUGE", snippet="ROUGE")
        insert_row(conn, "human_decisions", paper_id=pid, question="P0", answer="yes", annotator="user:1",
                   origin="file:export", annotation_ref=f"ann-{tag}")
        cb = insert_row(conn, "codebases", paper_id=pid, url=f"https://github.com/o/{tag}")
        insert_row(conn, "codebase_links", codebase_id=cb, source="anthology_pwccode")
        insert_row(conn, "reproducibility", paper_id=pid, label_source="rules")
        insert_row(conn, "work_items", stage="download", item_id=pid)


def _attached(db: Database) -> dict[str, list[tuple[int, str]]]:
    """For each downstream table: (paper id, paper ident) of each row."""
    out = {}
    with db.session() as s:
        for model in DOWNSTREAM:
            key = model.item_id if model is WorkItem else model.paper_id
            out[model.__tablename__] = sorted(s.execute(select(key, Paper.ident).join(Paper, Paper.id == key)).all())
    return out


def test_upgrade_rekeys_swapped_identifiers_and_keeps_every_downstream_row(db_url, tmp_path):
    rows = _old_release_records(ACL_DATA / "data" / "xml" / "W01.xml")
    assert [r["ident"] for r in rows] == ["W01-1001", "W01-10001", "W01-10002"]  # the first names another paper
    db, ids = _old_database(db_url, rows)
    for ident, tag in (("W01-1001", "a"), ("W01-10001", "b")):
        _downstream(db, ids[ident], tag)
    before = _attached(db)
    migrate.upgrade(db)

    first, tenth, nourl = paper(db, "W01-0101"), paper(db, "W01-1001"), paper(db, "W01-1002")
    assert (first.id, first.title, first.former_idents) == (ids["W01-1001"], "A Paper Before 2002", ["W01-1001"])
    assert (tenth.id, tenth.title, tenth.former_idents) == (ids["W01-10001"], "The First Paper of Volume Ten",
                                                            ["W01-10001"])
    assert nourl.id == ids["W01-10002"]  # no <url>: the Anthology's rule
    assert first.url == f"{SITE}/W01-0101/" and tenth.url == f"{SITE}/W01-1001/"
    renamed = {ids[k]: v for k, v in (("W01-1001", "W01-0101"), ("W01-10001", "W01-1001"))}
    assert _attached(db) == {table: sorted((pid, renamed.get(pid, ident)) for pid, ident in pairs)
                             for table, pairs in before.items()}
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(CodebaseLink)) == 2
        assert s.scalars(select(PaperText.content).where(PaperText.paper_id == first.id)).one() == "text of a"
        recs = dict(s.execute(select(SourceRecord.source_id, SourceRecord.paper_id)).all())
        assert recs == {"W01-0101": first.id, "W01-1001": tenth.id, "W01-1002": nourl.id}
        assert set(s.scalars(select(SourceRecord.content_hash))) == {None}  # the next harvest rewrites them

    again = harvest_acl(db, settings_for(tmp_path), data_dir=ACL_DATA, from_year=2000)
    assert (again.added, again.updated) == (9, 3)  # W01 updated in place; the other files were not held
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Paper)) == 12
    assert _attached(db) == {table: sorted((pid, renamed.get(pid, ident)) for pid, ident in pairs)
                             for table, pairs in before.items()}
    db.dispose()


def test_an_export_made_before_the_upgrade_still_imports(db_url, tmp_path):
    """Label Studio tasks carry the ident they were made with; after the re-key it is a former one."""
    db, ids = _old_database(db_url, _old_release_records(ACL_DATA / "data" / "xml" / "W01.xml"))
    migrate.upgrade(db)
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"id": 7, "data": {"ref": f"paper:{ids['W01-1001']}", "ident": "W01-1001"},
                                   "annotations": [{"id": 70, "completed_by": 1, "result": [choices("P0", "yes")],
                                                    "updated_at": "2026-11-20T10:00:00Z", "was_cancelled": False}]}]))
    got = import_annotations(db, settings_for(tmp_path), export)
    assert (got.tasks, got.new) == (1, 2)  # P0 = yes, and P1 left empty under it: "no parameters"
    with db.session() as s:
        assert set(s.scalars(select(HumanDecision.paper_id))) == {paper(db, "W01-0101").id}
    db.dispose()


def test_upgrade_of_the_real_w02_collection(db_url, tmp_path):
    root = shared_path("acl-anthology-oldstyle")
    rows = _old_release_records(root / "data" / "xml" / "W02.xml")
    wrong = [r for r in rows if r["ident"] != r["true"]]
    assert len(rows) == len(wrong) == 366
    assert sum(r["ident"] in {x["true"] for x in rows} for r in wrong) > 0  # some carry another paper's id
    db, ids = _old_database(db_url, rows)
    _downstream(db, ids["W02-1001"], "t")  # "Teaching NLP/CL through Games", stored under Collins' id
    migrate.upgrade(db)
    with db.session() as s:
        stored = dict(s.execute(select(Paper.ident, Paper.title)).all())
        doc_paper = s.scalars(select(Paper.ident).join(Document, Document.paper_id == Paper.id)).one()
    assert stored == {r["true"]: r["title"] for r in rows}  # every paper under its own <url>
    assert doc_paper == "W02-0101" and stored["W02-0101"].startswith("Teaching NLP/CL through Games")
    result = harvest_acl(db, settings_for(tmp_path), data_dir=root, cutoff="")
    assert (result.updated, result.added) == (366, 1103)  # W02 updated in place, D19 new
    assert paper(db, "W02-0101").doi == "10.3115/1118108.1118109"
    db.dispose()
