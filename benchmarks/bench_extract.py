"""Extraction speed, peak memory and backend agreement, side by side in one run.

    python benchmarks/bench_extract.py                 # defaults: >= 1000 generated pages
    python benchmarks/bench_extract.py --plumber-pages 60 --pages 1000

What it measures:
- pages/second and peak resident memory per backend (pypdfium2 fast path, pdfplumber,
  and poppler's `pdftotext` as an outside reference when installed), each backend in
  its own child process so peak memory is that backend's alone; text normalization is
  included for the two review backends (it is part of the job);
- on the real PDFs in ../shared/fixtures/pdfs (when present) and on a generated corpus of
  at least --pages pages (review.pdfgen, cached in --corpus-dir);
- the production pipeline (review.extract.isolate.WorkerPool, one worker per core, time
  limit and memory cap) on the generated corpus, and the projected time for the paper's
  ~1 million pages on this machine;
- agreement between backends on the real PDFs: token-level similarity of the normalized
  texts, and whether the ROUGE rule engine (patterns/rouge/rouge.toml) gives identical labels.

pdfplumber is slow, so on the generated corpus it runs on a sample of --plumber-pages
pages (said so in the output); on the real PDFs it runs on all of them.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REAL_DIR = ROOT.parent / "shared" / "fixtures" / "pdfs"
TARGET_PAGES = 1_000_000


def page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return 0
    n = len(doc)
    doc.close()
    return n


def build_corpus(directory: Path, pages: int) -> list[Path]:
    """Generated papers (about 8 pages each) until the corpus holds `pages` pages."""
    from review.pdfgen import sample_spec, write_paper

    directory.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    total, seed = 0, 0
    while total < pages:
        path = directory / f"paper-{seed:04d}.pdf"
        if not path.exists():
            write_paper(path, sample_spec(seed=seed, sections=8, paragraphs=6, report=seed % 3 != 0))
        files.append(path)
        total += page_count(path)
        seed += 1
    return files


def child(backend: str, files_json: str, out_json: str, keep_text: bool) -> None:
    """Runs in a fresh process: extract the files here, report time, pages, peak RSS."""
    from review.extract.core import extract_in_process

    files = json.loads(Path(files_json).read_text())
    results = []
    start, cpu0 = time.perf_counter(), time.process_time()
    for f in files:
        t = time.perf_counter()
        ex = extract_in_process(f, backend)
        results.append({"file": f, "pages": ex.pages or 0, "seconds": time.perf_counter() - t,
                        "outcome": ex.outcome, "reason": ex.reason, "text": ex.text if keep_text else None})
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out_json).write_text(json.dumps({"wall": wall, "cpu": cpu, "peak_mb": peak_mb, "results": results}))


def run_backend(backend: str, files: list[Path], keep_text: bool, tmp: Path) -> dict:
    fj, oj = tmp / f"files-{backend}.json", tmp / f"out-{backend}.json"
    fj.write_text(json.dumps([str(f) for f in files]))
    subprocess.run([sys.executable, __file__, "--child", backend, str(fj), str(oj)] + (["--keep-text"] if keep_text else []),
                   check=True)
    return json.loads(oj.read_text())


def run_pdftotext(files: list[Path]) -> dict | None:
    exe = shutil.which("pdftotext")
    if exe is None:
        return None
    from review.extract.normalize import normalize

    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = ru0.ru_maxrss
    results = []
    start = time.perf_counter()
    for f in files:
        t = time.perf_counter()
        proc = subprocess.run([exe, "-enc", "UTF-8", str(f), "-"], capture_output=True)
        secs = time.perf_counter() - t
        text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""
        results.append({"file": str(f), "pages": page_count(f) if proc.returncode == 0 else 0, "seconds": secs,
                        "outcome": "ok" if proc.returncode == 0 else "failed",
                        "text": normalize(text) if text else None})
    wall = time.perf_counter() - start
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    # ru_maxrss of children is the largest child so far; measured before any python child
    return {"wall": wall, "cpu": cpu, "peak_mb": max(ru1.ru_maxrss, before) / 1024, "results": results}


def pipeline(files: list[Path], workers: int) -> tuple[int, float, float]:
    """Pages, wall seconds and CPU seconds (parent + workers) of the isolated pipeline."""
    from review.extract.isolate import WorkerPool

    pages = 0
    ru0, self0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.process_time()
    start = time.perf_counter()
    with WorkerPool(workers, timeout=120, memory_mb=2048) as pool:
        for _, ex in pool.imap(iter([(str(f), f, "pypdfium2") for f in files])):
            pages += ex.pages or 0
    wall = time.perf_counter() - start
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime) + time.process_time() - self0
    return pages, wall, cpu


def sim(a: str | None, b: str | None) -> float:
    if not a or not b:
        return float("nan")
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


def rule_labels(text: str | None) -> dict | None:
    try:
        from review.rules.engine import Engine
        from review.rules.labels import label_scan
        from review.rules.model import load_ruleset
    except ImportError:
        return None
    if text is None:
        return None
    if not hasattr(rule_labels, "engine"):
        rs = load_ruleset(ROOT / "patterns" / "rouge" / "rouge.toml")
        rule_labels.engine = (Engine(rs), rs)  # type: ignore[attr-defined]
    engine, rs = rule_labels.engine  # type: ignore[attr-defined]
    return label_scan(engine.scan(text), rs).labels.as_dict()


def row(name: str, backend: str, data: dict, note: str = "") -> tuple:
    ok = [r for r in data["results"] if r["outcome"] == "ok"]
    pages = sum(r["pages"] for r in ok)
    secs, cpu = data["wall"], data["cpu"]
    return (name, backend, len(data["results"]), pages, secs, pages / secs if secs else 0.0, cpu,
            pages / cpu if cpu else 0.0, data["peak_mb"], note)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=1000, help="pages in the generated corpus (at least)")
    ap.add_argument("--plumber-pages", type=int, default=100, help="generated pages pdfplumber runs on")
    ap.add_argument("--corpus-dir", type=Path, default=Path(tempfile.gettempdir()) / "review-bench-extract")
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--child", nargs=3, metavar=("BACKEND", "FILES", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--keep-text", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, keep_text=args.keep_text)
        return

    load0 = " ".join(f"{x:.1f}" for x in os.getloadavg())
    t0 = time.perf_counter()
    corpus = build_corpus(args.corpus_dir, args.pages)
    print(f"generated corpus: {len(corpus)} PDFs, {sum(page_count(f) for f in corpus)} pages "
          f"in {args.corpus_dir} ({time.perf_counter() - t0:.0f} s incl. generation)")
    sample, n = [], 0
    for f in corpus:
        if n >= args.plumber_pages:
            break
        sample.append(f)
        n += page_count(f)
    real = sorted(REAL_DIR.glob("*.pdf")) if REAL_DIR.is_dir() else []
    rows = []
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        ref_real = run_pdftotext(real) if real else None
        ref_gen = run_pdftotext(corpus)
        res: dict[tuple[str, str], dict] = {}
        for name, files, keep in (("real", real, True), ("generated", corpus, False)):
            if not files:
                continue
            res[(name, "pypdfium2")] = run_backend("pypdfium2", files, keep, tmp)
            plumber_files = files if name == "real" else sample
            res[(name, "pdfplumber")] = run_backend("pdfplumber", plumber_files, keep, tmp)
        for (name, backend), data in res.items():
            note = f"sample of {n} pages" if (name, backend) == ("generated", "pdfplumber") else ""
            rows.append(row(name, backend, data, note))
        if ref_real:
            rows.append(row("real", "pdftotext", ref_real, "poppler, reference"))
        if ref_gen:
            rows.append(row("generated", "pdftotext", ref_gen, "poppler, reference"))

    rows.sort(key=lambda r: (r[0], r[1]))
    print(f"\nload average before the run: {load0}; wall-clock rates suffer when other work shares the cores,"
          " CPU-second rates do not")
    print(f"\n{'corpus':<10} {'backend':<11} {'files':>5} {'pages':>6} {'wall s':>8} {'pages/s':>8} {'CPU s':>8}"
          f" {'pages/CPU-s':>11} {'peak MB':>8}  note")
    for r in rows:
        print(f"{r[0]:<10} {r[1]:<11} {r[2]:>5} {r[3]:>6} {r[4]:>8.2f} {r[5]:>8.1f} {r[6]:>8.2f} {r[7]:>11.1f}"
              f" {r[8]:>8.0f}  {r[9]}")
    rate = {(r[0], r[1]): (r[5], r[7]) for r in rows}
    for name in ("real", "generated"):
        if (name, "pypdfium2") in rate and (name, "pdfplumber") in rate:
            (fw, fc), (pw, pc) = rate[(name, "pypdfium2")], rate[(name, "pdfplumber")]
            print(f"{name}: fast path is {fw / pw:.0f}x pdfplumber's pages/s (wall), {fc / pc:.0f}x per CPU-second"
                  " (target >= 20x)")

    pages, secs, cpu = pipeline(corpus, args.workers)
    per_s, per_cpu = pages / secs, pages / cpu
    cores = len(os.sched_getaffinity(0))
    print(f"\npipeline (WorkerPool, {args.workers} workers, isolated, pypdfium2, normalization included):"
          f" {pages} pages in {secs:.1f} s wall = {per_s:.0f} pages/s; {cpu:.1f} CPU-s = {per_cpu:.0f} pages/CPU-s")
    print(f"projected for {TARGET_PAGES:,} pages: {TARGET_PAGES / per_s / 3600:.2f} h at this run's wall-clock rate, "
          f"{TARGET_PAGES / (per_cpu * cores) / 3600:.2f} h with {cores} otherwise idle cores (target < 2 h)")

    if real:
        a = {r["file"]: r for r in res[("real", "pypdfium2")]["results"]}
        b = {r["file"]: r for r in res[("real", "pdfplumber")]["results"]}
        c = {r["file"]: r for r in ref_real["results"]} if ref_real else {}
        print("\nagreement on real PDFs (token-level similarity of normalized text; rule labels from patterns/rouge/rouge.toml)")
        print(f"{'file':<48} {'pdfium~plumber':>14} {'pdfium~pdftotext':>16} {'same labels':>12}")
        sims, same = [], []
        for f in a:
            if a[f]["outcome"] != "ok":
                print(f"{Path(f).name[:48]:<48} {'(' + str(a[f]['reason']) + ' in both)' if b[f]['outcome'] != 'ok' else '?':>14}")
                continue
            s1 = sim(a[f]["text"], b[f]["text"])
            s2 = sim(a[f]["text"], c[f]["text"]) if f in c else float("nan")
            la, lb = rule_labels(a[f]["text"]), rule_labels(b[f]["text"])
            eq = "n/a" if la is None else ("yes" if la == lb else "NO")
            if la is not None and la != lb:
                diff = {k: (la[k], lb[k]) for k in la if la[k] != lb.get(k)}
                eq += f" {diff}"
            sims.append(s1)
            same.append(eq.startswith("yes"))
            print(f"{Path(f).name[:48]:<48} {s1:>14.3f} {s2:>16.3f} {eq:>12}")
        if sims:
            print(f"mean token similarity pypdfium2~pdfplumber: {sum(sims) / len(sims):.3f}; "
                  f"identical rule labels: {sum(same)}/{len(same)}")


if __name__ == "__main__":
    main()
