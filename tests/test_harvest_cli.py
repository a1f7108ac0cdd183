"""`review harvest acl|dblp` from the command line: summaries, runs, JSON, exit codes."""

from __future__ import annotations

import json
import shutil

from tests.harvest_support import ACL_DATA, DBLP_DATA, DblpApi, git


def test_harvest_acl_prints_a_summary_and_records_a_run(cli):
    code, out, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA))
    assert code == 0, err
    assert "harvest acl: 9 added, 0 updated, 0 unchanged, 0 duplicates, 4 skipped by filter" in err
    code, out, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA), "--json", "--from-year", "2001")
    data = json.loads(out)
    assert (data["added"], data["unchanged"], data["skipped_by_filter"], data["skipped_cutoff"]) == (3, 9, 1, 1)
    code, out, _ = cli("status", "--json")
    status = json.loads(out)
    assert status["papers"] == 12 and status["records_by_source"] == {"acl": 12}
    runs = [r for r in status["runs"] if r["command"] == "harvest acl"]
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    assert runs[0]["counts"]["added"] + runs[1]["counts"]["added"] == 12
    # 2019.tiny-1.7 and W01-1002 have no <url>: the status says how many papers lack a PDF URL
    no_pdf = [r for r in status["stages"] if r["stage"] == "harvested" and r["outcome"] == "no PDF URL"]
    assert [r["count"] for r in no_pdf] == [2]
    code, out, _ = cli("status")
    assert "no PDF URL" in out


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


def test_harvest_acl_as_of_from_the_command_line(cli, tmp_path):
    repo = tmp_path / "anthology"
    shutil.copytree(ACL_DATA, repo)
    git(repo, "init", "-q", "-b", "master")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first", when="2022-06-01T12:00:00+00:00")
    (repo / "data" / "xml" / "P02.xml").unlink()
    git(repo, "commit", "-q", "-am", "second", when="2023-03-01T12:00:00+00:00")
    code, out, err = cli("harvest", "acl", "--data-dir", str(repo), "--as-of", "2022-12-29", "--json")
    assert code == 0, err
    assert json.loads(out)["added"] == 9  # P02 is still there in the 2022 state
    code, out, _ = cli("status", "--json")
    run = next(r for r in json.loads(out)["runs"] if r["command"] == "harvest acl")
    assert run["status"] == "ok"
    code, _, err = cli("harvest", "acl", "--data-dir", str(repo), "--as-of", "someday")
    assert code == 3 and "as-of is not a date" in err
    code, _, err = cli("harvest", "acl", "--data-dir", str(ACL_DATA), "--as-of", "2022-12-29")
    assert code != 0 and "needs a git clone" in err
