"""Helpers for the download tests: real PDFs, paper rows, and a server that drips bodies.

`LocalServer` answers with whole bodies; killing a download half-way needs a body that
arrives slowly, and the streaming size limit needs a body without Content-Length, so
`DripServer` serves both (plain http.server, real HTTP/1.1 framing).
"""

from __future__ import annotations

import io
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pypdfium2 as pdfium
from sqlalchemy import select

from review.db.models import Document, Paper, WorkItem


def make_pdf(n: int = 0, pad: int = 0) -> bytes:
    """A small valid PDF, different for each `n`; `pad` bytes of PDF comments make it bigger."""
    doc = pdfium.PdfDocument.new()
    doc.new_page(200 + n, 300)
    buf = io.BytesIO()
    doc.save(buf)
    data = buf.getvalue()
    if pad:
        line = b"% padding to make the file larger than one network chunk\n"
        data += line * (pad // len(line) + 1)
    return data


def crc(data: bytes) -> str:
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"


def add_paper(db, ident: str, pdf_url: str | None, *, crc32: str | None = None, venue: str = "acl",
              year: int = 2020) -> int:
    with db.session() as s:
        paper = Paper(ident=ident, source="acl", title=f"Paper {ident}", pdf_url=pdf_url, pdf_crc32=crc32,
                      venue=venue, venues=[venue], year=year)
        s.add(paper)
        s.flush()
        return paper.id


def documents(db) -> dict[str, Document]:
    with db.session() as s:
        rows = s.execute(select(Paper.ident, Document).join(Document, Document.paper_id == Paper.id)).all()
    return {ident: doc for ident, doc in rows}


def queue_states(db) -> dict[int, str]:
    with db.session() as s:
        return {w.item_id: w.state for w in s.scalars(select(WorkItem).where(WorkItem.stage == "download"))}


def assert_consistent(db, store_root) -> None:
    """Nothing lost or duplicated: one Document per processed paper, its file present and
    matching its sha256, queue state agreeing with the outcome, no temp file left."""
    import hashlib

    with db.session() as s:
        docs = s.scalars(select(Document)).all()
    paper_ids = [d.paper_id for d in docs]
    assert len(paper_ids) == len(set(paper_ids)), "two Documents for one paper"
    states = queue_states(db)
    for d in docs:
        if d.outcome == "ok":
            data = (store_root / d.path).read_bytes()
            assert hashlib.sha256(data).hexdigest() == d.sha256 and len(data) == d.size
            assert d.path == f"pdfs/{d.sha256[:2]}/{d.sha256[2:4]}/{d.sha256}.pdf"
            assert states[d.paper_id] == "done"
        else:
            assert d.reason and d.path is None
            assert states[d.paper_id] == "failed"
    assert not list((store_root / "pdfs").glob(".tmp/*.part")), "a partial file was left behind"
    stored = {p.name for p in (store_root / "pdfs").glob("??/??/*.pdf")}
    assert stored == {f"{d.sha256}.pdf" for d in docs if d.outcome == "ok"}, "a file in the store nobody owns"


class DripServer:
    """Serves registered bodies slowly: `chunk` bytes every `pause` seconds.

    `chunked=True` paths are sent with Transfer-Encoding: chunked (no Content-Length).
    `requests` counts GETs per path.
    """

    def __init__(self, chunk: int = 1024, pause: float = 0.05):
        self.bodies: dict[str, tuple[bytes, bool]] = {}
        self.requests: dict[str, int] = {}
        self.chunk, self.pause = chunk, pause
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

            def do_GET(self) -> None:
                with outer._lock:
                    outer.requests[self.path] = outer.requests.get(self.path, 0) + 1
                if self.path not in outer.bodies:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body, chunked = outer.bodies[self.path]
                self.send_response(200)
                self.send_header("Content-Type", "application/pdf")
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(0, len(body), outer.chunk):
                        part = body[i : i + outer.chunk]
                        if chunked:
                            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                        else:
                            self.wfile.write(part)
                        self.wfile.flush()
                        time.sleep(outer.pause)
                    if chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, path: str, body: bytes, *, chunked: bool = False) -> str:
        self.bodies[path] = (body, chunked)
        return self.url + path

    def __enter__(self) -> DripServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:  # type: ignore[no-untyped-def]
        self._httpd.shutdown()
        self._httpd.server_close()
