"""Regenerate the small PDFs in tests/data/pdfs (committed) and their ground truth.

Run from the repository root:  python tests/data/make_pdfs.py
The output is deterministic (ReportLab's invariant mode), so rerunning it changes
nothing unless review/pdfgen.py changed.

Files:
- rouge-paper.pdf / .txt: a 4-page two-column paper reporting ROUGE with pyrouge,
  py-rouge, ROUGE-1.5.5 and "-c 95 -r 1000 -n 2 -m" (also wrapped in a footnote),
  ligatures, hyphenation and a "ROUGE / 1 2 L" table; .txt is the ground truth.
- plain-paper.pdf / .txt: a paper that never mentions ROUGE.
- encrypted.pdf: the ROUGE paper behind a user password ("secret").
- scanned.pdf: two pages of raster image, no text layer.
- truncated.pdf: the first 40% of the bytes of rouge-paper.pdf.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from review.pdfgen import sample_spec, write_paper, write_scanned_pdf  # noqa: E402

OUT = Path(__file__).resolve().parent / "pdfs"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    truth = write_paper(OUT / "rouge-paper.pdf", sample_spec(seed=1))
    (OUT / "rouge-paper.txt").write_text(truth, encoding="utf-8")
    truth = write_paper(OUT / "plain-paper.pdf", sample_spec(seed=2, sections=3, report=False))
    (OUT / "plain-paper.txt").write_text(truth, encoding="utf-8")
    write_paper(OUT / "encrypted.pdf", sample_spec(seed=1), password="secret")
    write_scanned_pdf(OUT / "scanned.pdf", pages=2)
    data = (OUT / "rouge-paper.pdf").read_bytes()
    (OUT / "truncated.pdf").write_bytes(data[: int(len(data) * 0.4)])
    for p in sorted(OUT.iterdir()):
        print(f"{p.name}\t{p.stat().st_size}")


if __name__ == "__main__":
    main()
