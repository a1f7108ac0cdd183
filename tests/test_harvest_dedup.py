"""Cross-source duplicates: one paper, two records, and PRISMA counts that are plain counts."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from review.db.models import Paper, SourceRecord
from review.harvest.acl import harvest_acl
from review.harvest.dblp import harvest_dblp
from review.harvest.records import HarvestRecord, clean_title, normalize_doi, title_key
from review.harvest.result import HarvestResult
from review.harvest.store import RecordStore
from tests.harvest_support import ACL_DATA, DblpApi, counts_of, paper, settings_for


@pytest.fixture
def api(local_server):
    fake = DblpApi()
    fake.install(local_server)
    fake.url = local_server.url
    return fake


def _records(db, ident):
    with db.session() as s:
        p = s.scalars(select(Paper).where(Paper.ident == ident)).one()
        return sorted((r.source, r.source_id, r.duplicate_reason) for r in p.records)


def test_acl_then_dblp(db, tmp_path, api):
    s = settings_for(tmp_path, dblp_api_url=api.url)
    harvest_acl(db, s, data_dir=ACL_DATA)
    result = harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    assert (result.added, result.duplicates) == (3, 2)
    assert dict(result.duplicate_reasons) == {"doi": 1, "title+year": 1}
    assert _records(db, "2019.tiny-1.2") == [("acl", "2019.tiny-1.2", None),
                                             ("dblp", "conf/nips/Crossref19", "title+year")]
    assert _records(db, "2019.tiny-1.3") == [("acl", "2019.tiny-1.3", None),
                                             ("dblp", "conf/nips/AnonymousB19", "doi")]
    # PRISMA: records identified = 9 + 5, duplicates removed = 2, papers = 12
    assert counts_of(db) == {"papers": 12, "records": 14}
    with db.session() as sess:
        dups = sess.scalar(select(func.count()).select_from(SourceRecord).where(SourceRecord.duplicate_reason.is_not(None)))
    assert dups == 2
    # the ACL paper keeps its own fields; DBLP adds nothing it already had
    assert paper(db, "2019.tiny-1.2").pdf_url == "https://aclanthology.org/2019.tiny-1.2.pdf"
    again = harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    assert (again.added, again.duplicates, again.unchanged) == (0, 0, 5)
    assert counts_of(db) == {"papers": 12, "records": 14}


def test_dblp_then_acl(db, tmp_path, api):
    s = settings_for(tmp_path, dblp_api_url=api.url)
    harvest_dblp(db, s, mode="api", venues=["neurips"], from_year=2019, cutoff="2020-01-01")
    result = harvest_acl(db, s, data_dir=ACL_DATA)
    assert (result.added, result.duplicates) == (7, 2)
    p = paper(db, "conf/nips/AnonymousB19")
    # the anthology fills in what DBLP lacked: a PDF URL and its checksum
    assert p.pdf_url == "https://aclanthology.org/2019.tiny-1.3.pdf" and p.pdf_crc32 == "c3d4e5f6"
    assert p.pdf_unresolved_reason is None and p.bibkey == "anonymous-2019-paper"
    assert counts_of(db) == {"papers": 12, "records": 14}


def _rec(source, sid, title, year=2020, doi=None):
    return HarvestRecord(source=source, source_id=sid, ident=f"{source}-{sid}", title=title, year=year, doi=doi)


def test_records_of_one_source_are_never_merged_with_each_other(db):
    result = HarvestResult("acl")
    with RecordStore(db, result) as store:
        store.add(_rec("acl", "a", "Same Title"))
        store.add(_rec("acl", "b", "Same Title"))
    other = HarvestResult("dblp")
    with RecordStore(db, other) as store:
        store.add(_rec("dblp", "x", "Same title."))
        store.add(_rec("dblp", "y", "SAME TITLE"))
        store.add(_rec("dblp", "z", "Same Title", year=2021))  # another year: another paper
        store.add(_rec("dblp", "x", "Same title."))  # met twice in one harvest
    assert result.added == 2
    assert (other.duplicates, other.added, other.repeated) == (2, 1, 1)
    assert counts_of(db) == {"papers": 3, "records": 5}


def test_duplicates_across_batches(db):
    result = HarvestResult("acl")
    with RecordStore(db, result, batch_size=3) as store:
        for i in range(7):
            store.add(_rec("acl", str(i), f"Title {i}", doi=f"10.1000/x{i}"))
    other = HarvestResult("dblp")
    with RecordStore(db, other, batch_size=2) as store:
        for i in range(7):
            store.add(_rec("dblp", str(i), f"Different {i}", doi=f"https://doi.org/10.1000/X{i}"))
    assert other.duplicates == 7 and other.added == 0
    assert counts_of(db) == {"papers": 7, "records": 14}


def test_normalization():
    assert title_key("Café <b>et al.</b>: Naïve &amp; Bayes.") == title_key("cafe b et al b naive bayes")
    assert title_key("Squeeze-and-Excitation Networks.") == title_key("Squeeze-and-Excitation Networks")
    assert clean_title("Don&apos;t Stop.") == "Don't Stop" and clean_title("Wait...") == "Wait..."
    assert normalize_doi("https://doi.org/10.1109/CVPR.2018.00745") == "10.1109/cvpr.2018.00745"
    assert normalize_doi("no doi") is None


def test_an_update_of_the_first_source_keeps_what_the_second_filled_in(db):
    first = _rec("dblp", "k", "A Paper", doi="10.1000/abc")
    with RecordStore(db, HarvestResult("dblp")) as store:
        store.add(first)
    acl = _rec("acl", "2020.x-1.1", "A Paper", doi="10.1000/abc")
    acl.pdf_url, acl.pdf_crc32 = "https://aclanthology.org/2020.x-1.1.pdf", "abcd1234"
    with RecordStore(db, HarvestResult("acl")) as store:
        store.add(acl)
    changed = _rec("dblp", "k", "A Paper, Revised", doi="10.1000/abc")
    result = HarvestResult("dblp")
    with RecordStore(db, result) as store:
        store.add(changed)
    assert result.updated == 1
    p = paper(db, "dblp-k")
    assert p.title == "A Paper, Revised" and p.pdf_url == "https://aclanthology.org/2020.x-1.1.pdf"
    assert p.pdf_crc32 == "abcd1234" and p.pdf_unresolved_reason is None
