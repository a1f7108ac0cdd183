"""`review show ID` on the sample survey: labels with evidence and pages, human answers,
history; papers named by public id; a missing database or unknown id is an error."""

from __future__ import annotations

import json
from pathlib import Path

from review.extract.backends import get_backend
from review.extract.normalize import normalize_pages

DB = "sqlite:///db/sample/review.sqlite"


def _survey(cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli("--silent", "survey", "--sample")
    assert code == 0, err


def test_show_one_paper_with_evidence_pages_and_history(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _survey(cli)
    code, out, err = cli("--db", DB, "show", "2019.sample-1.3", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["paper"]["ident"] == "2019.sample-1.3" and view["document"]["outcome"] == "ok"
    labels = view["labels"][0]
    assert labels["rule_set"] == "rouge" and labels["computes"] is True and labels["evidence"]
    # every page named is the page of the PDF whose own text holds the matched words
    pdf = tmp_path / "db" / "sample" / view["document"]["path"]
    pages = [normalize_pages([p]) for p in get_backend("pypdfium2")(pdf).pages]
    assert len(pages) == 2
    seen = set()
    for e in labels["evidence"]:
        core = e["snippet"].strip("…")[len(e["snippet"]) // 3:][:30]  # a stretch from the snippet's middle
        assert e["page"] in (1, 2) and core in pages[e["page"] - 1], (e, core)
        seen.add(e["page"])
    assert {h["command"] for h in view["history"]} >= {"download", "extract", "label", "compute"}
    assert view["computed"]["label_source"] == "automated" and view["human"] == []
    code, out, err = cli("--db", DB, "show", "2019.sample-1.3")
    assert code == 0 and "human answers: none" in out and "Evidence (rouge)" in out and "History" in out


def test_show_unknown_id_names_near_ids(cli) -> None:  # type: ignore[no-untyped-def]
    _survey(cli)
    code, out, err = cli("--db", DB, "show", "2019.sample-1.99")
    assert code == 8 and "no paper with this id" in err and "2019.sample-1.2" in err and "Traceback" not in out + err


def test_status_says_reasons_in_words_and_the_next_step(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("db", "upgrade")[0] == 0
    code, out, _ = cli("status")
    assert code == 0 and "next: review harvest acl" in out
    _survey(cli)
    code, out, err = cli("--db", DB, "status", "--json")
    data = json.loads(out)
    reasons = {(r["stage"], r["reason"]) for r in data["stages"] if r["reason"]}
    assert ("download", "the server answered 404 Not Found") in reasons
    assert ("extract", "the PDF cannot be read (corrupt or truncated)") in reasons
    assert not any("." in (r or "") and "_" in (r or "") for _, r in reasons)  # no column names
    assert data["next"].startswith("the human pass")  # sample: labelled, computed, exported, nobody answered
    code, out, _ = cli("--db", DB, "status")
    assert out.rstrip().splitlines()[-1].startswith("next: the human pass")


def test_find_paper_by_doi_arxiv_and_former_ident(db) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from review.db.models import Paper
    from review.errors import InputFileError
    from review.show import find_paper

    with db.session() as s:
        s.add(Paper(ident="D19-1620", source="acl", title="Lead bias", doi="10.18653/v1/D19-1620",
                    doi_key="10.18653/v1/d19-1620", arxiv_id="1908.11723", former_idents=["old-key-1"]))
        s.flush()
        for ref in ("D19-1620", "https://doi.org/10.18653/V1/D19-1620", "10.18653/v1/d19-1620", "1908.11723", "old-key-1"):
            assert find_paper(s, ref).ident == "D19-1620", ref
        with pytest.raises(InputFileError):
            find_paper(s, "D19-9999")
