"""Benchmark (a): records per second harvesting a generated anthology-shaped corpus.

Target: 100,000 papers in under 2 minutes with under 1 GB of memory. Generates a
checkout (data/xml with new- and old-style collections, data/yaml/venues), harvests it
into a fresh database, harvests it again (all unchanged), and prints the figures.

    .venv/bin/python benchmarks/bench_harvest.py                 # 100,000 papers, SQLite
    .venv/bin/python benchmarks/bench_harvest.py --papers 20000 --db postgresql://...
    .venv/bin/python benchmarks/bench_harvest.py --papers 0 --dblp-records 500000
    .venv/bin/python benchmarks/bench_harvest.py --as-of            # also a rerun read from git

`--as-of` commits the generated checkout to git and reruns the harvest from that commit
(`harvest_acl(as_of=...)`, the `review harvest acl --as-of` path), to compare with the rerun
read from disk.

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


OLD_LETTERS = "PWNDCE"  # W collections take two-digit volumes (W02-1001: volume 10, paper 1)


def _collection(cid: str, volumes: list[tuple[str, str]], year: int, venue: str, n: int) -> str:
    body = "".join(
        f"<volume id=\"{vol}\"><meta><booktitle>Proceedings {n}</booktitle><publisher>ACL</publisher>"
        f"<address>Somewhere</address><month>July</month><year>{year}</year>{venue}</meta>"
        f"<frontmatter><url hash=\"11111111\">{cid}-{vol}.0</url></frontmatter>\n{papers}</volume>"
        for vol, papers in volumes)
    return f"<?xml version='1.0' encoding='UTF-8'?>\n<collection id=\"{cid}\">{body}</collection>\n"


def generate(root: Path, papers: int, per_volume: int = 200, seed: int = 7) -> int:
    """Write `papers` papers in collections of 200: half new-style (one volume), half old-style
    with real ids (P.. one volume, paper P05-1042; W.. volumes of up to 99 papers numbered
    1, 10, 11, ..., paper W05-1042)."""
    rng = random.Random(seed)
    xml = root / "data" / "xml"
    xml.mkdir(parents=True)
    (root / "data" / "yaml" / "venues").mkdir(parents=True)
    for letter, venue in zip(OLD_LETTERS, ("acl", "ws", "naacl", "emnlp", "coling", "eacl")):
        (root / "data" / "yaml" / "venues" / f"{venue}.yaml").write_text(
            f"acronym: {venue.upper()}\nname: {venue}\noldstyle_letter: {letter}\n")
    written, n = 0, 0
    while written < papers:
        count = min(per_volume, papers - written)
        year = 2002 + n % 21
        if n % 2:
            cid = f"{year}.v{n}"
            vid = f"{cid}-1"
            body = "".join(_paper(rng, i, f"{vid}.{i}", year) for i in range(1, count + 1))
            text = _collection(cid, [("1", body)], year, f"<venue>v{n % 40}</venue>", n)
        else:
            k = n // 2
            letter = OLD_LETTERS[k % len(OLD_LETTERS)]
            cid = f"{letter}{k // len(OLD_LETTERS):02d}"
            if letter == "W":
                nums = [1, *range(10, 99)]
                chunks = [(nums[v], range(1, min(99, count - v * 99) + 1)) for v in range((count + 98) // 99)]
                volumes = [(str(vol), "".join(_paper(rng, i, f"{cid}-{vol:02d}{i:02d}", year) for i in numbers))
                           for vol, numbers in chunks]
            else:
                volumes = [("1", "".join(_paper(rng, i, f"{cid}-1{i:03d}", year) for i in range(1, count + 1)))]
            text = _collection(cid, volumes, year, "", n)
        (xml / f"{cid}.xml").write_text(text, encoding="utf-8")
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


def _rerun_from_git(db: Database, settings: Settings, root: Path, papers: int) -> bool:
    import datetime
    import subprocess

    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.org", "HOME": str(root), "PATH": "/usr/bin:/bin"}
    t0 = time.perf_counter()
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    print(f"committed the checkout to git in {time.perf_counter() - t0:.1f}s")
    tomorrow = datetime.date.today() + datetime.timedelta(days=1)
    t0 = time.perf_counter()
    result = harvest_acl(db, settings, data_dir=root, cutoff="", as_of=tomorrow)
    took = time.perf_counter() - t0
    print(f"acl rerun from git (--as-of {tomorrow}): {result.records} records in {took:.1f}s = "
          f"{result.records / took:,.0f} records/s [{result.summary()}]; peak RSS {_peak_mb():.0f} MB")
    return result.unchanged == papers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--dblp-records", type=int, default=0, help="also stream a generated dump of this many records")
    parser.add_argument("--db", default="", help="database URL (default: a temporary SQLite file)")
    parser.add_argument("--as-of", action="store_true", help="also rerun from a git commit of the checkout")
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
                t0, c0 = time.perf_counter(), time.process_time()
                result = harvest_acl(db, settings, data_dir=root, cutoff="")
                took, cpu = time.perf_counter() - t0, time.process_time() - c0
                print(f"acl {label}: {result.records} records in {took:.1f}s = {result.records / took:,.0f} records/s "
                      f"({cpu:.1f} CPU s: the figure a shared machine's load does not move) "
                      f"[{result.summary()}]; peak RSS {_peak_mb():.0f} MB (target: <120 s, <1024 MB) on {db.dialect}")
            ok = result.unchanged == args.papers
            if args.as_of:
                ok = _rerun_from_git(db, settings, root, args.papers) and ok
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
