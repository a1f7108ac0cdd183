"""`review code github` against a local server speaking GitHub's REST formats (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import select, text

from code_support import add_paper
from github_fake import FakeGitHub
from review.codebases.github import GitHubClient, run_github
from review.db.models import Base, Codebase, Run, WorkItem
from review.settings import Settings

TOKEN = "ghp_" + "S3cretT0kenThatMustNeverLeak0123456789"  # split: a fake token, kept unflaggable by secret scanners


class FakeTime:
    """Sleeps recorded instead of slept; the clock follows real time plus the time 'slept'."""

    def __init__(self) -> None:
        import time

        self._real = time.time
        self.offset = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self._real() + self.offset

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.offset += seconds


@pytest.fixture
def gh(local_server):  # type: ignore[no-untyped-def]
    fake = FakeGitHub(local_server)
    fake.add_repo("abisee/pointer-generator", stars=2150, license="mit", pushed_at="2019-03-01T10:00:00Z",
                  files={"run_summarization.py": "import pyrouge\nr = pyrouge.Rouge155()\n", "README.md": "ROUGE"})
    fake.add_repo("nlpyang/PreSumm", stars=1200, license=None, default_branch="master",
                  files={"src/train.py": "import torch\n"})
    fake.add_repo("maszhongming/MatchSum-v2", archived=True, license="apache-2.0",
                  files={"get_rouge.py": "from rouge import Rouge\n"})
    fake.move("maszhongming/MatchSum", "maszhongming/MatchSum-v2")
    return fake


def _settings(tmp_path, server, **code):  # type: ignore[no-untyped-def]
    return Settings(data_dir=tmp_path, code={"github_api_url": server.url, **code})


def _codebases(db):  # type: ignore[no-untyped-def]
    pid = add_paper(db, "P17-1099", "Get To The Point")
    with db.session() as s:
        for owner, name in [("abisee", "pointer-generator"), ("nlpyang", "PreSumm"),
                            ("maszhongming", "MatchSum"), ("gone", "deleted-repo")]:
            s.add(Codebase(paper_id=pid, url=f"https://github.com/{owner}/{name}".lower(), host="github.com",
                           owner=owner, name=name))
        s.add(Codebase(paper_id=pid, url="https://gitlab.com/g/p", host="gitlab.com", owner="g", name="p"))
    with db.session() as s:
        return {cb.name: cb.id for cb in s.scalars(select(Codebase))}


def _get(db, cid):  # type: ignore[no-untyped-def]
    with db.session() as s:
        return s.get(Codebase, cid)


def test_every_lookup_path_and_search(db, tmp_path, gh, local_server, monkeypatch, caplog):
    ids = _codebases(db)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    result = run_github(db, _settings(tmp_path, local_server))

    pg = _get(db, ids["pointer-generator"])
    assert (pg.lookup_status, pg.full_name, pg.stars, pg.license, pg.archived, pg.default_branch) == \
        ("exists", "abisee/pointer-generator", 2150, "MIT", False, "main")
    assert pg.pushed_at.year == 2019 and pg.code_metric_prelim is True and pg.searched_at is not None
    assert "run_summarization.py" in pg.lookup_detail
    ps = _get(db, ids["PreSumm"])
    assert ps.lookup_status == "exists" and ps.license is None and ps.code_metric_prelim is False
    moved = _get(db, ids["MatchSum"])
    assert (moved.lookup_status, moved.full_name, moved.archived, moved.code_metric_prelim) == \
        ("renamed", "maszhongming/MatchSum-v2", True, True)
    assert "moved from maszhongming/MatchSum to maszhongming/MatchSum-v2" in moved.lookup_detail
    gone = _get(db, ids["deleted-repo"])
    assert gone.lookup_status == "deleted" and gone.code_metric_prelim is None and gone.looked_up_at
    assert _get(db, ids["p"]).looked_up_at is None  # not a GitHub repository

    paths = [r.path for r in local_server.requests]
    assert "/repos/maszhongming/MatchSum" in paths and any(p.startswith("/repositories/") for p in paths)
    search_qs = [r.query["q"][0] for r in local_server.requests if r.path == "/search/code"]
    assert "rouge repo:maszhongming/MatchSum-v2" in search_qs  # searched under the new name
    assert all(r.headers.get("Authorization") == f"token {TOKEN}" for r in local_server.requests)
    assert result.counts["exists"] == 2 and result.counts["renamed"] == 1 and result.counts["deleted"] == 1
    assert result.calls["core"] == 4 and result.calls["search"] == 3 and result.calls["rate_limit"] == 1

    # the token reaches GitHub only: not the database, the run row, the logs
    with db.engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            for row in conn.execute(text(f"SELECT * FROM {table.name}")):
                assert TOKEN not in json.dumps([str(v) for v in row])
    assert TOKEN not in caplog.text
    with db.session() as s:
        run = s.get(Run, result.run_id)
        assert run.status == "ok" and run.arguments["token"] == "set" and run.counts["calls_core"] == 4

    # cached with its date: a rerun asks GitHub nothing; --refresh asks again
    before = len(local_server.requests)
    again = run_github(db, _settings(tmp_path, local_server))
    assert len(local_server.requests) == before and sum(again.counts.values()) == again.counts["rate_limit_waits"] == 0
    run_github(db, _settings(tmp_path, local_server), refresh=True)
    assert len(local_server.requests) == 2 * before  # the /rate_limit probe only runs when work is due


def test_without_token_lookups_run_and_search_is_skipped(db, tmp_path, gh, local_server, monkeypatch):
    ids = _codebases(db)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    result = run_github(db, _settings(tmp_path, local_server))
    assert result.counts["search_skipped_no_token"] == 3
    assert _get(db, ids["pointer-generator"]).code_metric_prelim is None
    assert not any(r.path == "/search/code" for r in local_server.requests)
    assert all("Authorization" not in r.headers for r in local_server.requests)


def test_token_variable_name_is_a_setting(db, tmp_path, gh, local_server, monkeypatch):
    _codebases(db)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.setenv("MY_GH_PAT", TOKEN)
    run_github(db, _settings(tmp_path, local_server, github_token_env="MY_GH_PAT"))
    assert any(r.path == "/search/code" for r in local_server.requests)


def test_primary_secondary_and_429_limits_are_waited_out(db, tmp_path, gh, local_server):
    ids = _codebases(db)
    gh.fail_next("core", gh.primary_limit("core", reset_in=120))
    gh.fail_next("search", gh.secondary_limit("search", retry_after=30))
    gh.fail_next("core", gh.secondary_limit("core", retry_after=7, status=429))
    t = FakeTime()
    client = GitHubClient(local_server.url, TOKEN, sleep=t.sleep, clock=t.clock, max_wait=600)
    result = run_github(db, _settings(tmp_path, local_server), client=client)
    big = [s for s in t.sleeps if s >= 1]
    assert 118 <= big[0] <= 123  # until X-RateLimit-Reset (+1 s)
    assert 30 in big and 7 in big  # Retry-After, secondary (403) and 429
    assert result.counts["rate_limit_waits"] == 3
    assert all(_get(db, i).looked_up_at for name, i in ids.items() if name != "p")
    assert _get(db, ids["pointer-generator"]).code_metric_prelim is True


def test_searches_are_spaced_by_the_announced_limit(db, tmp_path, local_server):
    fake = FakeGitHub(local_server, search_limit=10)  # GitHub's code search: 10 a minute
    pid = add_paper(db, "X", "X")
    with db.session() as s:
        for i in range(3):
            fake.add_repo(f"o/r{i}", files={"a.py": "rouge"})
            s.add(Codebase(paper_id=pid, url=f"https://github.com/o/r{i}", host="github.com", owner="o", name=f"r{i}"))
    t = FakeTime()
    client = GitHubClient(local_server.url, TOKEN, sleep=t.sleep, clock=t.clock)
    run_github(db, _settings(tmp_path, local_server), client=client)
    spacing = [s for s in t.sleeps if s > 1]
    assert len(spacing) == 2 and all(5.0 <= s <= 6.0 for s in spacing)


def test_a_wait_longer_than_max_wait_stops_and_resumes(db, tmp_path, gh, local_server):
    ids = _codebases(db)
    gh.fail_next("core", gh.primary_limit("core", reset_in=7200))
    t = FakeTime()
    client = GitHubClient(local_server.url, TOKEN, sleep=t.sleep, clock=t.clock, max_wait=600)
    first = run_github(db, _settings(tmp_path, local_server), client=client)
    assert first.stopped and "rerun" in first.stopped
    with db.session() as s:
        states = {w.state for w in s.scalars(select(WorkItem).where(WorkItem.stage == "github"))}
        assert states == {"pending"}  # nothing lost, nothing marked failed
        assert s.get(Run, first.run_id).counts["stopped_for_rate_limit"] == 1
    second = run_github(db, _settings(tmp_path, local_server), client=client)
    assert second.stopped is None and second.counts["exists"] + second.counts["renamed"] + second.counts["deleted"] == 4
    assert _get(db, ids["pointer-generator"]).lookup_status == "exists"


def test_server_errors_are_recorded_per_codebase(db, tmp_path, gh, local_server):
    from review.localserver import Reply

    ids = _codebases(db)
    for _ in range(3):  # the first attempt and both retries fail, for the first codebase only
        gh.fail_next("core", Reply(500, '{"message": "Server Error"}', {"Content-Type": "application/json"}))
    client = GitHubClient(local_server.url, TOKEN, sleep=lambda s: None, retries=2, backoff=0)
    result = run_github(db, _settings(tmp_path, local_server), client=client)
    assert result.counts["error"] == 1 and result.counts["exists"] == 1 and result.counts["renamed"] == 1
    errored = [cb for cb in (_get(db, i) for i in ids.values()) if cb.lookup_status == "error"]
    assert errored and "500" in errored[0].lookup_detail
    retry = run_github(db, _settings(tmp_path, local_server), client=client, retry_failed=True)
    assert retry.counts["error"] == 0


def test_cli_github_json(cli, tmp_path, gh, local_server, monkeypatch):
    db_url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    monkeypatch.setenv("REVIEW_CODE__GITHUB_API_URL", local_server.url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    code, out, err = cli("--db", db_url, "code", "github", "--json")
    assert code == 0, err
    assert json.loads(out)["counts"] == {"rate_limit_waits": 0}
    assert TOKEN not in out + err


def test_unreachable_api_or_refused_token_is_a_service_error(cli, tmp_path, gh, local_server, monkeypatch):
    from review.db import migrate
    from review.db.session import Database

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    migrate.upgrade(db)
    _codebases(db)
    db.dispose()
    monkeypatch.setenv("GITHUB_TOKEN", "bad-token")
    monkeypatch.setenv("REVIEW_CODE__GITHUB_API_URL", local_server.url)
    code, _out, err = cli("--db", url, "code", "github")
    assert code == 7 and "refused the token" in err and "bad-token" not in err
    monkeypatch.setenv("REVIEW_CODE__GITHUB_API_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("REVIEW_HTTP__RETRIES", "0")  # no backoff: keep the test fast
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    code, _out, err = cli("--db", url, "code", "github")
    assert code == 7 and "unreachable" in err


def test_a_malformed_repository_answer_is_that_codebases_error_and_the_rest_count(db, tmp_path, gh, local_server):
    """Issue 34: a GitHub answer of the wrong shape is named and left out; the others still count."""
    gh.repos["nlpyang/presumm"]["stargazers_count"] = "lots"  # text where GitHub sends a number
    gh.repos["abisee/pointer-generator"]["license"] = "MIT"  # a string where GitHub sends an object
    ids = _codebases(db)
    client = GitHubClient(local_server.url, TOKEN, sleep=lambda s: None, retries=0, backoff=0)
    result = run_github(db, _settings(tmp_path, local_server), client=client)
    assert result.counts["error"] == 2 and result.counts["renamed"] == 1 and result.counts["deleted"] == 1
    presumm, pg = _get(db, ids["PreSumm"]), _get(db, ids["pointer-generator"])
    assert presumm.lookup_status == "error" and "stargazers_count" in presumm.lookup_detail
    assert "nlpyang/PreSumm" in presumm.lookup_detail and presumm.stars is None
    assert pg.lookup_status == "error" and "license" in pg.lookup_detail
    assert _get(db, ids["MatchSum"]).lookup_status == "renamed" and _get(db, ids["MatchSum"]).stars is not None
