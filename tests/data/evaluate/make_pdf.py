"""Regenerate papers/small-paper.pdf (committed): a short paper of our own for `review evaluate`.

Run from the repository root:  python tests/data/evaluate/make_pdf.py
Deterministic (ReportLab's invariant mode, as tests/data/make_pdfs.py). The text mixes
what a careful reviewer must tell apart: the paper's own code and ROUGE setup, a
baseline's code, and a ROUGE package named only in related work.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from review.pdfgen import PaperSpec, Section, TableSpec, write_paper  # noqa: E402

SPEC = PaperSpec(
    title="A Small Summarizer for Testing Evaluation Tools",
    authors=["Ada Example", "Bo Sample"],
    abstract="We describe a small extractive summarizer and how we evaluate it, so that tools which read "
             "papers can be tested on a known answer.",
    sections=[
        Section("Introduction", ["Extractive summarizers select sentences from a news article. We train one "
                                 "on a public corpus and report how well it does."]),
        Section("Related Work", ["Several extensions of the metric exist: ROUGE 2.0 (Ganesan, 2018) adds "
                                 "synonyms, but we do not use it here."]),
        Section("Experiments", ["For the baseline we use open code at https://github.com/example-lab/baseline-sum "
                                "with default hyper-parameters. Our own code is released at "
                                "https://github.com/example-lab/small-sum.",
                                "We report ROUGE-1, ROUGE-2 and ROUGE-L F1 computed with the official "
                                "ROUGE-1.5.5 script[fn:1]."]),
        Section("Conclusion", ["The summarizer is small and its evaluation is fully described."]),
    ],
    footnotes=["The options are -c 95 -r 1000 -n 2 -m for every score."],
    table=TableSpec(caption="Table 1: ROUGE F1 on the test set.", group="ROUGE",
                    rows=[["Lead-3", "40.34", "17.70", "36.57"], ["Ours", "41.02", "18.11", "37.20"]]),
    table_after=2,
    references=["Kavita Ganesan. 2018. ROUGE 2.0: Updated and improved measures for evaluation of "
                "summarization tasks."],
)


def main() -> None:
    write_paper(Path(__file__).resolve().parent / "papers" / "small-paper.pdf", SPEC)


if __name__ == "__main__":
    main()
