"""Benchmark (b): download throughput across hosts with per-host limits held exactly.

Starts 4 local HTTP servers (4 hosts: same address, different ports; the HTTP layer keys
its limits by host:port), each answering every PDF request after a fixed latency (50 ms
by default). Runs the real `run_download` pipeline (SQLite database, work queue, thread
pool, verification, content-addressed store) with papers spread over 1, 2 and 4 hosts, and
measures on the server side the largest number of requests each host was answering at
once. Then a rate-limited run shows request starts per host never closer than 1/rate.

    .venv/bin/python benchmarks/bench_download.py
    .venv/bin/python benchmarks/bench_download.py --files-per-host 60 --latency 0.05 --concurrency 3
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import pypdfium2 as pdfium

from review.db import migrate
from review.db.models import Paper
from review.db.session import Database
from review.download import run_download
from review.localserver import LocalServer, Reply
from review.settings import DownloadSettings, HttpSettings, Settings


JITTER = 0.015  # seconds of scheduling noise allowed between client and server clocks


class Host:
    """One server plus its measurements: peak concurrency and request start times."""

    def __init__(self, latency: float, pdfs: dict[str, bytes]):
        self.server = LocalServer().start()
        self.latency, self.pdfs = latency, pdfs
        self.lock = threading.Lock()
        self.active = self.peak = 0
        self.starts: list[float] = []
        self.server.route("/pdf/", self.handle, prefix=True)

    def handle(self, req):  # type: ignore[no-untyped-def]
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self.starts.append(time.monotonic())
        time.sleep(self.latency)
        with self.lock:
            self.active -= 1
        return Reply(200, self.pdfs[req.path], {"Content-Type": "application/pdf"})

    def reset(self) -> None:
        self.active = self.peak = 0
        self.starts = []


def make_pdf(n: int, size: int) -> bytes:
    doc = pdfium.PdfDocument.new()
    doc.new_page(100 + n % 500, 100 + n // 500)
    buf = io.BytesIO()
    doc.save(buf)
    data = buf.getvalue()
    return data + b"%" + bytes(str(n), "ascii") * max(1, (size - len(data)) // len(str(n)))


def scenario(hosts: list[Host], n_hosts: int, per_host: int, *, concurrency: int, rate: float,
             workers: int, size: int, grouped: bool = False) -> dict:
    """One run; `grouped` queues each host's papers in one stretch instead of interleaved."""
    used = hosts[:n_hosts]
    for h in used:
        h.reset()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/bench.sqlite")
        migrate.upgrade(db)
        tag = "g" if grouped else "i"
        with db.session() as s:
            for i in range(per_host * n_hosts):
                host = used[i // per_host] if grouped else used[i % n_hosts]
                path = f"/pdf/{tag}{n_hosts}-{i}.pdf"
                data = make_pdf(i + 1000 * n_hosts, size)
                host.pdfs[path] = data
                s.add(Paper(ident=f"b{tag}{n_hosts}-{i}", source="acl", pdf_url=host.server.url + path,
                            pdf_crc32=f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"))
        settings = Settings(data_dir=Path(tmp) / "data",
                            http=HttpSettings(per_host_concurrency=concurrency, per_host_rate=rate,
                                              timeout=10, backoff=0.1),
                            download=DownloadSettings(workers=workers))
        t0 = time.perf_counter()
        report = run_download(db, settings)
        elapsed = time.perf_counter() - t0
        db.dispose()
    files = per_host * n_hosts
    gaps = []
    for h in used:
        s = sorted(h.starts)
        gaps += [b - a for a, b in zip(s, s[1:])]
    return {"hosts": n_hosts, "files": files, "ok": report.counts.get("ok", 0), "seconds": elapsed,
            "files_per_s": files / elapsed, "peaks": [h.peak for h in used],
            "min_gap": min(gaps) if gaps else float("nan")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files-per-host", type=int, default=40)
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per response")
    ap.add_argument("--concurrency", type=int, default=2, help="http.per_host_concurrency")
    ap.add_argument("--workers", type=int, default=8, help="download.workers")
    ap.add_argument("--size", type=int, default=20_000, help="bytes per PDF")
    ap.add_argument("--rate", type=float, default=5.0, help="per_host_rate for the rate-limited run")
    args = ap.parse_args(argv)

    hosts = [Host(args.latency, {}) for _ in range(4)]
    ideal_per_host = args.concurrency / args.latency
    print(f"4 local hosts, {args.latency * 1000:.0f} ms per response, per_host_concurrency={args.concurrency}, "
          f"workers={args.workers}, {args.size} B PDFs; ideal per host {ideal_per_host:.0f} files/s")
    print(f"{'hosts':>5} {'files':>5} {'ok':>4} {'seconds':>8} {'files/s':>8} {'x 1 host':>8}  max concurrent per host")
    base = None
    exact = True
    for n in (1, 2, 4):
        r = scenario(hosts, n, args.files_per_host, concurrency=args.concurrency, rate=0,
                     workers=args.workers, size=args.size)
        base = base or r["files_per_s"]
        exact &= all(p == args.concurrency for p in r["peaks"]) and r["ok"] == r["files"]
        print(f"{r['hosts']:>5} {r['files']:>5} {r['ok']:>4} {r['seconds']:>8.2f} {r['files_per_s']:>8.1f} "
              f"{r['files_per_s'] / base:>8.2f}  {r['peaks']}")
    r = scenario(hosts, 4, args.files_per_host, concurrency=args.concurrency, rate=0, workers=args.workers,
                 size=args.size, grouped=True)
    exact &= all(p == args.concurrency for p in r["peaks"]) and r["ok"] == r["files"]
    print(f"{r['hosts']:>5} {r['files']:>5} {r['ok']:>4} {r['seconds']:>8.2f} {r['files_per_s']:>8.1f} "
          f"{r['files_per_s'] / base:>8.2f}  {r['peaks']}  (queue grouped by host, not interleaved)")
    n_rate = max(2, int(args.rate * 2))
    r = scenario(hosts, 4, n_rate, concurrency=args.concurrency, rate=args.rate, workers=args.workers, size=args.size)
    print(f"rate-limited: per_host_rate={args.rate:g}/s, 4 hosts x {n_rate} files: {r['seconds']:.2f} s, "
          f"{r['files_per_s']:.1f} files/s in total, closest request starts on one host {r['min_gap'] * 1000:.0f} ms "
          f"(limit {1000 / args.rate:.0f} ms, {JITTER * 1000:.0f} ms jitter allowed), peaks {r['peaks']}")
    # Starts are scheduled by the client; the server sees them a few ms later or earlier.
    rate_ok = r["min_gap"] >= 1 / args.rate - JITTER and r["ok"] == r["files"]
    for h in hosts:
        h.server.stop()
    print("per-host limits held exactly" if exact and rate_ok else "LIMIT VIOLATED or files missing")
    return 0 if exact and rate_ok else 1


if __name__ == "__main__":
    sys.exit(main())
