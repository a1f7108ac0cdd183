"""Speed of `review compute` + `review export` on generated papers, and of `review survey --sample`.

Targets (issue 8): compute + export on 100,000 papers under 1 minute; the sample survey end
to end under 1 minute. Prints the figures; not part of the test run.

    .venv/bin/python benchmarks/bench_compute_export.py            # 100,000 papers, SQLite
    .venv/bin/python benchmarks/bench_compute_export.py --papers 20000 --db postgresql://...
    .venv/bin/python benchmarks/bench_compute_export.py --skip-sample
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from review.compute import run_compute  # noqa: E402
from review.db import migrate  # noqa: E402
from review.db.session import Database  # noqa: E402
from review.export import run_export  # noqa: E402
from review.progress import set_silent  # noqa: E402
from review.settings import Settings  # noqa: E402
from tests.compute_support import bulk_corpus  # noqa: E402


def bench_compute_export(papers: int, url: str | None, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(url or f"sqlite:///{tmp}/bench.sqlite")
        migrate.upgrade(db)
        t = time.perf_counter()
        bulk_corpus(db, papers)
        print(f"generate {papers} papers: {time.perf_counter() - t:.1f} s (not counted)")
        settings = Settings()
        t0 = time.perf_counter()
        result = run_compute(db, settings)
        t1 = time.perf_counter()
        out = run_export(db, settings, out_dir=Path(tmp) / "out", fmt=fmt)
        t2 = time.perf_counter()
        print(f"compute: {t1 - t0:.1f} s ({result.papers} papers, {result.metric_papers} ROUGE, "
              f"{result.reproducible} reproducible)")
        print(f"export ({fmt}): {t2 - t1:.1f} s ({len(out.files)} files, dataset "
              f"{out.dataset.stat().st_size / 1e6:.1f} MB)")
        print(f"compute + export: {t2 - t0:.1f} s (target < 60 s)")
        t3 = time.perf_counter()
        again = run_compute(db, settings)
        print(f"compute rerun (unchanged={again.unchanged}): {time.perf_counter() - t3:.1f} s")
        db.dispose()


def bench_sample() -> None:
    review = Path(sys.executable).with_name("review")
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("first run", "rerun"):
            t = time.perf_counter()
            proc = subprocess.run([str(review), "--silent", "survey", "--sample"], cwd=tmp, capture_output=True,
                                  text=True)
            status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr[-300:]}"
            print(f"review survey --sample, {label}: {time.perf_counter() - t:.1f} s ({status}; target < 60 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--db", default=None, help="database URL (default: a temporary SQLite file)")
    parser.add_argument("--format", default="csv", choices=["csv", "jsonl", "parquet"])
    parser.add_argument("--skip-sample", action="store_true")
    args = parser.parse_args()
    set_silent(True)
    bench_compute_export(args.papers, args.db, args.format)
    if not args.skip_sample:
        bench_sample()


if __name__ == "__main__":
    main()
