"""Secrets never stored, logged or exported: the one redactor, its hooks, and servers that echo.

The end-to-end test plants a GitHub token, a Label Studio key and a URL password, points
`review code github`, `review queue`/`review pull` and `review download` at local servers
that echo the Authorization header (and the credentials) in their error bodies, exports,
and then searches every column of every row of every table, every log record, everything
printed and every export file for the planted values.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from pathlib import Path

import pytest
from sqlalchemy import insert, select, text

from review.db import migrate
from review.db.models import Base, Codebase, Paper, Run
from review.db.session import Database
from review.localserver import LocalServer, Reply, Request
from review.log import get_logger
from review.redact import MASK, Redactor, RedactingWriter, redact, redact_value
from review.settings import Settings

# Split so that secret scanners do not flag a test file; none of these is a real credential.
GH_TOKEN = "ghp_" + "Pl4ntedT0kenThatMustNeverLeak98765"
LS_KEY = "5e1f" + "0c0ffee0123456789abcdef0123456789abcd"  # a legacy 40-hex Label Studio token
URL_USER, URL_PASSWORD = "mirror-user", "Hunter2" + "-planted-pw-77"
QUERY_TOKEN = "qT0ken" + "PlantedInAQueryString"


# ----------------------------------------------------------------------------- the redactor

@pytest.mark.parametrize("raw, kept", [
    (f'{{"message": "Bad credentials: token {GH_TOKEN}"}}', '{"message": "Bad credentials: token ***"}'),
    (f"http://{URL_USER}:{URL_PASSWORD}@mirror.example.org/x.pdf", "http://***@mirror.example.org/x.pdf"),
    (f"https://h.example.org/p.pdf?id=3&access_token={QUERY_TOKEN}&v=1", "https://h.example.org/p.pdf?id=3&access_token=***&v=1"),
    ("Authorization: Basic bWlycm9yLXVzZXI6SHVudGVyMg==", "Authorization: Basic ***"),
    ('{"authorization": "Bearer abc.def-GHI_jkl"}', '{"authorization": "Bearer ***"}'),
    ("Token 0123456789abcdef0123 refused", "Token *** refused"),
    ("refresh eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoicmVmcmVzaCJ9.c2lnbmF0dXJlLXBhcnQ", "refresh ***"),
    ("github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "***"),
])
def test_secret_shapes_are_masked(raw: str, kept: str) -> None:
    assert Redactor().text(raw) == kept


@pytest.mark.parametrize("prose", [
    "We feed token embeddings to the encoder; Token representations are pooled.",
    "ssh://git@github.com/abisee/pointer-generator and mail authors@example.org",
    "ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m with stemming; see https://github.com/x/y?tab=readme",
    "commit 0f3e9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b, sha256 " + "ab" * 32,
    "Basic settings: the broken tokenizer spoken aloud, token t5-small-v1.1 and Token IDs 50256",
])
def test_ordinary_text_is_left_alone(prose: str) -> None:
    assert Redactor([GH_TOKEN]).text(prose) == prose


def test_known_secrets_from_the_variables_the_settings_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LAB_KEY", "plain-words-key-without-shape")
    Settings(label_studio={"api_key_env": "MY_LAB_KEY"})  # naming the variable registers it
    assert redact("the server said: plain-words-key-without-shape is wrong") == "the server said: *** is wrong"
    # a detail cut to its column's width keeps no prefix of the secret either
    assert redact("invalid key plain-words-key-wi") == "invalid key ***"
    assert redact("plain-words-key-w1th a different ending") == "plain-words-key-w1th a different ending"


def test_json_values_are_redacted_without_copying_clean_ones() -> None:
    clean = {"a": [1, "x", {"b": "y"}]}
    assert redact_value(clean) is clean
    dirty = {"error": [f"token {GH_TOKEN}"], "n": 3}
    assert redact_value(dirty) == {"error": ["token ***"], "n": 3}


def test_redacting_writer_masks_each_write(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    with path.open("w") as fh:
        RedactingWriter(fh).write(f"a,{GH_TOKEN}\n")
    assert path.read_text() == "a,***\n"


# --------------------------------------------------------------------------- the hooks

def test_every_write_path_to_the_database_is_redacted(db: Database) -> None:
    """ORM objects, JSON columns, Core inserts and raw SQL all pass the engine's hook."""
    with db.session() as s:
        paper = Paper(ident="P1", source="acl", title=f"leak {GH_TOKEN}",
                      pdf_url=f"http://{URL_USER}:{URL_PASSWORD}@h.example.org/p.pdf")
        s.add(paper)
        s.flush()
        s.add(Codebase(paper_id=paper.id, url="https://github.com/a/b", host="github.com", owner="a", name="b",
                       lookup_detail=f"GithubException: 401 {{'message': 'Bad credentials {GH_TOKEN}'}}"))
        s.add(Run(command="x", arguments={"headers": {"Authorization": f"token {GH_TOKEN}"}}, tool_version="t",
                  host="h", pid=1, status="ok"))
        pid = paper.id
    with db.session() as s:
        s.execute(insert(Codebase), [{"paper_id": pid, "url": "https://github.com/c/d", "host": "github.com",
                                      "owner": "c", "name": "d", "lookup_detail": f"core insert {GH_TOKEN}"}])
        s.execute(text("UPDATE papers SET status_note = :a WHERE id = :i"), {"a": f"raw sql {GH_TOKEN}", "i": pid})
    dump = _dump_database(db)
    assert GH_TOKEN not in dump and URL_PASSWORD not in dump
    assert dump.count(MASK) >= 6, "every write path went through the hook"
    with db.session() as s:
        assert s.scalar(select(Paper.pdf_url)) == "http://***@h.example.org/p.pdf"


def test_every_log_record_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    get_logger("test").error("GitHub said %s", {"message": f"Bad credentials: token {GH_TOKEN}"})
    logging.getLogger("urllib3.test").warning("GET http://%s:%s@h/x", URL_USER, URL_PASSWORD)
    try:
        raise RuntimeError(f"boom with {GH_TOKEN}")
    except RuntimeError:
        get_logger("test").exception("failed")
    text_ = caplog.text + "".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert GH_TOKEN not in text_ and URL_PASSWORD not in text_
    assert "Bad credentials: token ***" in text_ and "boom with ***" in text_


# ---------------------------------------------------------------- servers that echo secrets

@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LS_KEY)


@pytest.fixture
def records() -> list[logging.LogRecord]:
    """Every log record the process makes while the test runs, as handlers would get it."""
    made: list[logging.LogRecord] = []
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs):  # type: ignore[no-untyped-def]
        record = previous(*args, **kwargs)
        made.append(record)
        return record

    logging.setLogRecordFactory(factory)
    yield made
    logging.setLogRecordFactory(previous)


def _echo_github(gh_server: LocalServer) -> None:
    """A GitHub-API-shaped server whose errors quote the Authorization header back."""
    from github_fake import FakeGitHub

    fake = FakeGitHub(gh_server)
    fake.add_repo("good/repo", files={"eval.py": "import rouge"})

    def forbidden(req: Request) -> Reply:
        return fake._json("core", 403, {"message": f"Bad credentials: {req.headers.get('Authorization')}",
                                        "documentation_url": "https://docs.github.com/rest"})

    def missing(req: Request) -> Reply:
        return fake._json("core", 410, {"message": f"Repository gone for {req.headers.get('Authorization')}",
                                        "status": "410"})

    gh_server.route("/repos/echo/forbidden", forbidden)
    gh_server.route("/repos/echo/missing", missing)


def _echo_label_studio(ls_server: LocalServer) -> None:
    """Label Studio-shaped 400s that quote the key and the header (as a misconfigured proxy might)."""
    def refuse(req: Request) -> Reply:
        auth = req.headers.get("Authorization", "")
        body = {"status_code": 400, "detail": f"invalid key {auth.split()[-1] if auth else ''}",
                "validation_errors": {"Authorization": [auth]}}
        return Reply(400, json.dumps(body), {"Content-Type": "application/json"})

    ls_server.route("/", refuse, prefix=True)
    ls_server.route("/", refuse, "POST", prefix=True)


def _echo_pdf_hosts(publisher: LocalServer, mirror: LocalServer) -> str:
    """The publisher redirects to a mirror URL with user:password@ and a token; the mirror echoes them."""
    def echo_html(req: Request) -> Reply:
        auth = req.headers.get("Authorization", "")
        return Reply(200, f"Authorization: {auth} is not allowed here ({req.path})", {"Content-Type": "text/html"})

    mirror.route("/p.pdf", echo_html)
    host = mirror.url.split("://", 1)[1]
    publisher.route("/a.pdf", Reply(302, b"", {
        "Location": f"http://{URL_USER}:{URL_PASSWORD}@{host}/p.pdf?access_token={QUERY_TOKEN}"}))
    publisher.route("/b.pdf", Reply(302, b"", {"Location": f"http://{URL_USER}:{URL_PASSWORD}@{host}/gone.pdf"}))
    return publisher.url


def _dump_database(db: Database) -> str:
    """Every value of every column of every row of every table, as text."""
    parts: list[str] = []
    with db.engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            for row in conn.execute(select(table)):
                parts.extend(json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v) for v in row)
    return "\n".join(parts)


def _forms(*secrets: str) -> list[str]:
    """Each secret plus the forms it travels in (Basic auth's base64)."""
    basic = base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode()
    return [*secrets, basic, basic[:16]]


def _assert_nowhere(where: str, text_: str) -> None:
    squeezed = re.sub(r"\s+", "", text_)  # a wrapped console line must not hide a secret
    for secret in _forms(GH_TOKEN, LS_KEY, URL_PASSWORD, QUERY_TOKEN):
        assert secret not in text_ and secret not in squeezed, f"{secret[:6]}... leaked into {where}"


def test_servers_that_echo_secrets_leak_them_nowhere(cli, tmp_path: Path, planted, records, monkeypatch) -> None:
    from code_support import add_paper

    db_url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(db_url)
    migrate.upgrade(db)
    printed: list[str] = []
    with LocalServer() as gh, LocalServer() as ls, LocalServer() as publisher, LocalServer() as mirror:
        _echo_github(gh)
        _echo_label_studio(ls)
        base = _echo_pdf_hosts(publisher, mirror)
        pid = add_paper(db, "P19-1001", "Echoes")
        with db.session() as s:
            for owner, name in [("good", "repo"), ("echo", "forbidden"), ("echo", "missing")]:
                s.add(Codebase(paper_id=pid, url=f"https://github.com/{owner}/{name}", host="github.com",
                               owner=owner, name=name))
            s.add(Paper(ident="A", source="acl", title="A", pdf_url=base + "/a.pdf", year=2020))
            s.add(Paper(ident="B", source="acl", title="B", pdf_url=base + "/b.pdf", year=2020))
        db.dispose()
        monkeypatch.setenv("REVIEW_CODE__GITHUB_API_URL", gh.url)
        monkeypatch.setenv("REVIEW_HTTP__PER_HOST_RATE", "0")
        monkeypatch.setenv("REVIEW_HTTP__RETRIES", "0")
        monkeypatch.setenv("LABEL_STUDIO_URL", ls.url)
        for args in (("code", "github"), ("queue", "code"), ("pull",), ("download",), ("status", "--json"),
                     ("export", "--out", str(tmp_path / "exports"), "--format", "jsonl"),
                     ("export", "--out", str(tmp_path / "exports-csv"))):
            code, out, err = cli("-v", "--db", db_url, *args)
            printed.append(f"$ review {' '.join(args)} -> {code}\n{out}\n{err}")
        # the servers really did receive (and echo) every secret
        assert any(r.headers.get("Authorization") == f"token {GH_TOKEN}" for r in gh.requests)
        assert any(LS_KEY in r.headers.get("Authorization", "") for r in ls.requests)
        assert any(r.headers.get("Authorization", "").startswith("Basic ") for r in mirror.requests)

    db = Database(db_url)
    dump = _dump_database(db)
    with db.session() as s:
        details = dict(s.execute(select(Codebase.name, Codebase.lookup_detail)).all())
        errors = dict(s.execute(select(Run.command, Run.error)).all())
    db.dispose()
    assert "Bad credentials" in details["forbidden"] and MASK in details["forbidden"]
    assert MASK in details["missing"]
    assert "HTTP 400" in errors["queue code"] and MASK in errors["queue code"] and MASK in errors["pull"]
    assert "starts with" in dump and "Basic ***" in dump, "the mirror's echo was stored, masked"
    _assert_nowhere("the database", dump)
    _assert_nowhere("the log records", "\n".join(r.getMessage() + (r.exc_text or "") for r in records))
    _assert_nowhere("what the commands printed", "\n".join(printed))
    exported = [p for p in tmp_path.glob("exports*/**/*") if p.is_file()]
    assert len(exported) >= 8
    for path in exported:
        _assert_nowhere(str(path), path.read_bytes().decode("utf-8", errors="replace"))
