"""Malformed and hostile service answers (issue 34, items 1-5): no crash, bounded memory, no secret printed.

Every service is played by a loopback server: one that echoes the request headers in a
400 body (Label Studio `queue`/`pull`, GitHub `code github` with a ghp_ token, DBLP with
credentials in its URL), one that sends an endless 200 body, one that answers JSON nested
200,000 deep, and Label Studio exports of the wrong shapes. Files cut short (gzip) and
bad XML are made in the test.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import resource
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from code_support import add_paper
from review.codebases.github import GitHubClient, run_github
from review.db import migrate
from review.db.models import Codebase, HumanDecision, Paper
from review.db.session import Database
from review.errors import InputFileError, ServiceError
from review.harvest.dblp import harvest_dblp
from review.http import HttpClient, ResponseTooLarge, load_json
from review.labelstudio.client import LabelStudioClient
from review.labelstudio.offline import import_annotations
from review.localserver import LocalServer, Reply, Request
from review.settings import HttpSettings, Settings
from tests.harvest_support import DBLP_DATA, DblpApi, settings_for
from tests.labelstudio_support import choices, seed_papers

LS_TOKEN = "b6dc" + "9f1e27a04c5d8b3e6f9a1c2d4e7b8a0f3c5d"  # split: a fake Label Studio token
GH_TOKEN = "ghp_" + "EchoedT0kenThatMustNeverLeak012345678"  # split: a fake GitHub token
DBLP_USER, DBLP_PASSWORD = "reviewer", "mirr0rPassw0rd2026xyz"
CAP = 2_000_000  # a small http.max_response_bytes keeps the endless answers quick
DEEP = "[" * 200_000


def echo(req: Request) -> Reply:
    """A 400 whose body repeats every request header, as careless error pages do."""
    first = sorted(req.headers.items(), key=lambda kv: kv[0].lower() != "authorization")  # in the shown part
    lines = "\n".join(f"{k}: {v}" for k, v in first)
    return Reply(400, json.dumps({"detail": f"bad request\n{lines}", "headers": req.headers}),
                 {"Content-Type": "application/json"})


@pytest.fixture
def echo_server():  # type: ignore[no-untyped-def]
    with LocalServer() as server:
        for method in ("GET", "POST", "PATCH", "DELETE"):
            server.route("/", echo, method, prefix=True)
        yield server


def _cli_db(tmp_path: Path) -> Database:
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    return database


def _no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text


# ---------------------------------------------------------------- 1. --debug never prints a secret

@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("command", [("queue", "papers"), ("pull",)])
def test_label_studio_echo_never_reaches_stderr(cli, tmp_path, echo_server, monkeypatch, debug, command):
    database = _cli_db(tmp_path)
    seed_papers(database, 2)
    database.dispose()
    monkeypatch.setenv("LABEL_STUDIO_URL", echo_server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LS_TOKEN)
    code, out, err = cli(*(["--debug"] if debug else []), *command)
    assert code == 7, err
    assert any(r.headers.get("Authorization") == f"Token {LS_TOKEN}" for r in echo_server.requests)  # it was sent
    assert "Label Studio answered HTTP 400" in err and "Authorization" in err  # the echo reached stderr...
    _no_secret(out + err, LS_TOKEN, LS_TOKEN[:16])  # ...masked
    assert ("Traceback (most recent call last)" in err) is debug


@pytest.mark.parametrize("debug", [False, True])
def test_github_echo_never_reaches_stderr(cli, tmp_path, echo_server, monkeypatch, debug):
    database = _cli_db(tmp_path)
    pid = add_paper(database, "P17-1099", "Get To The Point")
    with database.session() as s:
        s.add(Codebase(paper_id=pid, url="https://github.com/abisee/pointer-generator", host="github.com",
                       owner="abisee", name="pointer-generator"))
    database.dispose()
    (tmp_path / "review.toml").write_text(f'[code]\ngithub_api_url = "{echo_server.url}"\n'
                                          '[http]\nretries = 0\n')
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    code, out, err = cli(*(["--debug"] if debug else []), "code", "github")
    assert any(GH_TOKEN in r.headers.get("Authorization", "") for r in echo_server.requests)
    assert "400" in err  # the failed look-up is reported...
    _no_secret(out + err, GH_TOKEN, GH_TOKEN[4:20])  # ...without the token it echoed
    database = _cli_db(tmp_path)
    with database.session() as s:
        cb = s.scalar(select(Codebase))
        assert cb.lookup_status == "error" and GH_TOKEN not in (cb.lookup_detail or "")
    database.dispose()


@pytest.mark.parametrize("debug", [False, True])
def test_dblp_echo_never_reaches_stderr(cli, tmp_path, echo_server, debug):
    host = urlsplit(echo_server.url).netloc
    (tmp_path / "review.toml").write_text(
        f'[harvest]\ndblp_api_url = "http://{DBLP_USER}:{DBLP_PASSWORD}@{host}"\ndblp_delay = 0\n'
        '[http]\nretries = 0\nper_host_rate = 0\n')
    _cli_db(tmp_path).dispose()
    code, out, err = cli(*(["--debug"] if debug else []), "harvest", "dblp", "--venue", "iclr",
                         "--from-year", "2018", "--cutoff", "2019-01-01")
    basic = base64.b64encode(f"{DBLP_USER}:{DBLP_PASSWORD}".encode()).decode()
    assert any(r.headers.get("Authorization") == f"Basic {basic}" for r in echo_server.requests)
    assert "DBLP answered HTTP 400" in err or "http_400" in err
    _no_secret(out + err, DBLP_PASSWORD, basic)


def test_an_unexpected_exception_is_printed_through_the_redactor(cli, monkeypatch):
    """Not a ReviewError (a bug): the traceback is shown, in either mode, but redacted."""
    import review.cli as entry

    def boom(*_a, **_k):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"server said: Authorization: Token {LS_TOKEN}")

    monkeypatch.setattr(entry, "app", boom)
    for args in (("status",), ("--debug", "status")):
        code, out, err = cli(*args)
        assert code == 1 and "Traceback" in err and "RuntimeError: server said: Authorization: Token ***" in err
        _no_secret(out + err, LS_TOKEN)


# ---------------------------------------------------------------- 2. a byte cap on every answer

class EndlessServer:
    """Answers matching `endless(path)` with an endless 200 JSON body; others through `fallback`."""

    def __init__(self, endless: Callable[[str], bool], fallback: Callable[[Request], Reply] | None = None):
        self.sent = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

            def do_GET(self) -> None:
                if endless(self.path) or fallback is None:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    block = b'{"result": "' + b"x" * 65_536
                    try:
                        while outer.sent < 400_000_000:  # a client without a cap fails the test, not the box
                            self.wfile.write(block)
                            outer.sent += len(block)
                    except OSError:
                        pass
                    return
                parts = urlsplit(self.path)
                reply = fallback(Request("GET", parts.path, parse_qs(parts.query), dict(self.headers), b""))
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> EndlessServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_an_endless_dblp_answer_fails_one_toc_with_the_url_and_memory_stays_bounded(db, tmp_path):
    api = DblpApi()
    with EndlessServer(lambda path: "iclr2018" in path, api) as server:
        settings = settings_for(tmp_path, dblp_api_url=server.url)
        settings.http.max_response_bytes = CAP
        before, started = _peak_mb(), time.monotonic()
        result = harvest_dblp(db, settings, mode="api", venues=["iclr", "cvpr"], from_year=2017, cutoff="2021-01-01")
        assert time.monotonic() - started < 30
        assert server.sent < 50 * CAP
    assert _peak_mb() - before < 150
    failure = next(f for f in result.failures if "iclr2018" in f)
    assert "too_large" in failure and f"larger than {CAP} bytes" in failure
    assert result.added > 0  # the other TOCs are kept


def test_an_endless_github_answer_is_refused_with_its_url(db, tmp_path):
    with EndlessServer(lambda path: True) as server:
        client = GitHubClient(server.url, GH_TOKEN, retries=0, max_bytes=CAP)
        before = _peak_mb()
        with pytest.raises(ResponseTooLarge) as exc:
            client.lookup("abisee", "pointer-generator")
        assert server.sent < 50 * CAP
        assert "/repos/abisee/pointer-generator" in exc.value.item and exc.value.reason == "too_large"
        assert _peak_mb() - before < 150
        # through the command: the service probe meets the endless answer first
        pid = add_paper(db, "P17-1099", "Get To The Point")
        with db.session() as s:
            s.add(Codebase(paper_id=pid, url="https://github.com/o/r", host="github.com", owner="o", name="r"))
        settings = Settings(data_dir=tmp_path, code={"github_api_url": server.url})
        settings.http.max_response_bytes = CAP
        settings.http.retries = 0
        with pytest.raises(ResponseTooLarge):  # the probe itself is endless here: a clear error, exit 6
            run_github(db, settings)


def test_an_endless_label_studio_answer_is_a_service_error(tmp_path):
    with EndlessServer(lambda path: True) as server:
        client = LabelStudioClient(server.url, LS_TOKEN, http=HttpSettings(max_response_bytes=CAP))
        before = _peak_mb()
        with pytest.raises(ServiceError, match="too large") as exc:
            client.whoami()
        assert server.sent < 50 * CAP
        assert "/api/current-user/whoami" in (exc.value.item or "") and exc.value.exit_code == 7
        assert _peak_mb() - before < 150


def test_a_gzip_bomb_counts_its_inflated_size(tmp_path):
    bomb = gzip.compress(b"[" + b"0," * 5_000_000 + b"0]")  # 10 MB inflated, a few KB sent
    with LocalServer() as server:
        server.route("/api/current-user/whoami",
                     Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"}))
        server.route("/x", Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"}))
        client = LabelStudioClient(server.url, LS_TOKEN, http=HttpSettings(max_response_bytes=CAP))
        with pytest.raises(ServiceError, match="too large"):
            client.whoami()
        with HttpClient(HttpSettings(max_response_bytes=CAP, retries=0, per_host_rate=0)) as http:
            with pytest.raises(ResponseTooLarge):
                http.get(server.url + "/x")


def test_a_declared_length_over_the_cap_is_refused_before_reading(local_server):
    local_server.route("/big", Reply(200, b"x" * (CAP + 1)))
    with HttpClient(HttpSettings(max_response_bytes=CAP, retries=0, per_host_rate=0)) as http:
        with pytest.raises(ResponseTooLarge, match=rf"Content-Length {CAP + 1}"):
            http.get(local_server.url + "/big")


# ---------------------------------------------------------------- 3. deep JSON

def test_load_json_refuses_deep_nesting_without_recursion():
    with pytest.raises(ValueError, match="nested deeper than 100"):
        load_json(DEEP, max_depth=100)
    with pytest.raises(ValueError, match="nested deeper than 3"):
        load_json('{"a": [[{"b": 1}]]}', max_depth=3)
    assert load_json('{"a": [[1]]}', max_depth=3) == {"a": [[1]]}


def test_deep_json_from_one_dblp_toc_costs_that_venue_only(db, tmp_path, local_server):
    api = DblpApi()
    api.install(local_server)
    settings = settings_for(tmp_path, dblp_api_url=local_server.url)
    baseline = harvest_dblp(db, settings, mode="api", venues=["cvpr"], from_year=2017, cutoff="2021-01-01")
    api.faults["iclr2018"] = [Reply(200, DEEP, {"Content-Type": "application/json"})]
    result = harvest_dblp(db, settings, mode="api", venues=["iclr", "cvpr"], from_year=2017, cutoff="2021-01-01")
    failure = next(f for f in result.failures if "iclr2018" in f)
    assert "bad_response" in failure and "nested deeper" in failure
    assert result.failed == 1
    assert result.unchanged == baseline.added and result.added > 0  # cvpr kept, the other iclr TOCs too


def test_a_deep_label_studio_export_is_a_clear_error(tmp_path, cli):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _cli_db(tmp_path).dispose()
    code, out, err = cli("pull", "--from-file", str(deep))
    assert code == 8, err
    assert "nested deeper than" in err and "RecursionError" not in err
    with LocalServer() as server:
        server.route("/api/projects/1/export", Reply(200, "[" * 100_000, {"Content-Type": "application/json"}))
        server.route("/api/current-user/whoami", Reply(200, DEEP, {"Content-Type": "application/json"}))
        client = LabelStudioClient(server.url, LS_TOKEN)
        with pytest.raises(ServiceError, match="not usable JSON"):
            client.export(1)
        with pytest.raises(ServiceError, match="nested too deeply"):
            client.whoami()


# ---------------------------------------------------------------- 4. shapes at the boundary

def test_malformed_parts_of_an_export_are_named_and_skipped(db, tmp_path, caplog):
    caplog.set_level(logging.ERROR, logger="review")
    settings = Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")
    ids = seed_papers(db, 6)

    def task(n: int, annotations: object, data: object = None) -> dict:
        return {"id": 100 + n, "data": data if data is not None else {"ref": f"paper:{ids[n]}",
                                                                       "ident": f"2020.test-{n}"},
                "annotations": annotations}

    def ann(i: int, result: object) -> dict:
        return {"id": i, "completed_by": 1, "result": result, "updated_at": "2026-11-20T10:00:00Z"}

    good = [choices("P0", "yes")]
    export = [
        task(0, [ann(1, good)]),
        task(1, "yes"),  # annotations as a word
        task(2, [ann(3, {"from_name": "P0", "value": {"choices": ["yes"]}})]),  # result as an object
        task(3, [ann(4, [7, choices("P0", "no")])]),  # a bare number among the result items
        task(4, [ann(5, good)], data="just a string"),
        task(5, [ann(6, good)]),
        42,  # not even a task
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    result = import_annotations(db, settings, path)
    assert result.malformed == 5
    errors = "\n".join(r.getMessage() for r in caplog.records)
    for named in ("task 101", "task 102 annotation 3", "task 103 annotation 4 result item 1", "task 104",
                  "export.json #7"):
        assert named in errors, named
    with db.session() as s:
        rows = s.scalars(select(HumanDecision).where(HumanDecision.question == "P0")).all()
        by_paper = {r.paper_id: r.answer for r in rows}
    # the good tasks count, and the good result item next to the bare number too
    assert by_paper == {ids[0]: "yes", ids[3]: "no", ids[5]: "yes"}
    # a later export where a good task turned bad: its stored decisions are not taken for deleted
    export[0] = task(0, "yes")
    path.write_text(json.dumps(export))
    again = import_annotations(db, settings, path)
    assert again.deleted == 0
    with db.session() as s:
        assert not any(r.deleted for r in s.scalars(select(HumanDecision)))
        assert s.scalar(select(Paper).where(Paper.id == ids[0])) is not None


# ---------------------------------------------------------------- 5. unreadable input files

def _dump_with(tmp_path: Path, records: int) -> bytes:
    """The fixture dump with `records` extra NeurIPS 2019 papers in front of its own."""
    raw = (DBLP_DATA / "dblp.xml").read_bytes()
    extra = b"".join(
        b'<inproceedings key="conf/nips/Extra%05d" mdate="2020-01-01"><author>A. Author</author>'
        b"<title>Extra paper number %05d about summarization.</title><pages>1-9</pages><year>2019</year>"
        b"<booktitle>NeurIPS</booktitle><ee>https://example.org/%05d.pdf</ee>"
        b"<crossref>conf/nips/2019</crossref><url>db/conf/nips/nips2019.html#Extra%05d</url></inproceedings>\n"
        % (i, i, i, i) for i in range(records))
    start = raw.index(b"<dblp>") + len(b"<dblp>")
    shutil.copy(DBLP_DATA / "dblp.dtd", tmp_path / "dblp.dtd")
    return raw[:start] + b"\n" + extra + raw[start:]


def _kept(database: Database) -> int:
    with database.session() as s:
        return len(s.scalars(select(Paper.id)).all())


def test_a_truncated_dblp_dump_exits_8_with_the_reason_and_keeps_what_was_read(cli, tmp_path):
    data = _dump_with(tmp_path, 3000)
    packed = gzip.compress(data)
    cut = tmp_path / "dblp.xml.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    _cli_db(tmp_path).dispose()
    code, out, err = cli("harvest", "dblp", "--mode", "dump", "--dump", str(cut), "--venue", "neurips",
                         "--from-year", "2017", "--cutoff", "2021-01-01")
    assert code == 8, err
    assert "Compressed file ended" in err and "Aborted" not in err
    database = _cli_db(tmp_path)
    kept = _kept(database)
    assert 0 < kept < 3000  # the records before the cut, not the ones after
    database.dispose()


def test_a_bad_element_in_the_dump_keeps_the_records_before_it(db, tmp_path):
    data = _dump_with(tmp_path, 2000)
    at = data.index(b'<inproceedings key="conf/nips/Extra01500"')
    bad = tmp_path / "dblp.xml"
    bad.write_bytes(data[:at] + b"<inproceedings key='conf/nips/Broken'><title>x</titl>" + data[at:])
    with pytest.raises(InputFileError, match="unreadable DBLP XML") as exc:
        harvest_dblp(db, settings_for(tmp_path), mode="dump", dump=bad, from_year=2017, cutoff="2021-01-01")
    assert exc.value.exit_code == 8
    kept = _kept(db)
    assert 1400 <= kept < 1501  # within one 64 KB block of the fault, and nothing after it


def test_a_truncated_jsonl_gz_exits_8_with_the_reason_and_keeps_the_rows_before(cli, tmp_path):
    database = _cli_db(tmp_path)
    for n in range(400):
        add_paper(database, f"2020.test-{n}", f"Paper {n}")
    database.dispose()
    lines = "".join(json.dumps({"ident": f"2020.test-{n}", "text": f"We report ROUGE-{n % 3 + 1}. " * 200}) + "\n"
                    for n in range(400))
    packed = gzip.compress(lines.encode())
    cut = tmp_path / "texts.jsonl.gz"
    cut.write_bytes(packed[: len(packed) * 3 // 4])
    code, out, err = cli("import", "texts", str(cut))
    assert code == 8, err
    assert "Compressed file ended" in err and "Aborted" not in err
    database = _cli_db(tmp_path)
    with database.session() as s:
        from review.db.models import PaperText

        texts = len(s.scalars(select(PaperText.id)).all())
    database.dispose()
    assert 0 < texts < 400


def test_a_task_page_from_the_server_leaves_out_only_the_malformed_parts(local_server):
    """The same checks on the server path: the SDK's task listing plus the export of those tasks."""
    good = [choices("P0", "yes")]
    listing = {"tasks": [{"id": 1, "data": {"ref": "paper:1"}}, {"id": 2, "data": "just a string"},
                         {"id": 3, "data": {"ref": "paper:3"}}], "total": 3, "total_annotations": 0,
               "total_predictions": 0}
    export = [{"id": 1, "data": {"ref": "paper:1"}, "annotations": [{"id": 11, "result": good}]},
              {"id": 3, "data": {"ref": "paper:3"}, "annotations": [{"id": 31, "result": [5, *good]},
                                                                   {"id": 32, "result": {"a": 1}}]}]
    as_json = {"Content-Type": "application/json"}
    local_server.route("/api/projects/1/", Reply(200, json.dumps({"id": 1, "title": "t"}), as_json))
    local_server.route("/api/tasks/", Reply(200, json.dumps(listing), as_json))
    local_server.route("/api/projects/1/export", Reply(200, json.dumps(export), as_json))
    client = LabelStudioClient(local_server.url, LS_TOKEN)
    from review.labelstudio.shapes import Checked

    checked = Checked()
    tasks, more = client.tasks_page(1, 1, 100, checked=checked)
    assert [t.id for t in tasks] == [1, 3] and not more
    assert tasks[0].annotations[0]["result"] == good
    assert [a["id"] for a in tasks[1].annotations] == [31]  # 32 (result an object) left out, its rows kept
    assert tasks[1].annotations[0]["result"] == good  # the bare number dropped, the answer next to it kept
    assert len(checked.problems) == 3 and not checked.complete
    assert checked.partial == {"31"} and checked.unread == {"32"}


def test_a_download_over_the_answer_cap_is_a_too_large_failure(tmp_path):
    """http.max_response_bytes below download.max_bytes: the PDF fails as too_large, the worker lives."""
    from review.download.fetch import fetch_pdf
    from review.download.store import PdfStore

    with EndlessServer(lambda path: True) as server:
        with HttpClient(HttpSettings(max_response_bytes=CAP, retries=0, per_host_rate=0)) as http:
            result = fetch_pdf(http, PdfStore(tmp_path / "pdfs"), server.url + "/x.pdf", max_bytes=10 * CAP)
    assert (result.outcome, result.reason) == ("failed", "too_large")
    assert f"larger than {CAP} bytes" in (result.detail or "")
