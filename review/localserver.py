"""A small threaded HTTP server on loopback, serving routes you register.

Used by `review survey --sample` to serve the bundled corpus, and by the tests to stand in
for the ACL Anthology, DBLP, GitHub and Papers With Code (real response formats, faults
on demand). Handlers get the request and return a `Reply`; every request is logged in
`server.requests` so tests can assert on what the client actually sent.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (latency, timeouts)
    truncate_to: int | None = None  # send a Content-Length of the full body, then only this many bytes


Handler = Callable[[Request], Reply]


class LocalServer:
    """`with LocalServer() as srv: srv.route("/x.pdf", handler); srv.url + "/x.pdf"`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.routes: dict[tuple[str, str], Handler] = {}
        self.prefix_routes: list[tuple[str, str, Handler]] = []
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, path: str, handler: Handler | Reply, method: str = "GET", *, prefix: bool = False) -> None:
        fn = handler if callable(handler) else (lambda _req, r=handler: r)
        if prefix:
            self.prefix_routes.append((method, path, fn))
        else:
            self.routes[(method, path)] = fn

    def _find(self, method: str, path: str) -> Handler | None:
        if (method, path) in self.routes:
            return self.routes[(method, path)]
        matches = [(p, h) for m, p, h in self.prefix_routes if m == method and path.startswith(p)]
        return max(matches, key=lambda ph: len(ph[0]))[1] if matches else None

    def _make_handler(self):  # type: ignore[no-untyped-def]
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without TCP_NODELAY every keep-alive
            # response waits ~40 ms for the client's delayed ACK (Nagle), as real servers don't.
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                req = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()),
                              self.rfile.read(length) if length else b"")
                with server._lock:
                    server.requests.append(req)
                handler = server._find(self.command, parts.path)
                reply = handler(req) if handler else Reply(404, b"not found")
                if reply.delay:
                    threading.Event().wait(reply.delay)
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(body)))
                    if reply.truncate_to is not None:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(body if reply.truncate_to is None else body[: reply.truncate_to])
                    if reply.truncate_to is not None:
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

        return _Handler

    def start(self) -> LocalServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:  # type: ignore[no-untyped-def]
        self.stop()
