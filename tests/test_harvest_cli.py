"""`review harvest acl|dblp` from the command line: summaries, runs, JSON, exit codes."""

from __future__ import annotations

import json
import shutil

from tests.harvest_support import ACL_DATA, DBLP_DATA, DblpApi


def test_harvest_acl_prints_a_summary_and_records_a_run(cli):
    code, out, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA))
    assert code == 0, err
    assert "harvest acl: 9 added, 0 updated, 0 unchanged, 0 duplicates, 2 skipped by filter" in err
    code, out, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA), "--json", "--from-year", "2001")
    data = json.loads(out)
    assert (data["added"], data["unchanged"], data["skipped_by_filter"], data["skipped_cutoff"]) == (1, 9, 1, 1)
    code, out, _ = cli("status", "--json")
    status = json.loads(out)
    assert status["papers"] == 10 and status["records_by_source"] == {"acl": 10}
    runs = [r for r in status["runs"] if r["command"] == "harvest acl"]
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    assert runs[0]["counts"]["added"] + runs[1]["counts"]["added"] == 10


def test_harvest_acl_with_a_broken_file_exits_1_after_the_rest(cli, tmp_path):
    data = tmp_path / "checkout"
    shutil.copytree(ACL_DATA, data)
    (data / "data" / "xml" / "X99.xml").write_text("<collection id='X99'><volume", encoding="utf-8")
    code, _, err = cli("harvest", "acl", "--data-dir", str(data))
    assert code == 1
    assert "9 added" in err and "1 failed" in err and "X99.xml" in err


def test_bad_cutoff_is_a_config_error(cli):
    code, _, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA), "--cutoff", "last tuesday")
    assert code == 3 and "cut-off is not a date" in err


def test_harvest_dblp_dump_and_missing_dtd(cli, tmp_path):
    code, _, err = cli("harvest", "dblp", "--mode", "dump", "--dump", str(DBLP_DATA / "dblp.xml"))
    assert code == 0, err
    assert "harvest dblp: 10 added" in err and "1 without a PDF URL" in err
    alone = tmp_path / "alone.xml"
    shutil.copy(DBLP_DATA / "dblp.xml", alone)
    code, _, err = cli("harvest", "dblp", "--mode", "dump", "--dump", str(alone))
    assert code == 8 and "dblp.dtd not found" in err


def test_harvest_dblp_api_from_a_config_file(cli, tmp_path, local_server):
    DblpApi().install(local_server)
    (tmp_path / "review.toml").write_text(
        f'[http]\nper_host_rate = 0\n\n[harvest]\ndblp_api_url = "{local_server.url}"\ndblp_delay = 0\n')
    code, out, err = cli("harvest", "dblp", "--venue", "iclr", "--venue", "cvpr", "--json")
    assert code == 0, err
    assert json.loads(out)["added"] == 7  # ICLR 2017-2020, CVPR 2018-2020 of the fixtures
    code, _, err = cli("harvest", "dblp", "--venue", "nosuch")
    assert code == 3 and "unknown DBLP venue" in err
