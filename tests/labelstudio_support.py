"""A real Label Studio for the tests, and reviewer accounts that act through its API.

`LABEL_STUDIO_TEST_URL` / `LABEL_STUDIO_TEST_TOKEN` (set by .ci/run) name a running server.
Without them the session starts one from the cached venv (`LABEL_STUDIO_VENV`, default
/root/.cache/review-ls/venv: `python3 -m venv DIR && DIR/bin/pip install label-studio==1.23.2`)
with a throwaway data directory, waits for /health and stops it afterwards. With neither
the tests skip with that reason, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import requests

from review.labelstudio.client import LabelStudioClient

URL_ENV, TOKEN_ENV = "LABEL_STUDIO_TEST_URL", "LABEL_STUDIO_TEST_TOKEN"
VENV = Path(os.environ.get("LABEL_STUDIO_VENV", "/root/.cache/review-ls/venv"))
START_TIMEOUT = 240.0


@dataclass
class Server:
    url: str
    token: str

    def client(self, token: str | None = None) -> LabelStudioClient:
        return LabelStudioClient(self.url, token or self.token)


@dataclass
class Reviewer:
    email: str
    token: str
    client: LabelStudioClient


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"label-studio exited with {proc.returncode}:\n{tail}")
        try:
            if requests.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(1.0)
    raise RuntimeError(f"Label Studio at {url} did not answer /health within {timeout:.0f} s")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"Label Studio tests must run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def ls_server() -> Iterator[Server]:
    """A running Label Studio: the one CI started, or one started here for the session."""
    url, token = os.environ.get(URL_ENV), os.environ.get(TOKEN_ENV)
    if url and token:
        yield Server(url.rstrip("/"), token)
        return
    exe = VENV / "bin" / "label-studio"
    if not exe.exists():
        _unavailable(f"no Label Studio: set {URL_ENV}/{TOKEN_ENV}, or install it in {VENV} "
                     f"(python3 -m venv {VENV} && {VENV}/bin/pip install label-studio==1.23.2)")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    token = secrets.token_hex(20)
    data_dir = Path(tempfile.mkdtemp(prefix="review-ls-"))
    log = data_dir / "server.log"
    env = dict(os.environ, LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="false", DJANGO_DEBUG="false")
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            [str(exe), "start", "--no-browser", "--host", "127.0.0.1", "--internal-host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(data_dir / "data"), "--username", "admin@example.com",
             "--password", secrets.token_hex(8), "--user-token", token, "--enable-legacy-api-token"],
            stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        try:
            wait_healthy(url, START_TIMEOUT, proc, log)
        except RuntimeError as exc:
            _unavailable(str(exc))
        yield Server(url, token)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


def sign_up(server: Server, email: str, password: str | None = None) -> Reviewer:
    """Create a reviewer account the way a person does (the sign-up page) and get its token."""
    password = password or secrets.token_hex(8)
    s = requests.Session()
    s.get(f"{server.url}/user/signup/", timeout=30).raise_for_status()
    r = s.post(f"{server.url}/user/signup/", timeout=30, allow_redirects=False,
               data={"email": email, "password": password, "csrfmiddlewaretoken": s.cookies.get("csrftoken", "")},
               headers={"Referer": f"{server.url}/user/signup/"})
    assert r.status_code == 302, f"sign-up of {email} failed: HTTP {r.status_code}"
    token = s.get(f"{server.url}/api/current-user/token", timeout=30).json()["token"]
    return Reviewer(email, token, server.client(token))


@pytest.fixture(scope="session")
def reviewers(ls_server: Server) -> list[Reviewer]:
    """Three reviewer accounts, unique to this test session."""
    tag = uuid.uuid4().hex[:8]
    return [sign_up(ls_server, f"reviewer{i}-{tag}@example.org") for i in (1, 2, 3)]


# --- rows other stages would write (inserted directly: those stages are built elsewhere)

def seed_papers(db, n: int, *, sha: str = "a" * 64, computes=lambda i: True, start: int = 0) -> list[int]:  # type: ignore[no-untyped-def]
    """`n` prelim papers with labels and findings under the rule file `sha`; their ids."""
    from sqlalchemy import select

    from review.db.models import Finding, Paper, PaperLabel, RuleSet

    ids = []
    with db.session() as s:
        rs = s.scalar(select(RuleSet).where(RuleSet.sha256 == sha))
        if rs is None:
            rs = RuleSet(name="rouge", metric="rouge", version="1", sha256=sha, path="patterns/rouge/rouge.toml", content="#")
            s.add(rs)
            s.flush()
        for i in range(start, start + n):
            p = Paper(ident=f"2020.test-{i}", source="acl", title=f"Paper {i}", authors=["A. Author", "B. Author"],
                      venue="acl" if i % 2 else "emnlp", year=2018 + i % 3, pdf_url=f"https://example.org/{i}.pdf",
                      url=f"https://example.org/{i}")
            s.add(p)
            s.flush()
            s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, prelim=True, computes=computes(i),
                             params=[" -n 2 -m"] if i % 3 == 0 else [], protocol=["stemming"],
                             variants=["recall", "f-score"], packages=["ROUGE-1.5.5", "weird/unknown"]))
            for k in range(i % 4 + 1):
                s.add(Finding(paper_id=p.id, rule_set_id=rs.id, rule_id="rouge155", kind="package",
                              label="ROUGE-1.5.5", start=10 * k, end=10 * k + 9, match="ROUGE-1.5.5",
                              snippet=f"we use ROUGE-1.5.5 with stemming (paper {i}, match {k})"))
            ids.append(p.id)
    return ids


def relabel(db, paper_ids: list[int], sha: str) -> None:  # type: ignore[no-untyped-def]
    """What `review label` does after a rule change: labels under a new rule set."""
    from sqlalchemy import select

    from review.db.models import PaperLabel, RuleSet

    with db.session() as s:
        rs = s.scalar(select(RuleSet).where(RuleSet.sha256 == sha))
        if rs is None:
            rs = RuleSet(name="rouge", metric="rouge", version="2", sha256=sha, path="patterns/rouge/rouge.toml", content="##")
            s.add(rs)
            s.flush()
        for pid in paper_ids:
            s.add(PaperLabel(paper_id=pid, rule_set_id=rs.id, prelim=True, computes=False, params=[],
                             protocol=[], variants=["precision"], packages=["GL/rougescore"]))


def choices(name: str, *values: str) -> dict:
    return {"from_name": name, "to_name": "evidence", "type": "choices", "value": {"choices": list(values)}}


def text(name: str, *lines: str) -> dict:
    return {"from_name": name, "to_name": "evidence", "type": "textarea", "value": {"text": list(lines)}}


def seed_code(db, paper_ids: list[int] | None = None) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Two scanned codebases (on the first paper unless named): one whose repository is gone
    (predicted C0 = no), one with a package, an anti-feature and the scan's C2 verdict "no";
    their ids (gone, alive)."""
    from sqlalchemy import select

    from review.db.models import Codebase, CodeFinding, Paper

    with db.session() as s:
        pid = (paper_ids or [s.scalar(select(Paper.id).order_by(Paper.id))])[0]
        made = []
        for n, (status, packages, anti) in enumerate((("deleted", [], []),
                                                      ("exists", ["GL/rougescore"], ["several packages"]))):
            cb = Codebase(paper_id=pid, url=f"https://github.com/o/r{pid}-{n}", host="github.com", owner="o",
                          name=f"r{pid}-{n}", lookup_status=status, code_metric_prelim=True, scan_outcome="ok",
                          scan_commit="abc123", packages=packages, anti_features=anti,
                          eval_reproducible=False if packages else None)
            s.add(cb)
            s.flush()
            s.add(CodeFinding(codebase_id=cb.id, kind="package", source="import", label="GL/rougescore",
                              file="eval.py", line=3, text="from rouge_score import rouge_scorer",
                              rules_sha256="c" * 64))
            made.append(cb.id)
    return made[0], made[1]
