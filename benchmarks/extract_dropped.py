"""What extraction drops from real PDFs, and the code URLs it leaves cut (issue 20, items 1 and 4).

    python benchmarks/extract_dropped.py gold/papers/pdfs                      # pypdfium2
    python benchmarks/extract_dropped.py gold/papers/pdfs --backend pdfplumber --limit 20
    PYTHONPATH=/path/to/older/checkout python benchmarks/extract_dropped.py gold/papers/pdfs  # before

For each PDF of the folder (in this process, no worker: the PDFs are trusted), the
extraction's `dropped` counts ("(cid:NN)" placeholders, LaTeXiT blobs, visible characters
outside crop boxes) are added up, and the text is labeled with the faithful rule file of
the default metric: its code URLs that end in "_" or "-" are cut ones (a URL broken at a
line end and not rejoined). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from review.extract import extract_file
from review.rules import Engine, label_scan, load_ruleset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--backend", default="pypdfium2")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--rules", type=Path, default=Path(__file__).resolve().parent.parent / "patterns/rouge/rouge.toml")
    args = ap.parse_args()
    ruleset = load_ruleset(args.rules)
    engine = Engine(ruleset)
    pdfs = sorted(args.folder.glob("*.pdf"))[: args.limit]
    dropped: Counter[str] = Counter()
    papers_with: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    urls, cut = 0, []
    start = time.process_time()
    for pdf in pdfs:
        ex = extract_file(pdf, args.backend, isolate=False)
        outcomes[ex.reason or ex.outcome] += 1
        found = getattr(ex, "dropped", {})  # absent before issue 20: run on an older checkout for "before"
        dropped.update(found)
        papers_with.update(k for k, n in found.items() if n)
        if ex.text:
            code_urls = label_scan(engine.scan(ex.text), ruleset).labels.code_urls
            urls += len(code_urls)
            cut += [f"{pdf.name}: {u}" for u in code_urls if u.rstrip(".").endswith(("_", "-"))]
    print(json.dumps({"backend": args.backend, "pdfs": len(pdfs), "outcomes": dict(outcomes),
                      "dropped": dict(dropped), "papers_with": dict(papers_with), "code_urls": urls,
                      "code_urls_cut": cut, "cpu_seconds": round(time.process_time() - start, 1)}, indent=1))


if __name__ == "__main__":
    main()
