"""Benchmark (a): records per second harvesting a generated anthology-shaped corpus.

Target: 100,000 papers in under 2 minutes with under 1 GB of memory. Generates a
checkout (data/xml with new- and old-style collections, data/yaml/venues), harvests it
into a fresh database, harvests it again (all unchanged), and prints the figures.

    .venv/bin/python benchmarks/bench_harvest.py                 # 100,000 papers, SQLite
    .venv/bin/python benchmarks/bench_harvest.py --papers 20000 --db postgresql://...
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from review.db import migrate
from review.db.session import Database
from review.harvest.acl import harvest_acl
from review.settings import Settings

WORDS = ("summarization evaluation neural abstractive metric ROUGE translation parsing corpus "
         "language model attention transfer multilingual dialogue generation").split()


def _title(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 12))]
    return f"<fixed-case>{words[0].upper()}</fixed-case> " + " ".join(words[1:])


def _paper(rng: random.Random, num: int, url: str, year: int) -> str:
    authors = "".join(f"<author><first>First{rng.randint(1, 9999)}</first><last>Last{rng.randint(1, 9999)}</last></author>"
                      for _ in range(rng.randint(1, 6)))
    pwc = (f'<pwccode url="https://github.com/o/r{num}" additional="false">o/r{num}</pwccode>'
           if rng.random() < 0.1 else "")
    return (f'<paper id="{num}"><title>{_title(rng)}</title>{authors}<pages>{num}–{num + 9}</pages>'
            f"<abstract>{' '.join(rng.choice(WORDS) for _ in range(80))}</abstract>"
            f'<url hash="{rng.getrandbits(32):08x}">{url}</url><bibkey>k-{url}</bibkey>'
            f"<doi>10.18653/v1/{url}</doi>{pwc}</paper>\n")


def generate(root: Path, papers: int, per_volume: int = 200, seed: int = 7) -> int:
    """Write `papers` papers in collections of one volume each; half new-style, half old-style."""
    rng = random.Random(seed)
    xml = root / "data" / "xml"
    xml.mkdir(parents=True)
    (root / "data" / "yaml" / "venues").mkdir(parents=True)
    (root / "data" / "yaml" / "venues" / "acl.yaml").write_text("acronym: ACL\nname: ACL\noldstyle_letter: P\n")
    written, n = 0, 0
    while written < papers:
        count = min(per_volume, papers - written)
        year = 2002 + n % 21
        if n % 2:
            cid = f"{year}.v{n}"
            vid = f"{cid}-1"
            body = "".join(_paper(rng, i, f"{vid}.{i}", year) for i in range(1, count + 1))
            venue = f"<venue>v{n % 40}</venue>"
        else:
            cid = f"P{n:05d}"
            vid = f"{cid}-1"
            body = "".join(_paper(rng, i, f"{cid}-1{i:03d}", year) for i in range(1, count + 1))
            venue = ""
        (xml / f"{cid}.xml").write_text(
            f"<?xml version='1.0' encoding='UTF-8'?>\n<collection id=\"{cid}\"><volume id=\"1\"><meta>"
            f"<booktitle>Proceedings {n}</booktitle><publisher>ACL</publisher><address>Somewhere</address>"
            f"<month>July</month><year>{year}</year><url hash=\"00000000\">{vid}</url>{venue}</meta>"
            f"<frontmatter><url hash=\"11111111\">{vid}.0</url></frontmatter>\n{body}</volume></collection>\n",
            encoding="utf-8")
        written += count
        n += 1
    return n


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--db", default="", help="database URL (default: a temporary SQLite file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-harvest-") as tmp:
        root = Path(tmp) / "checkout"
        t0 = time.perf_counter()
        files = generate(root, args.papers)
        gen = time.perf_counter() - t0
        print(f"generated {args.papers} papers in {files} collection files in {gen:.1f}s "
              f"(peak RSS so far {_peak_mb():.0f} MB)")
        db = Database(args.db or f"sqlite:///{tmp}/bench.sqlite")
        migrate.upgrade(db)
        settings = Settings()
        settings.data_dir = Path(tmp)
        for label in ("first harvest", "rerun (unchanged)"):
            t0 = time.perf_counter()
            result = harvest_acl(db, settings, data_dir=root, cutoff="")
            took = time.perf_counter() - t0
            seen = result.records
            print(f"{label}: {seen} records in {took:.1f}s = {seen / took:,.0f} records/s "
                  f"[{result.summary()}]; peak RSS {_peak_mb():.0f} MB "
                  f"(target: <120 s, <1024 MB) on {db.dialect}")
        db.dispose()
    ok = result.unchanged == args.papers
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
