"""Labeling throughput: the rule engine against a naive baseline, on a generated corpus.

The corpus imitates real full texts: sizes drawn from a log-normal distribution around
40 KB (a few pages to long appendices), academic filler with the usual look-alikes
(citations, URLs, command-line flags, "R1", "run", "precision"), and about 5% of papers
that mention ROUGE, with realistic passages (ROUGE-1/2/L, package citations, parameter
strings, stemming, bootstrapping) scattered through them.

The fast path is `review.rules.Engine` (regex module, preliminary gate, windows around
ROUGE mentions). The naive baseline is `review.rules.NaiveEngine`: one `re.finditer` per
pattern over the whole text, no prefilter. Both feed the same labeling, and the script
checks that every paper gets identical labels.

    .venv/bin/python benchmarks/bench_label.py [--papers 10000] [--naive 2000] [--rules patterns/rouge/rouge.toml]

`--naive` is how many of the papers the (slow) baseline also labels (0 = all of them);
the speed-up is measured on exactly those papers. Figures are printed; nothing is written,
except with `--evidence FILE`: the labels and evidence (hits, suppressed overlaps, rejected
attachments with their reasons, timed-out rules) of every paper of the corpus and of the
real fixture texts (`--fixtures`, plus tests/data/*.txt), one JSON line each. When FILE
does not exist it is written; when it does, the run is compared with it line by line and
exits non-zero on any difference, so a speed change that moves one span shows:

    .venv/bin/python benchmarks/bench_label.py --rules patterns/rouge/rouge-precise.toml \
        --naive 0 --db-papers 0 --evidence /tmp/precise.jsonl   # once, before the change
    ... the same command after it: "evidence: identical (10011 texts)" or the first differences

Figures (CPU seconds of `Engine.scan` + `label_scan` over the default 10,000 papers, 489 of
them about ROUGE; 2-core machine shared with other jobs, runs of the code versions and two
rule files interleaved, 3 each, spread under 0.15 s; medians; load average 3.7-5 for the
first two rows, 0.4-0.8 for the last two):

    code                                   rouge.toml          rouge-precise.toml   ratio
    main at a2a44a1 (issue 23 merged)      2.27 s (4,410/s)    7.24 s (1,380/s)     3.2x
    judge searches each stretch once,      2.14 s (4,670/s)    6.48 s (1,540/s)     3.0x
    rivals only nearer, region/near-rule
    windows trimmed (identical evidence)
    main at 6fcda51 (the row above)        2.11 s (4,740/s)    6.42 s (1,560/s)     3.0x
    prefilter literals in one Aho-Corasick 1.54 s (6,490/s)    4.83 s (2,070/s)     3.1x
    pass; the judge tries metric-name
    alternations only where a name begins
    (identical evidence)

Against the code and rule files from before the attachment judge (the parent of 56c779f,
`git archive 56c779f^`), two interleaved rounds at load 0.9 on an idle machine:

    code                                   rouge.toml          rouge-precise.toml
    before the judge (56c779f^)            2.3 s (4,430/s)     2.5 s (4,070/s)
    main at a2848ad                        1.5 s (6,420/s)     5.0 s (2,000/s)

On another (slower, noisier) machine, 2026-12-02: three interleaved rounds of the code
before the judge, main at f325a78 and main after the judge's batching and the word-start
prefilters (identical evidence for both rule files, `--evidence`), medians:

    code                                   rouge.toml          rouge-precise.toml
    before the judge (56c779f^)            4.4 s               4.6 s
    main at f325a78                        2.8 s               11.6 s
    judge by test, not by match; word-     2.8 s               7.8 s
    start and two-letter prefilters;
    required literals skip windows

and a later round at 88ce982 (the machine slower still): before the judge 4.8 s and 5.2 s,
main 3.1 s and 8.1 s (1.6x for the precise file).

Three more interleaved rounds at 75ba759 (judge's stretches merged in one go per pattern,
leading literals found in a slice): before the judge 4.9 s and 4.4 s, main 7.2 s and 3.0 s
(medians; 1.5x for the precise file, 0.7x for the faithful one). CPU seconds drift too much
here to see a 5% change: benchmarks/bench_label_instructions.py counts instructions
instead (the same from run to run). By that count, on the first 60 ROUGE papers of this
corpus, the precise file spends 1.68x what it spent before the judge, and 1.05x without its
attachment policies: the pattern side is at parity, and judging the 40,700 measure and
protocol matches (the corpus is dense with them: "precision", "recall", "stem" and "porter"
are filler words) is the rest. On the 114 real gold papers it spends 1.34x (1.17x without
attachment: the rules added since). Issue 23's target, within 10% of the figures before the
judge, is not met for the precise file.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from review.rules import Engine, NaiveEngine, label_scan, load_ruleset  # noqa: E402

PAPER_CORPUS = 100_582

WORDS = ("the of and to in a is that for we on with as by this are be model from our an which results table "
         "figure data set training language models task performance each these using can section use method "
         "approach learning work two based also neural between it more than one show both different first "
         "proposed system evaluation baseline human score scores features sentence sentences word words new "
         "attention encoder decoder layer representation corpus dataset test dev accuracy et al number however "
         "where when has have been not all into such other been their they only best over compared previous "
         "network networks parameters translation summary summaries document documents extractive abstractive "
         "run runs report reported recall precision tokens token vocabulary loss objective gradient "
         "stem system systems porter ranked rank ranking retrieval query queries").split()
FILLER_BITS = [
    "(Vaswani et al., 2017)", "(Devlin et al., 2019)", "https://github.com/facebookresearch/fairseq",
    "pip install -r requirements.txt", "python train.py --lr 0.001 -b 32 -e 10", "R1 and R2 in Table 3",
    "Figure 2: Accuracy on the dev set.", "p < 0.05", "F1 of 88.3", "BLEU of 27.4 with sacrebleu",
    "In Proceedings of the 2019 Conference of the North American Chapter", "arXiv preprint arXiv:1907.11692.",
    "tar -x -z -f data.tgz", "our method gains 1.2 points", "1 Introduction", "References",
]
ROUGE_BITS = [
    "We evaluate with ROUGE (Lin, 2004) and report ROUGE-1, ROUGE-2 and ROUGE-L F1 scores.",
    "ROUGE scores are computed with ROUGE-1.5.5 using -c 95 -r 1000 -n 2 -m with Porter stemming.",
    "We use the pyrouge wrapper (https://github.com/bheinzerling/pyrouge) with default settings.",
    "Scores are computed with files2rouge (https://github.com/pltrdy/files2rouge).",
    "We use the rouge-score package from google-research with stemming enabled.",
    "R-1 R-2 R-L Lead-3 40.3 17.7 36.6", "HROUGE correlates better with humans than ROUGE.",
    "95% confidence intervals from bootstrap resampling.", "We report recall for ROUGE-2 and precision.",
    "py-rouge (Diego999) with sentence splitting and stopwords kept.", "nlg-eval computes ROUGE-L.",
]


def make_corpus(n: int, seed: int = 7, rouge_share: float = 0.05) -> list[str]:
    rng = random.Random(seed)
    sentences = []
    for _ in range(3000):
        words = rng.choices(WORDS, k=rng.randint(8, 30))
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), rng.choice(FILLER_BITS))
        s = " ".join(words)
        sentences.append(s[0].upper() + s[1:] + ".")
    texts = []
    for i in range(n):
        size = int(min(400_000, max(4_000, rng.lognormvariate(10.45, 0.55))))  # median ~34 KB, mean ~40 KB
        parts, length = [], 0
        while length < size:
            s = rng.choice(sentences)
            parts.append(s)
            length += len(s) + 1
        if rng.random() < rouge_share:
            for _ in range(rng.randint(5, 40)):
                parts.insert(rng.randrange(len(parts)), rng.choice(ROUGE_BITS))
        texts.append(" ".join(parts))
    return texts


def label_all(engine, ruleset, texts):  # type: ignore[no-untyped-def]
    """Labels plus (wall seconds, CPU seconds of this process): on a shared machine the
    CPU time is the fair measure of one core's throughput."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = [label_scan(engine.scan(t), ruleset).labels for t in texts]
    return out, (time.perf_counter() - t0, time.process_time() - c0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=10_000)
    ap.add_argument("--naive", type=int, default=2_000, help="papers the baseline labels too (0 = all)")
    ap.add_argument("--rules", default=str(ROOT / "patterns" / "rouge" / "rouge.toml"))
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--evidence", type=Path, help="write (when absent) or compare (when present) every text's labels and evidence")
    ap.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures" / "pdfs",
                    help="real PDFs whose extracted texts join the evidence check (skipped when absent)")
    ap.add_argument("--db-papers", type=int, default=2_000,
                    help="also time `review label` end to end on a temporary SQLite database with this many texts (0 = skip)")
    args = ap.parse_args()

    t0 = time.perf_counter()
    texts = make_corpus(args.papers)
    total = sum(map(len, texts))
    ruleset = load_ruleset(args.rules, args.option)
    print(f"corpus: {len(texts)} texts, {total / 1e6:.0f} MB, mean {total / len(texts) / 1e3:.1f} KB, "
          f"{sum('rouge' in t.lower() for t in texts)} mention ROUGE (generated in {time.perf_counter() - t0:.1f} s)")
    print(f"rules: {ruleset.name} {ruleset.sha256[:12]}, {len(ruleset.rules)} rules, "
          f"{sum(len(r.patterns) for r in ruleset.rules)} patterns")

    fast, (wall, cpu) = label_all(Engine(ruleset), ruleset, texts)
    print(f"engine, one process: {wall:.1f} s wall / {cpu:.1f} s CPU for {len(texts)} papers = "
          f"{len(texts) / cpu:,.0f} papers/s of CPU, {total / cpu / 1e6:.0f} MB/s; projected {PAPER_CORPUS:,} papers: "
          f"{PAPER_CORPUS / len(texts) * cpu:.0f} s CPU, {PAPER_CORPUS / len(texts) * wall:.0f} s at this run's wall-clock "
          f"rate (target < 120 s)")

    k = len(texts) if args.naive in (0, None) or args.naive >= len(texts) else args.naive
    step = len(texts) / k
    sample = [int(i * step) for i in range(k)]
    sub = [texts[i] for i in sample]
    naive, (n_wall, n_cpu) = label_all(NaiveEngine(ruleset), ruleset, sub)
    _, (f_wall, f_cpu) = label_all(Engine(ruleset), ruleset, sub)
    same = sum(fast[i] == naive[j] for j, i in enumerate(sample))
    print(f"naive baseline (re.finditer per pattern, no prefilter) on {k} of the papers: {n_wall:.1f} s wall / "
          f"{n_cpu:.1f} s CPU = {k / n_cpu:,.0f} papers/s of CPU; engine on the same papers: {f_cpu:.2f} s CPU; "
          f"speed-up {n_cpu / f_cpu:.1f}x CPU, {n_wall / f_wall:.1f}x wall (target >= 5x)")
    print(f"identical labels: {same}/{k}" + ("" if same == k else "  <-- MISMATCH"))
    flagged = sum(l.computes for l in fast)
    print(f"labels: {sum(l.prelim for l in fast)} prelim, {flagged} compute ROUGE, "
          f"{sum(bool(l.packages) for l in fast)} cite a package, {sum(bool(l.params) for l in fast)} list parameters")
    differ = 0
    if args.evidence:
        differ = check_evidence(args.evidence, ruleset, texts, args.fixtures)
    if args.db_papers:
        db_run(texts[: args.db_papers], args.rules, args.option)
    if same != k or differ:
        sys.exit(1)


def fixture_texts(folder: Path) -> dict[str, str]:
    """The extracted texts of the real fixture PDFs and the project's own text fixtures."""
    from review.extract import extract_file

    out = {}
    for path in sorted(folder.glob("*.pdf")) if folder.is_dir() else []:
        result = extract_file(path, isolate=False)
        if result.outcome == "ok" and result.text:
            out[path.name] = result.text
    for path in sorted((ROOT / "tests" / "data" / "pdfs").glob("*.txt")):
        out[f"tests/{path.name}"] = path.read_text(encoding="utf-8")
    return out


def evidence_lines(ruleset, named: dict[str, str]) -> list[str]:  # type: ignore[no-untyped-def]
    """One JSON line per text: its labels and every span behind them, accepted or not."""
    engine = Engine(ruleset)
    lines = []
    for name, text in named.items():
        scan = engine.scan(text)
        labeled = label_scan(scan, ruleset)
        hit = lambda h: [h.rule_id, h.start, h.end, h.match, h.value, h.attached]  # noqa: E731
        lines.append(json.dumps({
            "text": name, "labels": labeled.labels.as_dict(), "hits": [hit(h) for h in labeled.hits],
            "suppressed": [hit(h) for h in labeled.suppressed],
            "rejected": [hit(r.hit) + [r.reason] for r in labeled.rejected], "timed_out": scan.timed_out,
        }, ensure_ascii=False))
    return lines


def check_evidence(path: Path, ruleset, texts: list[str], fixtures: Path) -> int:  # type: ignore[no-untyped-def]
    """Write the evidence file, or count the texts whose evidence differs from it."""
    named = {f"corpus-{i}": t for i, t in enumerate(texts)} | fixture_texts(fixtures)
    lines = evidence_lines(ruleset, named)
    if not path.exists():
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"evidence: written to {path} ({len(lines)} texts)")
        return 0
    old = path.read_text(encoding="utf-8").splitlines()
    bad = [i for i in range(max(len(old), len(lines))) if i >= len(old) or i >= len(lines) or old[i] != lines[i]]
    if not bad:
        print(f"evidence: identical to {path} ({len(lines)} texts)")
        return 0
    print(f"evidence: {len(bad)} of {len(lines)} texts differ from {path}  <-- MISMATCH")
    for i in bad[:3]:
        print(f"  was: {old[i][:600] if i < len(old) else '(none)'}\n  now: {lines[i][:600] if i < len(lines) else '(none)'}")
    return len(bad)


def db_run(texts: list[str], rules: str, options: list[str]) -> None:
    """`run_label` over stored texts: reading, labeling and writing findings together."""
    import tempfile

    from review.db import migrate
    from review.db.models import Paper, PaperText
    from review.db.session import Database
    from review.rules.stage import run_label
    from review.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/bench.sqlite")
        migrate.upgrade(db)
        with db.session() as s:
            papers = [Paper(ident=f"bench-{i}", source="local", title="") for i in range(len(texts))]
            s.add_all(papers)
            s.flush()
            s.add_all(PaperText(paper_id=p.id, content=t, chars=len(t), outcome="ok") for p, t in zip(papers, texts))
        t0, c0 = time.perf_counter(), time.process_time()
        result = run_label(db, load_settings(None), rules_path=rules, options=options)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        db.dispose()
    print(f"review label on SQLite: {result.labeled} papers in {dt:.1f} s wall / {cpu:.1f} s CPU "
          f"({result.findings} findings written); projected {PAPER_CORPUS:,} papers: "
          f"{PAPER_CORPUS / result.labeled * cpu:.0f} s CPU, {PAPER_CORPUS / result.labeled * dt:.0f} s wall")


if __name__ == "__main__":
    main()
