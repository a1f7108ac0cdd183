"""The command line: status as table and JSON, errors as one line with an exit code."""

import json
import re

from typer.main import get_command

from review.cli.app import app
from tests.conftest import ROOT


def test_status_on_a_fresh_directory_says_there_is_no_database(cli, tmp_path):
    """A read-only command never creates a database (issue 31: a mistyped path read as an empty survey)."""
    code, out, err = cli("status")
    assert code == 4 and "no database at " in err and "db/review.sqlite" in err and "Traceback" not in out + err
    assert not (tmp_path / "db").exists()
    code, out, err = cli("db", "upgrade")
    assert code == 0, err
    code, out, err = cli("status")
    assert code == 0, err
    assert "harvested" in out and "Last runs" in out


def test_read_only_commands_refuse_a_mistyped_sqlite_path(cli, tmp_path):
    assert cli("db", "upgrade")[0] == 0
    for command in (("status",), ("export",), ("show", "P19-1001")):
        code, out, err = cli("--db", "sqlite:///db/reveiw.sqlite", *command)
        assert code == 4 and "no database at db/reveiw.sqlite" in err, (command, err)
        assert "databases in that folder: review.sqlite" in err
    assert sorted(p.name for p in (tmp_path / "db").iterdir() if p.suffix == ".sqlite") == ["review.sqlite"]


def test_status_json_has_stable_keys(cli):
    assert cli("db", "upgrade")[0] == 0
    code, out, _ = cli("status", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"papers", "records_by_source", "stages", "queue", "runs", "schema", "database"} <= set(data)
    assert data["schema"]
    assert {"stage", "outcome", "reason", "count"} == set(data["stages"][0])


def test_db_upgrade_records_a_run_and_reports(cli):
    code, _, err = cli("db", "upgrade")
    assert code == 0 and "upgraded empty ->" in err
    code, _, err = cli("db", "upgrade")
    assert "already at" in err
    code, out, _ = cli("status", "--json")
    runs = json.loads(out)["runs"]
    assert [r["command"] for r in runs] == ["db upgrade", "db upgrade"]
    assert all(r["status"] == "ok" for r in runs)


def test_bad_database_url_is_one_line_with_config_exit_code(cli):
    code, out, err = cli("--db", "nonsense", "status")
    assert code == 3
    assert "not a database URL: 'nonsense'" in err and "Traceback" not in err + out


def test_bad_config_file_names_the_key(cli, tmp_path):
    (tmp_path / "review.toml").write_text("[download]\nmax_byte = 3\n")
    code, _, err = cli("status")
    assert code == 3 and "download.max_byte" in err


def test_postgres_url_that_is_down_is_a_database_error(cli):
    code, _, err = cli("--db", "postgresql://nobody@127.0.0.1:1/none", "status")
    assert code == 4 and "cannot open the database" in err


def test_every_command_has_help_with_an_example_and_is_documented():
    docs = "\n".join(f.read_text() for f in sorted((ROOT / "docs").glob("*.md")))
    root = get_command(app)

    def walk(cmd, prefix: str):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, f"{prefix} {name}".strip())
        else:
            yield prefix, cmd

    commands = list(walk(root, ""))
    assert commands
    for name, cmd in commands:
        assert cmd.help and "Example:" in cmd.help, f"`review {name}` lacks help with an example"
        example = cmd.help.split("Example:", 1)[1].lstrip("\n ")
        assert example.startswith("\b"), f"`review {name}`: examples need click's \\b marker or they fold into one line"
        assert re.search(rf"^#+ review {re.escape(name)}$", docs, flags=re.M), f"`review {name}` has no section in docs/"


def test_logs_go_to_stderr_so_json_stays_parseable(cli, capfd):
    import logging

    from review.log import get_logger, setup_logging

    setup_logging()
    get_logger("test").error("paper X: download failed: http_404")
    out, err = capfd.readouterr()
    assert "http_404" in err and "http_404" not in out
