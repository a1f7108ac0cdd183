"""Codebase benchmarks: scan throughput and GitHub calls per codebase.

    .venv/bin/python benchmarks/bench_scan.py [--repos 20] [--files 300] [--codebases 50] [--rounds 3]

1. Builds `--repos` git repositories of a realistic size for research code (Python
   modules of ~150 lines, a README, requirements, a notebook, shell scripts, a binary
   checkpoint stub, and in some a vendored ROUGE implementation), then measures
   (a) scanning existing checkouts (`--rounds` times: the machine is shared, so the median
   is the figure; target: >= 100 repositories/min) and (b) shallow clone (file://) plus
   scan, in repositories per minute.
2. Runs `run_github` on `--codebases` codebases against the local GitHub stand-in
   (tests/github_fake.py, GitHub's REST formats; a quarter renamed, a tenth deleted, one
   primary and one secondary rate limit on the way) and prints API calls per codebase.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from code_support import add_paper, make_repo, notebook  # noqa: E402
from review.codebases.catalog import load_catalog  # noqa: E402
from review.codebases.fetch import git_clone  # noqa: E402
from review.codebases.scan import scan_tree  # noqa: E402

logging.getLogger("github").setLevel(logging.WARNING)  # PyGithub logs every followed 301 at INFO

EVAL_SNIPPETS = [
    "from rouge_score import rouge_scorer\nscorer = rouge_scorer.RougeScorer(['rouge1', 'rouge2', 'rougeL'])\n",
    "from pyrouge import Rouge155\nr = Rouge155()\nout = r.convert_and_evaluate()\n",
    "from rouge import Rouge\nscores = Rouge().get_scores(h, r, avg=True)\n",
    "from nlgeval import compute_metrics\nm = compute_metrics(hypothesis='h', references=['r'])\n",
    "import os\nos.system('files2rouge ref.txt hyp.txt')\n",
]


def module_text(rng: random.Random, n_lines: int = 150) -> str:
    lines = ["import os", "import json", "import numpy as np", "import torch", "from torch import nn", ""]
    for i in range(n_lines):
        kind = rng.random()
        if kind < 0.1:
            lines.append(f"def helper_{i}(x, y=None):")
            lines.append(f"    \"\"\"Compute step {i} of the model.\"\"\"")
        elif kind < 0.2:
            lines.append(f"    # note {i}: keep the batch size fixed")
        else:
            lines.append(f"    value_{i} = np.mean([x * {i}, y or 0]) + torch.tensor({i}).item()")
    return "\n".join(lines) + "\n"


def build_repos(base: Path, n: int, files: int) -> list[Path]:
    rng = random.Random(7)
    repos = []
    for r in range(n):
        content: dict[str, str | bytes] = {
            "README.md": f"# Model {r}\n\nInstall with `pip install -r requirements.txt`.\n\nWe report ROUGE-1/2/L.\n",
            "requirements.txt": "torch>=1.8\nnumpy\ntransformers==4.3.0\n" + ("rouge-score\n" if r % 2 else "pyrouge\n"),
            "scripts/train.sh": "#!/bin/bash\npython train.py --lr 3e-5 --batch 16\n",
            "notebooks/analysis.ipynb": notebook([("markdown", "# Results"), ("code", "import pandas as pd\npd.read_csv('x')")]),
            "checkpoints/model.bin": bytes(rng.getrandbits(8) for _ in range(20_000)) + b"\0",
            "src/evaluate.py": EVAL_SNIPPETS[r % len(EVAL_SNIPPETS)],
        }
        if r % 4 == 0:
            content["third_party/rouge.py"] = ("def my_lcs(string, sub):\n    return 0\n\nclass Rouge():\n"
                                               "    def __init__(self):\n        self.beta = 1.2\n")
        for f in range(files - len(content)):
            content[f"src/pkg{f % 12}/module_{f}.py"] = module_text(rng)
        repos.append(make_repo(base / f"owner{r}" / f"repo{r}.git", content))
    return repos


def bench_scan(args: argparse.Namespace) -> None:
    catalog = load_catalog()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        t0 = time.perf_counter()
        repos = build_repos(base / "remote", args.repos, args.files)
        size = sum(p.stat().st_size for r in repos for p in r.rglob("*") if p.is_file() and ".git" not in p.parts)
        print(f"built {len(repos)} repositories x {args.files} files ({size / len(repos) / 1e6:.1f} MB each "
              f"without .git) in {time.perf_counter() - t0:.1f} s")

        rates, cpu_rates = [], []
        for _ in range(args.rounds):
            t0, c0 = time.perf_counter(), time.process_time()
            found = 0
            for repo in repos:
                report = scan_tree(repo, catalog)
                found += bool(report.packages_used)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            rates.append(len(repos) / dt * 60)
            cpu_rates.append(len(repos) / cpu * 60)
            print(f"scan of existing checkouts: {len(repos) / dt * 60:.0f} repositories/min "
                  f"({dt / len(repos) * 1000:.0f} ms each, {args.files * len(repos) / dt:.0f} files/s; "
                  f"CPU {cpu / len(repos) * 1000:.0f} ms each = {len(repos) / cpu * 60:.0f}/min on one free core); "
                  f"{found}/{len(repos)} with a package used")
        print(f"scan of existing checkouts, median of {args.rounds}: {statistics.median(rates):.0f} repositories/min "
              f"wall clock, {statistics.median(cpu_rates):.0f} repositories/min of CPU time (the figure on a "
              f"machine not shared with other work)")

        t0 = time.perf_counter()
        for i, repo in enumerate(repos):
            co = git_clone(f"file://{repo}", base / "cache" / str(i), timeout=120, max_bytes=500_000_000)
            scan_tree(co.path, catalog)
        dt = time.perf_counter() - t0
        print(f"shallow clone (file://) + scan: {len(repos) / dt * 60:.0f} repositories/min "
              f"({dt / len(repos) * 1000:.0f} ms each)")


def bench_github(args: argparse.Namespace) -> None:
    from github_fake import FakeGitHub
    from review.codebases.github import GitHubClient, run_github
    from review.db import migrate
    from review.db.models import Codebase
    from review.db.session import Database
    from review.localserver import LocalServer
    from review.settings import Settings

    with tempfile.TemporaryDirectory() as tmp, LocalServer() as server:
        db = Database(f"sqlite:///{tmp}/b.sqlite")
        migrate.upgrade(db)
        fake = FakeGitHub(server, search_limit=6000)
        pid = add_paper(db, "B", "Bench")
        with db.session() as s:
            for i in range(args.codebases):
                name = f"repo{i}"
                if i % 10 != 9:  # a tenth deleted
                    fake.add_repo(f"o/{name}-new" if i % 4 == 0 else f"o/{name}",
                                  files={"eval.py": "rouge" if i % 2 else "bleu"})
                    if i % 4 == 0:
                        fake.move(f"o/{name}", f"o/{name}-new")
                s.add(Codebase(paper_id=pid, url=f"https://github.com/o/{name}", host="github.com", owner="o", name=name))
        fake.fail_next("core", fake.primary_limit("core", reset_in=1))
        fake.fail_next("search", fake.secondary_limit("search", retry_after=1))
        client = GitHubClient(server.url, "bench-token", max_wait=30)
        t0 = time.perf_counter()
        result = run_github(db, Settings(data_dir=Path(tmp), code={"github_api_url": server.url}), client=client)
        dt = time.perf_counter() - t0
        n = args.codebases
        http = len(server.requests)
        print(f"github: {n} codebases, {sum(result.calls.values())} API calls ({sum(result.calls.values()) / n:.2f} per "
              f"codebase: core {result.calls['core'] / n:.2f}, search {result.calls['search'] / n:.2f}); "
              f"{http} HTTP requests incl. 301 hops ({http / n:.2f} per codebase); "
              f"{result.counts['rate_limit_waits']} rate-limit waits; {dt:.1f} s")
        db.dispose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", type=int, default=20)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--codebases", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3, help="scans of the existing checkouts (the median is the figure)")
    args = ap.parse_args()
    bench_scan(args)
    bench_github(args)


if __name__ == "__main__":
    main()
