"""The shared HTTP layer against local servers: retries, Retry-After, per-host limits, secrets."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate

import pytest

from review import __version__
from review.errors import FetchError
from review.http import HttpClient, host_key, parse_retry_after, redact_url, user_agent
from review.localserver import LocalServer, Reply
from review.settings import HttpSettings


def fast(**kw) -> HttpSettings:
    base = dict(timeout=2.0, retries=2, backoff=0.02, max_backoff=3.0, per_host_concurrency=2, per_host_rate=0)
    base.update(kw)
    return HttpSettings(**base)


class Probe:
    """A handler that measures how many requests the server is answering at once."""

    def __init__(self, hold: float):
        self.hold, self.now, self.peak, self.lock = hold, 0, 0, threading.Lock()

    def __call__(self, req):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.hold)
        with self.lock:
            self.now -= 1
        return Reply(200, b"ok")


def test_user_agent_names_tool_version_and_contact(local_server):
    local_server.route("/", Reply(200, b"hi"))
    with HttpClient(fast(user_agent="mailto:someone@example.org")) as client:
        assert client.get(local_server.url + "/").text == "hi"
    ua = local_server.requests[0].headers["User-Agent"]
    assert ua == user_agent("mailto:someone@example.org")
    assert ua.startswith(f"review/{__version__} ") and "mailto:someone@example.org" in ua


def test_retry_after_seconds_and_http_date():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(formatdate(time.time() + 30, usegmt=True)) == pytest.approx(30, abs=1.5)
    assert parse_retry_after(formatdate(time.time() - 30, usegmt=True)) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_429_retry_after_pauses_the_whole_host(local_server):
    starts: dict[str, list[float]] = {"a": [], "b": []}
    calls = itertools.count()

    def limited(req):
        starts["a"].append(time.monotonic())
        return Reply(429, b"", {"Retry-After": "1"}) if next(calls) == 0 else Reply(200, b"a")

    def other(req):
        starts["b"].append(time.monotonic())
        return Reply(200, b"b")

    local_server.route("/a", limited)
    local_server.route("/b", other)
    with HttpClient(fast()) as client:
        t0 = time.monotonic()
        assert client.get(local_server.url + "/a").text == "a"
        assert client.get(local_server.url + "/b").text == "b"
    assert starts["a"][1] - starts["a"][0] >= 0.95
    assert starts["b"][0] - t0 >= 0.95


def test_retry_after_is_capped_by_max_backoff(local_server):
    calls = itertools.count()
    local_server.route("/x", lambda req: Reply(503, b"", {"Retry-After": "3600"}) if next(calls) == 0 else Reply(200, b"x"))
    with HttpClient(fast(max_backoff=0.2)) as client:
        t0 = time.monotonic()
        assert client.get(local_server.url + "/x").status_code == 200
        assert time.monotonic() - t0 < 2


def test_gives_up_with_a_reason_and_no_secrets(local_server, caplog):
    local_server.route("/down", Reply(503, b"maintenance"))
    host = local_server.url.removeprefix("http://")
    url = f"http://alice:s3cret@{host}/down?token=abc123&page=2"
    caplog.set_level(logging.DEBUG, logger="review")
    with HttpClient(fast()) as client, pytest.raises(FetchError) as info:
        client.get(url, headers={"Authorization": "Bearer abc123"})
    err = info.value
    assert err.reason == "gave_up_after_retries" and err.exit_code == 6
    assert "http_503" in err.message and "3 attempts" in err.message
    assert len(local_server.requests) == 3
    text = str(err) + caplog.text
    assert "s3cret" not in text and "abc123" not in text and "alice" not in text
    assert err.item == f"http://{host}/down?token=%2A%2A%2A&page=2"


def test_timeouts_and_refused_connections_have_their_own_reasons(local_server):
    local_server.route("/slow", Reply(200, b"late", delay=1.0))
    with HttpClient(fast(timeout=0.2, retries=1)) as client:
        with pytest.raises(FetchError) as info:
            client.get(local_server.url + "/slow")
        assert info.value.reason == "timeout"
        with LocalServer() as gone:
            dead = gone.url
        with pytest.raises(FetchError) as info:
            client.get(dead + "/x")
        assert info.value.reason == "connection_error"
        with pytest.raises(FetchError) as info:
            client.get("ftp://example.org/x")
        assert info.value.reason == "bad_url"


def test_client_errors_are_returned_not_retried(local_server):
    local_server.route("/secret", Reply(403, b"no"))
    with HttpClient(fast()) as client:
        assert client.get(local_server.url + "/missing").status_code == 404
        assert client.get(local_server.url + "/secret").status_code == 403
    assert len(local_server.requests) == 2


def test_cross_host_redirect_drops_credentials(local_server):
    with LocalServer() as other:
        other.route("/final", Reply(200, b"there"))
        local_server.route("/start", Reply(302, b"", {"Location": other.url + "/final"}))
        local_server.route("/same", Reply(301, b"", {"Location": "/start"}))
        with HttpClient(fast()) as client:
            resp = client.get(local_server.url + "/same", headers={"Authorization": "Bearer t0k"})
        assert resp.text == "there" and resp.url == other.url + "/final"
        assert [r.status_code for r in resp.history] == [301, 302]
        assert local_server.requests[1].headers.get("Authorization") == "Bearer t0k", "same host keeps it"
        assert "Authorization" not in other.requests[0].headers


def test_per_host_concurrency_is_exact_and_hosts_are_independent():
    probes = [Probe(0.1), Probe(0.1)]
    with LocalServer() as a, LocalServer() as b:
        a.route("/p", probes[0])
        b.route("/p", probes[1])
        urls = [a.url + "/p", b.url + "/p"] * 8
        with HttpClient(fast(per_host_concurrency=2)) as client, ThreadPoolExecutor(12) as pool:
            t0 = time.monotonic()
            assert all(r.status_code == 200 for r in pool.map(client.get, urls))
            elapsed = time.monotonic() - t0
    assert [p.peak for p in probes] == [2, 2]
    assert elapsed < 0.75, "two hosts run side by side (8 per host at 2 at a time = 0.4 s)"


def test_stream_holds_the_host_slot_until_closed(local_server):
    local_server.route("/s", Reply(200, b"x" * 10))
    with HttpClient(fast(per_host_concurrency=1)) as client:
        first = client.get(local_server.url + "/s", stream=True)
        got = []
        t = threading.Thread(target=lambda: got.append(client.get(local_server.url + "/s").status_code))
        t.start()
        time.sleep(0.3)
        assert got == [], "second request waits for the streamed one"
        first.close()
        t.join(2)
        assert got == [200]


def test_per_host_rate_spaces_request_starts(local_server):
    times = []
    local_server.route("/r", lambda req: (times.append(time.monotonic()), Reply(200, b""))[1])
    with HttpClient(fast(per_host_rate=10, per_host_concurrency=4)) as client, ThreadPoolExecutor(4) as pool:
        list(pool.map(client.get, [local_server.url + "/r"] * 6))
    gaps = [b - a for a, b in zip(sorted(times), sorted(times)[1:])]
    assert min(gaps) >= 0.08 and len(times) == 6


def test_helpers():
    assert host_key("https://Example.org/x") == "example.org:443"
    assert host_key("http://127.0.0.1:8080/x") == "127.0.0.1:8080"
    assert redact_url("https://u:p@h.org/a?key=1&q=2") == "https://h.org/a?key=%2A%2A%2A&q=2"


def test_redirect_loop_gives_up(local_server):
    local_server.route("/loop", Reply(302, b"", {"Location": "/loop"}))
    with HttpClient(fast()) as client, pytest.raises(FetchError) as info:
        client.get(local_server.url + "/loop")
    assert info.value.reason == "too_many_redirects" and len(local_server.requests) == 11
