"""Benchmark (a): records per second harvesting a generated anthology-shaped corpus.

Target: 100,000 papers in under 2 minutes with under 1 GB of memory. Generates a
checkout (data/xml with new- and old-style collections, data/yaml/venues), harvests it
into a fresh database, harvests it again (all unchanged), and prints the figures.

    .venv/bin/python benchmarks/bench_harvest.py                 # 100,000 papers, SQLite
    .venv/bin/python benchmarks/bench_harvest.py --papers 20000 --db postgresql://...
    .venv/bin/python benchmarks/bench_harvest.py --papers 0 --dblp-records 500000

`--dblp-records N` also streams a generated dblp.xml.gz of N records (one in five a
main-conference paper of the venue table) in dump mode, to show memory stays flat.
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


def generate_dblp(folder: Path, records: int, seed: int = 11) -> Path:
    """A gzipped dblp.xml with `records` records; every fifth is a NeurIPS/ICML paper."""
    import gzip
    import shutil

    rng = random.Random(seed)
    dtd_src = Path(__file__).resolve().parent.parent / "tests" / "data" / "dblp" / "dblp.dtd"
    shutil.copy(dtd_src, folder / "dblp.dtd")
    path = folder / "dblp.xml.gz"
    with gzip.open(path, "wt", encoding="iso-8859-1", compresslevel=1) as fh:
        fh.write('<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE dblp SYSTEM "dblp.dtd">\n<dblp>\n')
        for i in range(records):
            title = " ".join(rng.choice(WORDS) for _ in range(8))
            if i % 5 == 0:
                year = 2003 + i % 19
                stream, toc = ("conf/icml", f"icml{year}") if i % 2 else ("conf/nips", f"nips{min(year, 2017)}")
                fh.write(f'<inproceedings key="{stream}/P{i}"><author>J&uuml;rgen A{i}</author><author>B {i}</author>'
                         f"<title>{title} {i}.</title><year>{year}</year><booktitle>X</booktitle>"
                         f"<ee>http://proceedings.mlr.press/v{i % 200}/p{i}.html</ee>"
                         f"<url>db/{stream}/{toc}.html#P{i}</url></inproceedings>\n")
            else:
                fh.write(f'<article key="journals/j{i % 97}/A{i}"><author>C&eacute;line {i}</author>'
                         f"<title>{title}.</title><journal>J</journal><year>2015</year>"
                         f"<url>db/journals/j/j1.html#A{i}</url></article>\n")
        fh.write("</dblp>\n")
    return path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--dblp-records", type=int, default=0, help="also stream a generated dump of this many records")
    parser.add_argument("--db", default="", help="database URL (default: a temporary SQLite file)")
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-harvest-") as tmp:
        db = Database(args.db or f"sqlite:///{tmp}/bench.sqlite")
        migrate.upgrade(db)
        settings = Settings()
        settings.data_dir = Path(tmp)
        if args.papers:
            root = Path(tmp) / "checkout"
            t0 = time.perf_counter()
            files = generate(root, args.papers)
            print(f"generated {args.papers} papers in {files} collection files in {time.perf_counter() - t0:.1f}s "
                  f"(peak RSS so far {_peak_mb():.0f} MB)")
            for label in ("first harvest", "rerun (unchanged)"):
                t0 = time.perf_counter()
                result = harvest_acl(db, settings, data_dir=root, cutoff="")
                took = time.perf_counter() - t0
                print(f"acl {label}: {result.records} records in {took:.1f}s = {result.records / took:,.0f} records/s "
                      f"[{result.summary()}]; peak RSS {_peak_mb():.0f} MB (target: <120 s, <1024 MB) on {db.dialect}")
            ok = result.unchanged == args.papers
        if args.dblp_records:
            from review.harvest.dblp import harvest_dblp

            folder = Path(tmp) / "dblp"
            folder.mkdir()
            t0 = time.perf_counter()
            dump = generate_dblp(folder, args.dblp_records)
            print(f"generated a dump of {args.dblp_records} records ({dump.stat().st_size / 1e6:.0f} MB gzipped) "
                  f"in {time.perf_counter() - t0:.1f}s")
            before = _peak_mb()
            t0 = time.perf_counter()
            result = harvest_dblp(db, settings, mode="dump", dump=dump, cutoff="")
            took = time.perf_counter() - t0
            print(f"dblp dump: {args.dblp_records} records scanned in {took:.1f}s = {args.dblp_records / took:,.0f} "
                  f"records/s [{result.summary()}]; peak RSS {_peak_mb():.0f} MB (before: {before:.0f} MB)")
            ok = ok and result.added == args.dblp_records // 5
        db.dispose()
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
