"""Queue and pull throughput of the human pass at the paper's scale (3,000 papers).

Seeds N labelled papers (with findings) in a temporary SQLite database, then measures:
queue (create project, import N tasks with predictions), a rerun of queue (reconcile
only), queue adopting N already-annotated tasks of a second project (bulk-imported as
setup), pull (N tasks with annotations into decisions, resolve, agreement), and a rerun
of pull (nothing changed).

Needs a Label Studio: LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY, or the tests'
LABEL_STUDIO_TEST_URL/TOKEN; otherwise one is started from the cached venv
(/root/.cache/review-ls/venv) and stopped afterwards.

    .venv/bin/python benchmarks/bench_labelstudio.py --papers 3000
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from review.db import migrate  # noqa: E402
from review.db.session import Database  # noqa: E402
from review.labelstudio import run_pull, run_queue  # noqa: E402
from review.labelstudio.client import LabelStudioClient  # noqa: E402
from review.settings import Settings  # noqa: E402

VENV = Path(os.environ.get("LABEL_STUDIO_VENV", "/root/.cache/review-ls/venv"))


def server() -> tuple[str, str, subprocess.Popen | None]:
    url = os.environ.get("LABEL_STUDIO_URL") or os.environ.get("LABEL_STUDIO_TEST_URL")
    key = os.environ.get("LABEL_STUDIO_API_KEY") or os.environ.get("LABEL_STUDIO_TEST_TOKEN")
    if url and key:
        return url, key, None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url, key = f"http://127.0.0.1:{port}", secrets.token_hex(20)
    data = tempfile.mkdtemp(prefix="bench-ls-")
    proc = subprocess.Popen([str(VENV / "bin" / "label-studio"), "start", "--no-browser", "--host", "127.0.0.1",
                             "--port", str(port), "--data-dir", data, "--username", "bench@example.com",
                             "--password", secrets.token_hex(8), "--user-token", key, "--enable-legacy-api-token"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    for _ in range(240):
        try:
            if requests.get(f"{url}/health", timeout=2).ok:
                return url, key, proc
        except requests.RequestException:
            pass
        time.sleep(1)
    proc.terminate()
    raise SystemExit("Label Studio did not start")


def seed(db: Database, n: int) -> None:
    from review.db.models import Finding, Paper, PaperLabel, RuleSet

    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256="b" * 64, path="patterns/rouge/rouge.toml", content="#")
        s.add(rs)
        s.flush()
        for i in range(n):
            p = Paper(ident=f"bench-{i}", source="acl", title=f"Benchmark paper {i}", authors=["A", "B"],
                      venue="acl", year=2002 + i % 21, pdf_url=f"https://example.org/{i}.pdf")
            s.add(p)
            s.flush()
            s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, prelim=True, computes=i % 5 != 0, params=[],
                             protocol=["stemming"], variants=["recall"], packages=["ROUGE-1.5.5"]))
            for k in range(3):
                s.add(Finding(paper_id=p.id, rule_set_id=rs.id, rule_id="r", kind="package", label="ROUGE-1.5.5",
                              start=k, end=k + 5, match="ROUGE-1.5.5", snippet="we use ROUGE-1.5.5 " * 10))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=3000)
    args = ap.parse_args()
    url, key, proc = server()
    try:
        tmp = Path(tempfile.mkdtemp(prefix="bench-human-"))
        db = Database(f"sqlite:///{tmp / 'review.sqlite'}")
        migrate.upgrade(db)
        seed(db, args.papers)
        settings = Settings(exports_dir=tmp / "exports", data_dir=tmp)
        client = LabelStudioClient(url, key)
        title = f"bench {uuid.uuid4().hex[:8]}"
        n = args.papers

        t = time.perf_counter()
        q = run_queue(db, settings, "papers", project=title, client=client)
        dt = time.perf_counter() - t
        print(f"queue (import)   {n} papers: {dt:7.1f} s  {n / dt:7.0f} tasks/s  (imported {q.imported})")
        t = time.perf_counter()
        q2 = run_queue(db, settings, "papers", project=title, client=client)
        dt = time.perf_counter() - t
        print(f"queue (rerun)    {n} papers: {dt:7.1f} s  {n / dt:7.0f} tasks/s  (unchanged {q2.unchanged})")

        # setup for pull: a second project whose tasks already carry one annotation each,
        # imported in bulk (creating 3,000 annotations one by one takes Label Studio ~20 min
        # on two cores); `review queue` then adopts them by ref instead of importing again.
        result = [{"from_name": "P0", "to_name": "evidence", "type": "choices", "value": {"choices": ["yes"]}},
                  {"from_name": "P4", "to_name": "evidence", "type": "choices", "value": {"choices": ["ROUGE-1.5.5"]}}]
        from review.labelstudio.tasks import label_config
        title_b = title + " annotated"
        pid_b = client.create_project(title_b, label_config("papers").xml, 1)
        tasks = [{"data": tk.data, "predictions": [{"model_version": "b" * 64, "result": result}],
                  "annotations": [{"result": result}]} for tk in client.all_tasks(q.project_id, annotations=False)]
        t = time.perf_counter()
        for i in range(0, len(tasks), 500):
            client.import_tasks(pid_b, tasks[i:i + 500])
        dt = time.perf_counter() - t
        print(f"setup: {len(tasks)} annotated tasks imported in {dt:.1f} s")
        t = time.perf_counter()
        qb = run_queue(db, settings, "papers", project=title_b, client=client)
        dt = time.perf_counter() - t
        print(f"queue (adopt)    {n} papers: {dt:7.1f} s  {n / dt:7.0f} tasks/s  (imported {qb.imported}, "
              f"unchanged {qb.unchanged})")
        title = title_b

        t = time.perf_counter()
        p = run_pull(db, settings, project=title, client=client)
        dt = time.perf_counter() - t
        print(f"pull (new)       {n} papers: {dt:7.1f} s  {n / dt:7.0f} tasks/s  ({p.new} decisions)")
        t = time.perf_counter()
        p2 = run_pull(db, settings, project=title, client=client)
        dt = time.perf_counter() - t
        print(f"pull (rerun)     {n} papers: {dt:7.1f} s  {n / dt:7.0f} tasks/s  ({p2.unchanged} unchanged)")
        client.delete_project(q.project_id)
        client.delete_project(pid_b)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
