"""Fetch one PDF: stream it to a temp file, verify it, and put it in the store.

Why verification happens while streaming: the size limit must stop a runaway response
before it fills the disk, and hashing on the way costs nothing. A file reaches the store
only when every check passed (complete body, `%PDF-` magic, the anthology's CRC32 and any
known sha256); everything else leaves no file behind and a reason word for the database.

A complete body: the announced Content-Length arrived in full. Without one (a server that
just closes the connection, or a compressed body whose length is not the file's), a
connection that drops early looks exactly like the end of the file, so the PDF itself
must show it is whole: an `%%EOF` marker in its last KiB, else it must open in pdfium.
Otherwise the outcome is `truncated`, tried again like a body that broke off.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import requests

from review.download.store import PdfStore
from review.errors import FetchError
from review.http import HttpClient, ResponseTooLarge

CHUNK = 64 * 1024
MAGIC = b"%PDF-"
MAGIC_WINDOW = 1024  # readers accept the header anywhere in the first KiB
EOF_MARKER = b"%%EOF"
EOF_WINDOW = 1024  # the PDF standard puts %%EOF in the last KiB
_PDFIUM_LOCK = threading.Lock()  # pdfium is not thread-safe; downloads run in threads


class Interrupted(Exception):
    """The run is stopping (Ctrl-C); the item is left unfinished, not failed."""


@dataclass
class Prior:
    """What the store already holds for a paper (for conditional requests)."""

    path: str | None
    sha256: str | None
    size: int | None
    etag: str | None
    last_modified: str | None


@dataclass
class FetchResult:
    outcome: str  # ok | unchanged | failed
    reason: str | None = None  # http_404, not_pdf, checksum_mismatch, too_large, timeout, truncated, ...
    detail: str | None = None
    url: str | None = None
    final_url: str | None = None
    http_status: int | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None
    size: int | None = None
    path: str | None = None
    retryable: bool = False  # body broke off: worth another try
    tries: int = 1

    def as_dict(self) -> dict:
        return asdict(self)


def is_pdf(head: bytes) -> bool:
    return MAGIC in head[:MAGIC_WINDOW]


def pdf_complete(path: Path, tail: bytes) -> bool:
    """True when a PDF received without a usable length is whole: %%EOF at its end, or pdfium opens it."""
    if EOF_MARKER in tail[-EOF_WINDOW:]:
        return True
    import pypdfium2 as pdfium

    with _PDFIUM_LOCK:
        try:
            doc = pdfium.PdfDocument(str(path))
        except Exception:  # PdfiumError and friends: not a PDF one could read
            return False
        try:
            return len(doc) > 0
        finally:
            doc.close()


def crc32_hex(value: int) -> str:
    return f"{value & 0xFFFFFFFF:08x}"


def fetch_pdf(client: HttpClient, store: PdfStore, url: str, *, max_bytes: int,
              crc32: str | None = None, sha256: str | None = None, prior: Prior | None = None,
              stop: threading.Event | None = None, tries: int = 3, max_seconds: float | None = None) -> FetchResult:
    """Download `url` into `store`; a body that breaks off is tried again up to `tries` times.

    Raises `Interrupted` when `stop` is set mid-download (the temp file is removed).
    """
    stop = stop or threading.Event()
    result = FetchResult("failed", url=url)
    for attempt in range(max(1, tries)):
        result = _fetch_once(client, store, url, max_bytes=max_bytes, crc32=crc32, sha256=sha256,
                             prior=prior, stop=stop, max_seconds=max_seconds)
        result.tries = attempt + 1
        if not result.retryable or attempt + 1 >= tries or stop.is_set():
            break
        client.sleep(client.backoff_delay(attempt))
    if stop.is_set() and result.outcome == "failed":
        raise Interrupted(url)
    return result


def _conditional_headers(store: PdfStore, prior: Prior | None) -> dict[str, str]:
    headers = {"Accept": "application/pdf, */*;q=0.5"}
    if prior is not None and store.has(prior.path):
        if prior.etag:
            headers["If-None-Match"] = prior.etag
        if prior.last_modified:
            headers["If-Modified-Since"] = prior.last_modified
    return headers


def _fetch_once(client: HttpClient, store: PdfStore, url: str, *, max_bytes: int, crc32: str | None,
                sha256: str | None, prior: Prior | None, stop: threading.Event,
                max_seconds: float | None) -> FetchResult:
    deadline = time.monotonic() + max_seconds if max_seconds else None
    headers = _conditional_headers(store, prior)
    try:
        resp = client.get(url, headers=headers, stream=True)
    except FetchError as exc:
        return FetchResult("failed", reason=exc.reason or "fetch_error", detail=exc.message, url=url)
    with resp:
        base = FetchResult(
            "failed", url=url, final_url=resp.url, http_status=resp.status_code,
            content_type=resp.headers.get("Content-Type"), etag=resp.headers.get("ETag"),
            last_modified=resp.headers.get("Last-Modified"),
        )
        conditional = "If-None-Match" in headers or "If-Modified-Since" in headers
        if resp.status_code == 304 and conditional and prior is not None:
            base.outcome, base.path, base.sha256, base.size = "unchanged", prior.path, prior.sha256, prior.size
            base.etag = base.etag or prior.etag
            base.last_modified = base.last_modified or prior.last_modified
            return base
        if resp.status_code != 200:
            return _fail(base, f"http_{resp.status_code}", f"server answered {resp.status_code} {resp.reason or ''}".strip())
        declared = _int(resp.headers.get("Content-Length"))
        if declared is not None and declared > max_bytes:
            return _fail(base, "too_large", f"Content-Length {declared} > limit {max_bytes}")
        temp = store.temp_path()
        try:
            return _stream(resp, temp, store, base, declared=declared, max_bytes=max_bytes,
                           crc32=crc32, sha256=sha256, stop=stop, deadline=deadline)
        finally:
            temp.unlink(missing_ok=True)


def _stream(resp: requests.Response, temp: Path, store: PdfStore, base: FetchResult, *, declared: int | None,
            max_bytes: int, crc32: str | None, sha256: str | None, stop: threading.Event,
            deadline: float | None = None) -> FetchResult:
    digest, crc, size, head, tail = hashlib.sha256(), 0, 0, b"", b""
    watch = _Watchdog(resp, stop, deadline)
    try:
        with temp.open("wb") as fh:
            for chunk in resp.iter_content(CHUNK):
                if stop.is_set():
                    raise Interrupted(base.url)
                if watch.expired():
                    watch.fired = True
                    break
                size += len(chunk)
                if size > max_bytes:
                    return _fail(base, "too_large", f"body exceeds the limit of {max_bytes} bytes")
                if len(head) < MAGIC_WINDOW:
                    head += chunk[: MAGIC_WINDOW - len(head)]
                tail = chunk[-EOF_WINDOW:] if len(chunk) >= EOF_WINDOW else (tail + chunk)[-EOF_WINDOW:]
                digest.update(chunk)
                crc = zlib.crc32(chunk, crc)
                fh.write(chunk)
            watch.done()
            resp.close()  # the body is in: free the host slot before the slow disk flush
            if not watch.fired:
                fh.flush()
                os.fsync(fh.fileno())
    except ResponseTooLarge as exc:  # http.max_response_bytes, when set below download.max_bytes
        return _fail(base, "too_large", exc.message)
    except requests.exceptions.ChunkedEncodingError:
        if not watch.fired:
            return _fail(base, "truncated", f"connection closed before the end of the body "
                                            f"({declared if declared is not None else 'unknown'} bytes announced)",
                         retryable=True)
    except requests.exceptions.ConnectionError as exc:
        if not watch.fired:
            if "timed out" in str(exc).lower():
                return _fail(base, "timeout", f"body stalled after {size} bytes", retryable=True)
            return _fail(base, "truncated", f"connection lost after {size} bytes", retryable=True)
    except requests.Timeout:
        if not watch.fired:
            return _fail(base, "timeout", f"body stalled after {size} bytes", retryable=True)
    finally:
        watch.done()
    if watch.fired:
        if stop.is_set():
            raise Interrupted(base.url)
        return _fail(base, "timeout", f"still arriving after the time limit ({size} bytes so far)")
    if declared is not None and not resp.headers.get("Content-Encoding") and size != declared:
        return _fail(base, "truncated", f"got {size} of {declared} bytes", retryable=True)
    base.size = size
    if not is_pdf(head):
        kind = base.content_type or "no content type"
        return _fail(base, "not_pdf", f"served as {kind}, starts with {head[:40]!r}")
    length_unchecked = declared is None or bool(resp.headers.get("Content-Encoding"))
    if length_unchecked and not pdf_complete(temp, tail):
        return _fail(base, "truncated", f"the body ended after {size} bytes with no length announced, and the PDF "
                                        "is incomplete (no %%EOF at its end and pdfium cannot open it)", retryable=True)
    got_crc = crc32_hex(crc)
    if crc32 and crc32.strip().lower().zfill(8) != got_crc:
        return _fail(base, "checksum_mismatch", f"crc32 {got_crc}, expected {crc32.lower()}")
    got_sha = digest.hexdigest()
    if sha256 and sha256.lower() != got_sha:
        return _fail(base, "checksum_mismatch", f"sha256 {got_sha[:12]}..., expected {sha256[:12]}...")
    base.sha256 = got_sha
    base.path = store.commit(temp, got_sha)
    base.outcome = "ok"
    return base


class _Watchdog:
    """Cuts a body read short when the run stops or the time limit passes.

    Why: a socket read blocks until data arrives, so a server trickling a byte now and
    then defeats both the per-read timeout and any check between chunks. Shutting the
    socket down from this thread wakes the blocked read at once.
    """

    def __init__(self, resp: requests.Response, stop: threading.Event, deadline: float | None):
        self.resp, self.stop, self.deadline = resp, stop, deadline
        self.fired = False
        self._done = threading.Event()
        threading.Thread(target=self._run, name="download-watchdog", daemon=True).start()

    def expired(self) -> bool:
        return self.fired or (self.deadline is not None and time.monotonic() > self.deadline)

    def done(self) -> None:
        self._done.set()

    def _run(self) -> None:
        while not self._done.wait(0.1):
            if self.stop.is_set() or (self.deadline is not None and time.monotonic() > self.deadline):
                self.fired = True
                conn = getattr(self.resp.raw, "connection", None)
                sock = getattr(conn, "sock", None)
                try:
                    if sock is not None:
                        sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return


def _fail(result: FetchResult, reason: str, detail: str, *, retryable: bool = False) -> FetchResult:
    result.outcome, result.reason, result.detail, result.retryable = "failed", reason, detail, retryable
    return result


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
