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


def test_address_kinds():
    from review.http import address_kind

    internal = ["127.0.0.1", "::1", "[::ffff:127.0.0.1]", "10.2.3.4", "172.16.0.9", "192.168.1.1", "169.254.169.254",
                "fe80::1", "fd00::1", "100.64.0.1", "0.0.0.0", "localhost", "db.localhost", "2130706433"]
    assert [h for h in internal if address_kind(h) != "internal"] == []
    assert address_kind("93.184.216.34") == "public" and address_kind("2606:4700::1111") == "public"
    names = {"intranet.example.org": ["10.0.0.5"], "cdn.example.org": ["93.184.216.34", "10.0.0.6"]}
    assert address_kind("intranet.example.org", lambda h: names.get(h, [])) == "internal"
    assert address_kind("cdn.example.org", lambda h: names.get(h, [])) == "internal", "any internal address counts"
    assert address_kind("unresolvable.invalid") == "public", "a name we cannot resolve is not trusted as inside"


def _through(proxy: LocalServer, names: dict[str, list[str]], **settings) -> HttpClient:
    """A client whose public-looking hosts are served by the loopback `proxy` (names resolve as given)."""
    client = HttpClient(fast(**settings), resolve=lambda h: names.get(h, []))
    client.session.trust_env = False
    client.session.proxies = {f"http://{h}": proxy.url for h in names}
    return client


def test_redirect_from_a_public_host_into_an_internal_one_is_refused_before_it_is_asked():
    names = {"publisher.example.org": ["93.184.216.34"], "intranet.example.org": ["10.0.0.5"]}
    with LocalServer() as proxy, LocalServer() as internal:
        internal.route("/admin", Reply(200, b"internal answer"))
        proxy.route("/to-loopback", Reply(302, b"", {"Location": internal.url + "/admin"}))
        proxy.route("/to-private-name", Reply(301, b"", {"Location": "http://intranet.example.org/admin"}))
        proxy.route("/to-metadata", Reply(307, b"", {"Location": "http://169.254.169.254/latest/meta-data/"}))
        with _through(proxy, names) as client:
            for path in ("/to-loopback", "/to-private-name", "/to-metadata"):
                with pytest.raises(FetchError) as info:
                    client.get("http://publisher.example.org" + path)
                assert info.value.reason == "internal_redirect", path
                assert "internal answer" not in str(info.value) and info.value.hint
        assert internal.requests == [] and [r.path for r in proxy.requests] == ["/to-loopback", "/to-private-name",
                                                                                 "/to-metadata"]


def test_internal_redirects_that_stay_allowed():
    names = {"publisher.example.org": ["93.184.216.34"]}
    with LocalServer() as proxy, LocalServer() as internal, LocalServer() as other:
        internal.route("/final", Reply(200, b"mirror"))
        proxy.route("/p", Reply(302, b"", {"Location": internal.url + "/final"}))
        other.route("/hop", Reply(302, b"", {"Location": internal.url + "/final"}))
        with _through(proxy, names, allow_internal_redirects=True) as client:
            assert client.get("http://publisher.example.org/p").text == "mirror", "the setting lifts the guard"
        with HttpClient(fast()) as client:
            assert client.get(other.url + "/hop").text == "mirror", "loopback to loopback: a local mirror or test"
            assert client.get(internal.url + "/final").text == "mirror", "a loopback URL given directly"
