"""`review export` on the hand-worked corpus: exact statistics, exact columns, same bytes twice."""

from __future__ import annotations

import csv
import json

import pytest

from review.compute import run_compute
from review.errors import ConfigError
from review.export import run_export
from review.export.dataset import COLUMNS, RELEASED_COLUMNS, headers
from review.metric import default_metric
from review.settings import Settings
from tests.compute_support import EXPECTED, EXPECTED_FIG3, EXPECTED_PRISMA, EXPECTED_STATS, known_corpus

RELEASED = ("paper_ident, paper_url, paper_author, paper_title, paper_venue, paper_year, paper_month, "
            "paper_booktitle, paper_address, paper_publisher, paper_pages, paper_rouge, paper_rouge_prelim, "
            "paper_params, paper_protocol, paper_packages, paper_variants, code_url, code_rouge, code_rouge_prelim, "
            "code_packages, packages, software_error, reproducible, error_download, error_extract").split(", ")


@pytest.fixture
def exported(db, tmp_path):
    known_corpus(db)
    run_compute(db, Settings())
    result = run_export(db, Settings(), out_dir=tmp_path / "out")
    return db, result, tmp_path / "out"


def test_statistics_equal_the_hand_computed_values(exported):
    _, _, out = exported
    stats = {s["name"]: s for s in json.loads((out / "statistics.json").read_text())}
    for name, (count, denominator) in EXPECTED_STATS.items():
        assert (stats[name]["count"], stats[name]["denominator"]) == (count, denominator), name
        if denominator:
            assert stats[name]["share"] == round(count / denominator, 6)
            assert 0 <= stats[name]["ci_low"] <= stats[name]["share"] <= stats[name]["ci_high"] <= 1
    with (out / "figure3.csv").open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["year", "reproducible", "incorrect package", "unknown package",
                       "correct package, not reproducible", "total"]
    assert {int(r[0]): tuple(int(x) for x in r[1:5]) for r in rows[1:]} == EXPECTED_FIG3
    with (out / "prisma.csv").open() as fh:
        flow = {r["box"]: int(r["count"]) for r in csv.DictReader(fh)}
    assert flow["records from acl"] == EXPECTED_PRISMA["records_acl"]
    assert flow["records from dblp"] == EXPECTED_PRISMA["records_dblp"]
    assert flow["duplicates removed"] == EXPECTED_PRISMA["duplicates_removed"]
    assert flow["no PDF retrieved"] == EXPECTED_PRISMA["no_pdf"] and flow["no text extracted"] == EXPECTED_PRISMA["no_text"]
    assert flow["full-text papers"] == EXPECTED_PRISMA["full_text"]
    assert flow["excluded by the preliminary search"] == EXPECTED_PRISMA["excluded_prelim"]
    assert flow["excluded by screening"] == EXPECTED_PRISMA["excluded_screening"]
    assert flow["papers that compute ROUGE"] == EXPECTED_PRISMA["included"]
    with (out / "packages.csv").open() as fh:
        pk = {r["package"]: r for r in csv.DictReader(fh)}
    assert (pk["GL/rougescore"]["papers_paper"], pk["GL/rougescore"]["papers_code"], pk["GL/rougescore"]["papers"]) == ("1", "2", "3")
    assert pk["PC/pyrouge"]["software_error"] == "unknown" and pk["ROUGE-1.5.5"]["software_error"] == "false"
    with (out / "comparison.csv").open() as fh:
        cmp = {r["statistic"]: r for r in csv.DictReader(fh)}
    assert cmp["reproducible"]["published"] == "0.2" and cmp["reproducible"]["this_run"] == "0.5"
    assert cmp["package:GL/rougescore"]["this_run"] == "3" and cmp["rouge_papers"]["this_run"] == "8"


def test_dataset_has_exactly_the_released_columns_first(exported):
    _, result, out = exported
    written = headers(default_metric())  # the ROUGE metric folder names the columns as the paper released them
    assert written[:len(RELEASED_COLUMNS)] == RELEASED and len(written) == len(COLUMNS)
    with (out / "dataset.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == written
    by_ident = {r["paper_ident"]: r for r in rows}
    assert [r["paper_ident"] for r in rows] == sorted(EXPECTED)
    assert by_ident["p10"]["error_download"] == "http_404" and by_ident["p09"]["error_extract"] == "corrupt"
    assert by_ident["p12"]["software_error"] == "" and by_ident["p03"]["software_error"] == "true"
    assert json.loads(by_ident["p11"]["packages"]) == ["GL/rougescore", "ROUGE-1.5.5", "unknown pyrouge"]
    assert by_ident["p05"]["label_source"] == "mixed" and by_ident["p05"]["code_rouge"] == "false"


def test_rerun_is_byte_identical(exported, tmp_path):
    db, first, out = exported
    second = run_export(db, Settings(), out_dir=tmp_path / "again")
    names = sorted(p.name for p in first.files)
    assert names == sorted(p.name for p in second.files)
    assert {"figure1.png", "figure1.svg", "figure3.png", "figure3.svg", "prisma.png", "prisma.svg",
            "report.html", "manifest.json"} <= set(names)
    for name in names:
        assert (out / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


def test_manifest_traces_the_data(exported):
    db, _, out = exported
    m = json.loads((out / "manifest.json").read_text())
    assert m["version"] and m["rule_sets"][0]["sha256"] == "a" * 64 and len(m["packages_catalog"]["sha256"]) == 64
    assert m["database"]["counts"]["papers"] == 13 and m["database"]["counts"]["reproducibility"] == 13
    assert [r["command"] for r in m["runs"]] == ["compute"]
    assert m["time"] == m["runs"][0]["finished_at"] and m["time"].endswith("+00:00")
    assert set(m["files"]) >= {"dataset.csv", "report.html", "statistics.csv"}
    import hashlib
    assert m["files"]["dataset.csv"] == hashlib.sha256((out / "dataset.csv").read_bytes()).hexdigest()


def test_report_is_self_contained(exported):
    _, result, _ = exported
    text = result.report.read_text()
    assert text.count("<svg") == 3 and "<script" not in text and "http://" not in text.split("<svg")[0][-200:]
    assert "published" in text and "2,834" in text and "PRISMA" in text


def test_time_can_be_given(exported, tmp_path):
    db, _, _ = exported
    run_export(db, Settings(), out_dir=tmp_path / "t", time="2026-01-01T00:00:00+00:00")
    assert json.loads((tmp_path / "t" / "manifest.json").read_text())["time"] == "2026-01-01T00:00:00+00:00"


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_other_formats_round_trip(exported, tmp_path, fmt):
    db, _, _ = exported
    result = run_export(db, Settings(), out_dir=tmp_path / fmt, fmt=fmt)
    if fmt == "jsonl":
        rows = [json.loads(line) for line in result.dataset.read_text().splitlines()]
        assert list(rows[0]) == headers(default_metric())
    else:
        import pyarrow.parquet as pq
        rows = pq.read_table(result.dataset).to_pylist()
        assert pq.read_schema(result.dataset).names == headers(default_metric())
    by_ident = {r["paper_ident"]: r for r in rows}
    assert by_ident["p11"]["packages"] == ["GL/rougescore", "ROUGE-1.5.5", "unknown pyrouge"]
    assert by_ident["p12"]["software_error"] is None and by_ident["p02"]["reproducible"] is True
    assert by_ident["p01"]["paper_year"] == 2019


def test_bad_format_is_a_config_error(db, tmp_path):
    with pytest.raises(ConfigError, match="xlsx"):
        run_export(db, Settings(), out_dir=tmp_path, fmt="xlsx")


def test_export_without_compute_warns(db, tmp_path):
    known_corpus(db)
    result = run_export(db, Settings(), out_dir=tmp_path / "o")
    assert any("review compute" in w for w in result.warnings)


def test_cli_export(cli, tmp_path):
    from review.db import migrate
    from review.db.session import Database
    db = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(db)
    known_corpus(db)
    db.dispose()
    assert cli("compute")[0] == 0
    code, out, err = cli("export", "--format", "jsonl", "--out", "x")
    assert code == 0, err
    assert "report:" in out and (tmp_path / "x" / "dataset.jsonl").is_file() and "exported 13 papers" in err
    code, _, err = cli("export", "--format", "nope")
    assert code == 3 and "nope" in err
