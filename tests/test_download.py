"""`review download` against local servers injecting the faults real hosts produce."""

from __future__ import annotations

import _thread
import itertools
import threading
import time

import pytest

from review.db.models import Run
from review.download import run_download
from review.localserver import LocalServer, Reply
from review.runs import record_run
from review.settings import DownloadSettings, HttpSettings, Settings
from tests.download_support import DripServer, add_paper, assert_consistent, crc, documents, make_pdf, queue_states


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data",
                    http=HttpSettings(timeout=2.0, retries=2, backoff=0.05, max_backoff=3.0,
                                      per_host_concurrency=2, per_host_rate=0),
                    download=DownloadSettings(workers=4, max_bytes=5_000_000))


def serve_pdf(server: LocalServer, path: str, data: bytes, **headers: str) -> str:
    server.route(path, Reply(200, data, {"Content-Type": "application/pdf", **headers}))
    return server.url + path


def test_downloads_verified_pdfs_into_the_store_and_reruns_fetch_nothing(db, settings, local_server):
    pdfs = {f"P{i}": make_pdf(i) for i in range(5)}
    for ident, data in pdfs.items():
        add_paper(db, ident, serve_pdf(local_server, f"/{ident}.pdf", data), crc32=crc(data))
    add_paper(db, "NOURL", None)
    with record_run(db, "download") as run:
        report = run_download(db, settings, run=run)
    assert report.counts == {"ok": 5} and report.failed == 0
    assert report.summary == "downloaded 5 PDFs, 0 failed"
    docs = documents(db)
    assert set(docs) == set(pdfs), "a paper without pdf_url is not queued"
    for ident, doc in docs.items():
        assert (settings.data_dir / doc.path).read_bytes() == pdfs[ident]
        assert (doc.http_status, doc.content_type, doc.attempts) == (200, "application/pdf", 1)
    assert_consistent(db, settings.data_dir)
    with db.session() as s:
        assert s.get(Run, run.id).counts == {"ok": 5}
    seen = len(local_server.requests)
    again = run_download(db, settings)
    assert again.counts == {} and len(local_server.requests) == seen, "finished files are not fetched again"
    ua = local_server.requests[0].headers["User-Agent"]
    assert ua.startswith("review/") and "rogue-review" in ua


def test_429_with_retry_after_is_honoured(db, settings, local_server):
    data, times = make_pdf(1), []
    calls = itertools.count()

    def handler(req):
        times.append(time.monotonic())
        if next(calls) == 0:
            return Reply(429, b"slow down", {"Retry-After": "1"})
        return Reply(200, data, {"Content-Type": "application/pdf"})

    local_server.route("/a.pdf", handler)
    add_paper(db, "A", local_server.url + "/a.pdf", crc32=crc(data))
    report = run_download(db, settings)
    assert report.counts == {"ok": 1}
    assert len(times) == 2 and times[1] - times[0] >= 0.95, "Retry-After: 1 waited out"
    assert_consistent(db, settings.data_dir)


def test_500_then_success(db, settings, local_server):
    data = make_pdf(2)
    calls = itertools.count()
    local_server.route("/b.pdf", lambda req: Reply(500) if next(calls) < 2 else
                       Reply(200, data, {"Content-Type": "application/pdf"}))
    add_paper(db, "B", local_server.url + "/b.pdf", crc32=crc(data))
    assert run_download(db, settings).counts == {"ok": 1}
    assert len(local_server.requests) == 3
    assert_consistent(db, settings.data_dir)


def test_slow_response_past_the_timeout_fails_as_timeout_and_keeps_going(db, settings, local_server):
    settings.http.timeout, settings.http.retries = 0.3, 1
    good = make_pdf(3)
    local_server.route("/slow.pdf", Reply(200, make_pdf(4), {"Content-Type": "application/pdf"}, delay=1.5))
    add_paper(db, "SLOW", local_server.url + "/slow.pdf")
    add_paper(db, "FAST", serve_pdf(local_server, "/fast.pdf", good))
    report = run_download(db, settings)
    assert report.counts == {"ok": 1, "failed": 1, "timeout": 1}
    docs = documents(db)
    assert (docs["SLOW"].outcome, docs["SLOW"].reason) == ("failed", "timeout")
    assert docs["FAST"].outcome == "ok"
    assert sum(r.path == "/slow.pdf" for r in local_server.requests) == 2, "one retry, then give up"
    assert_consistent(db, settings.data_dir)


def test_truncated_body_is_retried_then_recorded(db, settings, local_server):
    data = make_pdf(5, pad=5000)
    calls = itertools.count()
    local_server.route("/once.pdf", lambda req: Reply(200, data, {"Content-Type": "application/pdf"},
                                                      truncate_to=1000 if next(calls) == 0 else None))
    local_server.route("/always.pdf", Reply(200, data, {"Content-Type": "application/pdf"}, truncate_to=1000))
    add_paper(db, "ONCE", local_server.url + "/once.pdf", crc32=crc(data))
    add_paper(db, "ALWAYS", local_server.url + "/always.pdf", crc32=crc(data))
    report = run_download(db, settings)
    docs = documents(db)
    assert docs["ONCE"].outcome == "ok" and (settings.data_dir / docs["ONCE"].path).read_bytes() == data
    assert (docs["ALWAYS"].outcome, docs["ALWAYS"].reason) == ("failed", "truncated")
    assert f"{len(data)} bytes announced" in docs["ALWAYS"].detail
    assert report.counts["truncated"] == 1
    assert_consistent(db, settings.data_dir)


def test_html_served_as_pdf_is_not_a_pdf(db, settings, local_server):
    html = b"<!DOCTYPE html><html><body>Please log in</body></html>"
    local_server.route("/login.pdf", Reply(200, html, {"Content-Type": "application/pdf"}))
    add_paper(db, "H", local_server.url + "/login.pdf")
    report = run_download(db, settings)
    doc = documents(db)["H"]
    assert (doc.outcome, doc.reason, report.failed) == ("failed", "not_pdf", 1)
    assert "application/pdf" in doc.detail and "DOCTYPE" in doc.detail
    assert_consistent(db, settings.data_dir)


def test_redirect_to_another_host_is_followed_and_recorded(db, settings, local_server):
    data = make_pdf(6)
    with LocalServer() as mirror:
        target = serve_pdf(mirror, "/files/r.pdf", data)
        local_server.route("/r.pdf", Reply(302, b"", {"Location": target}))
        add_paper(db, "R", local_server.url + "/r.pdf", crc32=crc(data))
        assert run_download(db, settings).counts == {"ok": 1}
        assert len(mirror.requests) == 1
    doc = documents(db)["R"]
    assert doc.url == local_server.url + "/r.pdf" and doc.final_url == target
    assert_consistent(db, settings.data_dir)


def test_checksum_mismatch_keeps_nothing(db, settings, local_server):
    data = make_pdf(7)
    add_paper(db, "C", serve_pdf(local_server, "/c.pdf", data), crc32="deadbeef")
    report = run_download(db, settings)
    doc = documents(db)["C"]
    assert (doc.outcome, doc.reason) == ("failed", "checksum_mismatch")
    assert crc(data) in doc.detail and "deadbeef" in doc.detail
    assert report.counts["checksum_mismatch"] == 1
    assert_consistent(db, settings.data_dir)


def test_404_and_persistent_503_and_too_large(db, settings, local_server):
    settings.download.max_bytes = 2000
    local_server.route("/busy.pdf", Reply(503, b"busy"))
    add_paper(db, "GONE", local_server.url + "/gone.pdf")
    add_paper(db, "BUSY", local_server.url + "/busy.pdf")
    add_paper(db, "BIG", serve_pdf(local_server, "/big.pdf", make_pdf(8, pad=5000)))
    add_paper(db, "FTP", "ftp://example.org/paper.pdf")
    report = run_download(db, settings)
    docs = documents(db)
    assert {k: (d.outcome, d.reason) for k, d in docs.items()} == {
        "GONE": ("failed", "http_404"), "BUSY": ("failed", "gave_up_after_retries"), "BIG": ("failed", "too_large"),
        "FTP": ("failed", "bad_url")}
    assert docs["GONE"].http_status == 404
    assert sum(r.path == "/gone.pdf" for r in local_server.requests) == 1, "a 404 is not retried"
    assert sum(r.path == "/busy.pdf" for r in local_server.requests) == 3
    assert report.failed == 4
    assert_consistent(db, settings.data_dir)


def test_size_limit_holds_while_streaming_without_content_length(db, settings):
    settings.download.max_bytes = 3000
    with DripServer(chunk=1000, pause=0) as drip:
        add_paper(db, "CH", drip.add("/ch.pdf", make_pdf(9, pad=20_000), chunked=True))
        add_paper(db, "SMALL", drip.add("/small.pdf", make_pdf(10), chunked=True))
        report = run_download(db, settings)
    docs = documents(db)
    assert (docs["CH"].reason, docs["SMALL"].outcome) == ("too_large", "ok")
    assert report.counts["too_large"] == 1
    assert_consistent(db, settings.data_dir)


def test_retry_failed_requeues_only_failures_without_duplicates(db, settings, local_server):
    data = make_pdf(11)
    add_paper(db, "LATE", local_server.url + "/late.pdf", crc32=crc(data))
    add_paper(db, "OK", serve_pdf(local_server, "/ok.pdf", make_pdf(12)))
    assert run_download(db, settings).counts == {"ok": 1, "failed": 1, "http_404": 1}
    serve_pdf(local_server, "/late.pdf", data)
    assert run_download(db, settings).counts == {}, "failures wait for --retry-failed"
    report = run_download(db, settings, retry_failed=True)
    assert report.counts == {"ok": 1}
    docs = documents(db)
    assert docs["LATE"].outcome == "ok" and docs["LATE"].reason is None and docs["LATE"].attempts == 2
    assert sum(r.path == "/ok.pdf" for r in local_server.requests) == 1
    assert_consistent(db, settings.data_dir)


def test_refresh_sends_conditional_requests_and_304_keeps_the_file(db, settings, local_server):
    data = make_pdf(13)
    etag, modified = '"v1"', "Wed, 21 Oct 2026 07:28:00 GMT"

    def handler(req):
        if req.headers.get("If-None-Match") == etag:
            return Reply(304, b"", {"ETag": etag})
        return Reply(200, data, {"Content-Type": "application/pdf", "ETag": etag, "Last-Modified": modified})

    local_server.route("/e.pdf", handler)
    add_paper(db, "E", local_server.url + "/e.pdf", crc32=crc(data))
    assert run_download(db, settings).counts == {"ok": 1}
    first = documents(db)["E"]
    assert (first.etag, first.last_modified) == (etag, modified)
    report = run_download(db, settings, refresh=True)
    assert report.counts == {"unchanged": 1}
    last = local_server.requests[-1]
    assert last.headers["If-None-Match"] == etag and last.headers["If-Modified-Since"] == modified
    doc = documents(db)["E"]
    assert (doc.outcome, doc.http_status, doc.sha256, doc.path) == ("ok", 304, first.sha256, first.path)
    assert_consistent(db, settings.data_dir)


def test_filters_limit_venue_and_year(db, settings, local_server):
    for i, (venue, year) in enumerate([("acl", 2020), ("acl", 2021), ("emnlp", 2020), ("acl", 2020)]):
        add_paper(db, f"F{i}", serve_pdf(local_server, f"/f{i}.pdf", make_pdf(20 + i)), venue=venue, year=year)
    assert run_download(db, settings, venues=["acl"], years=[2020], limit=1).counts == {"ok": 1}
    assert run_download(db, settings, venues=["acl"], years=[2020]).counts == {"ok": 1}
    assert set(documents(db)) == {"F0", "F3"}
    assert run_download(db, settings, venues=["emnlp"]).counts == {"ok": 1}
    assert set(documents(db)) == {"F0", "F2", "F3"}
    assert run_download(db, settings).counts == {"ok": 1}
    assert_consistent(db, settings.data_dir)


def test_same_pdf_for_two_papers_is_stored_once(db, settings, local_server):
    data = make_pdf(30)
    add_paper(db, "X1", serve_pdf(local_server, "/x1.pdf", data))
    add_paper(db, "X2", serve_pdf(local_server, "/x2.pdf", data))
    assert run_download(db, settings).counts == {"ok": 2}
    docs = documents(db)
    assert docs["X1"].path == docs["X2"].path
    assert len(list((settings.data_dir / "pdfs").glob("??/??/*.pdf"))) == 1


def test_ctrl_c_in_process_releases_unfinished_items(db, settings, sigint_raises):
    """KeyboardInterrupt mid-download: finished items stay done, the rest go back to pending."""
    body = make_pdf(40, pad=60_000)
    with DripServer(chunk=4096, pause=0.05) as drip:
        for i in range(4):
            add_paper(db, f"K{i}", drip.add(f"/k{i}.pdf", body[:-1] + bytes([i])))
        def press_ctrl_c_mid_file() -> None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not list((settings.data_dir / "pdfs").glob(".tmp/*.part")):
                time.sleep(0.02)
            _thread.interrupt_main()

        threading.Thread(target=press_ctrl_c_mid_file, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_download(db, settings, workers=2)
        states = queue_states(db)
        assert set(states.values()) <= {"pending", "done"} and "pending" in states.values()
        assert not list((settings.data_dir / "pdfs").glob(".tmp/*.part"))
        done_before = sum(v == "done" for v in states.values())
        report = run_download(db, settings)
    assert report.counts == {"ok": 4 - done_before}
    assert {d.outcome for d in documents(db).values()} == {"ok"} and len(documents(db)) == 4
    assert_consistent(db, settings.data_dir)


def test_a_body_that_trickles_past_the_time_limit_fails_as_timeout(db, settings):
    settings.download.max_seconds = 0.3
    with DripServer(chunk=200, pause=0.05) as drip:  # 100 kB at 4 kB/s: 25 s if nobody cuts it short
        add_paper(db, "DRIP", drip.add("/drip.pdf", make_pdf(60, pad=100_000)))
        t0 = time.monotonic()
        report = run_download(db, settings)
        assert time.monotonic() - t0 < 3, "the watchdog cuts a blocked read short"
        assert drip.requests["/drip.pdf"] == 1, "a deliberate limit is not retried"
    doc = documents(db)["DRIP"]
    assert (doc.outcome, doc.reason, report.counts["timeout"]) == ("failed", "timeout", 1)
    assert "time limit" in doc.detail
    assert_consistent(db, settings.data_dir)


def test_threads_are_not_tied_up_by_one_slow_host(db, settings, local_server):
    """Papers of a slow host queued first must not keep another host's paper waiting."""
    settings.http.per_host_concurrency = 1
    seen: dict[str, float] = {}

    def slow(req):
        seen.setdefault(req.path, time.monotonic())
        return Reply(200, make_pdf(int(req.path[2:-4])), {"Content-Type": "application/pdf"}, delay=0.3)

    local_server.route("/a", slow, prefix=True)
    for i in range(6):
        add_paper(db, f"A{i}", f"{local_server.url}/a{70 + i}.pdf")
    with LocalServer() as fast:
        fast.route("/b.pdf", lambda req: (seen.setdefault("/b.pdf", time.monotonic()),
                                          Reply(200, make_pdf(80), {"Content-Type": "application/pdf"}))[1])
        add_paper(db, "B", fast.url + "/b.pdf")
        assert run_download(db, settings, workers=4).counts == {"ok": 7}
    # The slow host serves one request at a time, 0.3 s each; had B waited for a thread tied up
    # by that host, it would start after several of them. Ordered, not timed from the call: the
    # queueing before the first request takes longer than 0.3 s on a loaded machine.
    slow_starts = sorted(t for path, t in seen.items() if path.startswith("/a"))
    assert len(slow_starts) == 6 and seen["/b.pdf"] < slow_starts[1], "the other host's paper started at once"
    assert_consistent(db, settings.data_dir)


def test_real_published_pdfs_arrive_byte_for_byte(db, settings, local_server):
    from tests.conftest import shared_path

    folder = shared_path("pdfs")
    files = sorted(folder.glob("*.pdf"))[:4]
    for i, path in enumerate(files):
        data = path.read_bytes()
        add_paper(db, f"REAL{i}", serve_pdf(local_server, f"/real{i}.pdf", data), crc32=crc(data))
    assert run_download(db, settings).counts == {"ok": len(files)}
    docs = documents(db)
    for i, path in enumerate(files):
        assert (settings.data_dir / docs[f"REAL{i}"].path).read_bytes() == path.read_bytes()
    assert_consistent(db, settings.data_dir)
