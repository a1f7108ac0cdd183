"""`review survey`: the whole pipeline offline on the sample corpus, resume, failures, gaps."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path

import pytest

from review.db import migrate
from review.db.session import Database
from review.settings import Settings
from review.survey import run_sample_survey, run_survey

pytestmark = pytest.mark.slow

# The ROUGE sample survey's data exports, to the byte (issue 15: making the pipeline
# metric-neutral must not move them; checked against the exports made before the metric
# folders existed, where only manifest.json and report.html's run times differed). The
# figures (PNG/SVG) depend on the plotting library's version and are left out. A change
# of labels or statistics that is meant must update these hashes in the same commit and
# say why; the last such change: issue 31 added the provenance columns (dataset.csv: rule_set,
# extractor, code_scan; statistics: provenance), every earlier column and value unchanged; the report's one
# interval per count/denominator and citation share (comparison, statistics), tasks that link
# the local PDFs, one finding per span and the paper form's C0 (human/*.json), and the code
# scan's reachability rules.
ROUGE_SAMPLE_EXPORTS = {
    "comparison.csv": "2251ae189ec3a15216277c23b45476a482d824e609156ff728e5241fae532a8a",
    "dataset.csv": "f4a717fdbfe95d865c5554f08b8438e1210ade6f92c6169687e9b320c794b482",
    "figure3.csv": "24e487d9f73e81eff825f4d5b285ef80f41e42c746878160a8ff1cd889b74bfd",
    "human/code.json": "33fb72f4bc9c323fcec7b464c0a1e4b687a897f5ec5afdf0bef3dc7ec6e65c79",
    "human/papers.json": "f1a1373287c8e3938bd9ad71ee3058abb841eef1dd06ee53fd7ab544cf677886",
    "packages.csv": "8c03cbc5c8f6ad6ececb5896c1d446a932ebd70250df9c1fe9a872d09fbf5bf0",
    "prisma.csv": "77541a49d4b14ea90c652f07b441fbf5a4f221fba70c093340c11423160a6f49",
    "statistics.csv": "29581fba5c7c70b346375daab01e9bab65b00803dd77e38be4ab7e985510e7e5",
    "statistics.json": "5c52fba2e91add71d7e93a5b60f297feae996c869bd7e768e0d82ebf23ce75dc",
}


def _dataset(out: Path) -> dict[str, dict[str, str]]:
    with (out / "dataset.csv").open() as fh:
        return {r["paper_ident"]: r for r in csv.DictReader(fh)}


def test_sample_survey_end_to_end_then_rerun_is_identical(cli, tmp_path):
    code, out, err = cli("--silent", "survey", "--sample", "--json")
    assert code == 0, err
    result = json.loads(out)
    status = {s["stage"]: s["status"] for s in result["stages"]}
    assert status == {"harvest": "ok", "download": "ok", "extract": "ok", "label": "ok", "code link": "ok",
                      "code github": "skipped", "code scan": "ok", "human": "ok", "compute": "ok", "export": "ok"}
    exports = tmp_path / "exports" / "sample"
    assert result["report"] == str(exports / "report.html") and Path(result["report"]).is_file()
    assert {Path(f).name for f in result["figures"]} == {"figure1.png", "figure1.svg", "figure3.png", "figure3.svg",
                                                         "prisma.png", "prisma.svg"}
    assert (tmp_path / "db" / "sample" / "review.sqlite").is_file()  # its own database, not db/review.sqlite
    assert (exports / "human" / "papers.json").is_file()
    rows = _dataset(exports)
    assert len(rows) == 12
    assert rows["2022.sample-1.12"]["error_download"] == "http_404"  # the PDF the server does not have
    assert rows["2022.sample-1.9"]["error_extract"]  # the broken PDF
    for ident in ("2021.sample-1.6", "2021.sample-1.7", "2021.sample-1.8"):
        assert rows[ident]["paper_rouge"] == "false"
    assert rows["2018.sample-1.1"]["r1"] == "true" and "ROUGE-1.5.5" in rows["2018.sample-1.1"]["paper_packages"]
    assert rows["2020.sample-1.4"]["r2"] == "true" and json.loads(rows["2020.sample-1.4"]["paper_packages"]) == ["MS/rouge"]
    assert json.loads(rows["2020.sample-1.5"]["code_packages"]) == ["PT/files2rouge", "ROUGE-1.5.5"]  # wrapper + Perl script
    assert json.loads(rows["2022.sample-1.11"]["paper_packages"]) == ["DD/sacrerouge"]
    assert rows["2022.sample-1.11"]["software_error"] == "false"
    with (exports / "prisma.csv").open() as fh:
        flow = {r["box"]: int(r["count"]) for r in csv.DictReader(fh)}
    assert (flow["records from acl"], flow["no PDF retrieved"], flow["no text extracted"], flow["full-text papers"]) == (12, 1, 1, 10)
    # the review tasks link the local PDFs, whose paths lie under this test's folder
    data_files = {str(p.relative_to(exports)): hashlib.sha256(p.read_bytes().replace(str(tmp_path).encode(), b"<tmp>"))
                  .hexdigest() for p in sorted(exports.rglob("*")) if p.suffix in (".csv", ".json")
                  and p.name != "manifest.json"}
    assert data_files == ROUGE_SAMPLE_EXPORTS, "the ROUGE sample survey's data exports changed (see ROUGE_SAMPLE_EXPORTS)"
    before = {p.name: p.read_bytes() for p in exports.iterdir() if p.is_file()}

    code, out, err = cli("--silent", "survey", "--sample", "--json")
    assert code == 0, err
    again = {s["stage"]: s["summary"] for s in json.loads(out)["stages"]}
    assert again["download"].startswith("downloaded 0 PDFs") and "unchanged" in again["compute"]
    after = {p.name: p.read_bytes() for p in exports.iterdir() if p.is_file()}
    assert before == after  # a rerun changes nothing, to the byte


def test_interrupted_survey_resumes_where_it_stopped(tmp_path, monkeypatch):
    import review.extract.stage as extract_stage

    settings = Settings(data_dir=tmp_path / "data", exports_dir=tmp_path / "exports")
    real = extract_stage.run_extract

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(extract_stage, "run_extract", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_sample_survey(settings)
    monkeypatch.setattr(extract_stage, "run_extract", real)
    result = run_sample_survey(settings)
    summaries = {s.name: s.summary for s in result.stages}
    assert summaries["download"].startswith("downloaded 0 PDFs")  # done before the stop, not fetched again
    assert "10 ok" in summaries["extract"] and result.report is not None
    db = Database(f"sqlite:///{tmp_path / 'data' / 'sample' / 'review.sqlite'}")
    from sqlalchemy import select
    from review.db.models import Run
    with db.session() as s:
        statuses = [(r.command, r.status) for r in s.scalars(select(Run).where(Run.command == "survey").order_by(Run.id))]
    db.dispose()
    assert statuses == [("survey", "interrupted"), ("survey", "ok")]


def test_failed_and_missing_stages_are_reported_and_the_rest_runs(tmp_path, monkeypatch):
    import sys

    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "review.codebases.link", None)  # as if that area were not installed
    empty = tmp_path / "no-anthology"
    empty.mkdir()
    settings = Settings(data_dir=tmp_path / "data", exports_dir=tmp_path / "exports")
    settings.harvest.acl_data_dir = str(empty)
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    migrate.upgrade(db)
    result = run_survey(db, settings, sources=("acl",), acl_update=False)
    db.dispose()
    status = {s.name: (s.status, s.summary) for s in result.stages}
    assert status["harvest"][0] == "failed" and "no anthology XML" in status["harvest"][1]
    assert status["code link"][0] == "missing"
    assert status["code github"][0] == "skipped" and "GITHUB_TOKEN" in status["code github"][1]
    assert status["human"][0] == "ok" and "review queue papers" in status["human"][1]
    assert status["compute"][0] == "ok" and status["export"][0] == "ok" and result.report.is_file()
    assert result.failed == ["harvest"]


def test_human_decisions_from_the_offline_round_trip_change_the_labels(tmp_path):
    """Reviewers answer in Label Studio (here: its JSON export), `review pull --from-file`
    stores the decisions, and the next survey's labels rest on them."""
    from review.labelstudio.offline import import_annotations

    settings = Settings(data_dir=tmp_path / "data", exports_dir=tmp_path / "exports")
    first = run_sample_survey(settings)
    before = _dataset(first.out_dir)
    assert before["2022.sample-1.11"]["reproducible"] == "false"  # sacrerouge cited, no parameters found
    tasks = json.loads((first.out_dir / "human" / "papers.json").read_text())
    task = next(t for t in tasks if t["data"]["ident"] == "2022.sample-1.11")
    task["id"] = 501
    task["annotations"] = [{
        "id": 9001, "completed_by": {"email": "reviewer@example.org"}, "updated_at": "2026-11-01T10:00:00Z",
        "result": [
            {"from_name": "P0", "to_name": "evidence", "type": "choices", "value": {"choices": ["yes"]}},
            {"from_name": "P1", "to_name": "evidence", "type": "textarea", "value": {"text": ["-c 95 -r 1000 -n 2"]}},
        ]}]
    export = tmp_path / "ls-export.json"
    export.write_text(json.dumps([task]))
    db = Database(f"sqlite:///{tmp_path / 'data' / 'sample' / 'review.sqlite'}")
    import_annotations(db, settings, export)
    db.dispose()

    second = run_sample_survey(settings)
    after = _dataset(second.out_dir)
    row = after["2022.sample-1.11"]
    assert row["reproducible"] == "true" and row["r1"] == "true" and row["paper_params"] == "true"
    assert json.loads(row["paper_param_strings"]) == ["-c 95 -r 1000 -n 2"]
    assert row["label_source"] == "mixed" and json.loads(row["label_sources"])["P1"] == "human"
    stats = {s["name"]: s["count"] for s in json.loads((second.out_dir / "statistics.json").read_text())}
    assert stats["reproducible"] == sum(1 for r in before.values() if r["reproducible"] == "true") + 1
