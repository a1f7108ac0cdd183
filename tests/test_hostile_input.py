"""Hostile input is contained: catastrophic rule patterns, PDFs cut short, redirects inwards.

Each test plays what a careless or hostile party can hand the tool: a user's rule file with
`(a+)+$`, a server that closes the connection half-way through a PDF it sent without a
Content-Length, and a publisher URL that redirects to an internal address.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import Paper, PaperLabel, PaperText, Run
from review.download import run_download
from review.http import HttpClient
from review.localserver import LocalServer, Reply
from review.rules.model import load_ruleset
from review.rules.stage import run_label
from review.runs import record_run
from review.settings import DownloadSettings, HttpSettings, LabelSettings, Settings
from tests.download_support import add_paper, assert_consistent, documents, make_pdf
from tests.rules_support import pattern

RUNAWAY = "user.runaway"
PAPER = ("We report ROUGE-1 and ROUGE-L F1 computed with pyrouge (-c 95 -r 1000 -n 2 -m) and Porter stemming. "
         + "a" * 3000 + "!")  # 3,000 "a" then a character `(a+)+$` cannot end on


def hostile_rules(tmp_path: Path) -> Path:
    """The shipped rule file plus one user rule that backtracks exponentially on a run of 'a'."""
    path = tmp_path / "hostile.toml"
    path.write_text(f"""schema = 1
name = "rouge-hostile"
extends = {json.dumps(str(pattern("rouge.toml")))}

[[rules]]
id = "{RUNAWAY}"
kind = "protocol"
label = "runaway"
patterns = ['(a+)+$']
""")
    return path


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------------- rule patterns

def test_nested_quantifiers_are_named_when_the_rule_file_loads(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="review")
    path = hostile_rules(tmp_path)
    load_ruleset(path)
    warned = [r.getMessage() for r in caplog.records if "nests repeats" in r.getMessage()]
    assert len(warned) == 1 and RUNAWAY in warned[0] and str(path) in warned[0] and "(a+)+$" in warned[0]
    caplog.clear()
    for shipped in ("rouge.toml", "rouge-precise.toml", "bleu.toml"):
        load_ruleset(pattern(shipped))
    assert not [r for r in caplog.records if "nests repeats" in r.getMessage()], "no false alarm on shipped files"


def test_label_cuts_a_runaway_rule_off_and_labels_everything_else(db, tmp_path: Path) -> None:
    texts = {"hostile": PAPER, "plain": "ROUGE-2 computed with files2rouge. Recall is reported."}
    with db.session() as s:
        for ident, content in texts.items():
            paper = Paper(ident=ident, source="local", title=ident)
            s.add(paper)
            s.flush()
            s.add(PaperText(paper_id=paper.id, content=content, chars=len(content), outcome="ok"))
    settings = Settings(label=LabelSettings(regex_timeout=0.2))
    with record_run(db, "label") as run:
        result = run_label(db, settings, rules_path=hostile_rules(tmp_path), run=run)
    assert (result.labeled, result.failed, result.computes) == (2, 0, 2)
    assert result.timed_out == {RUNAWAY: 1} and result.timed_out_papers == 1
    assert f"1 with a rule cut off by label.regex_timeout ({RUNAWAY}: 1)" in result.summary()
    with db.session() as s:
        labels = {i: pl for i, pl in s.execute(select(Paper.ident, PaperLabel).join(PaperLabel))}
        counts = s.get(Run, run.id).counts
    hostile = labels["hostile"]
    assert hostile.extra["timed_out"] == [RUNAWAY]
    assert "pyrouge" in " ".join(hostile.packages) and hostile.params and "stemming" in hostile.protocol, \
        "the other rules still labeled the paper"
    assert "timed_out" not in labels["plain"].extra and labels["plain"].packages
    assert counts["timed_out"] == 1


def test_check_names_the_rule_that_timed_out(cli, tmp_path: Path, monkeypatch) -> None:
    paper = tmp_path / "paper.txt"
    paper.write_text(PAPER)
    rules = hostile_rules(tmp_path)
    monkeypatch.setenv("REVIEW_LABEL__REGEX_TIMEOUT", "0.2")
    code, out, err = cli("check", str(paper), "--rules", str(rules), "--json")
    data = json.loads(out)
    assert data["timed_out"] == [RUNAWAY] and data["computes"] and data["packages"]
    assert "nestsrepeats" in squeezed(err) and RUNAWAY in err, "the load-time warning reaches the user"
    code, out, err = cli("check", str(paper), "--rules", str(rules))
    assert f"timed out (left out, see label.regex_timeout): {RUNAWAY}" in out
    assert RUNAWAY in squeezed(err) and "ranpastlabel.regex_timeout" in squeezed(err)


def test_a_runaway_prelim_or_anchor_is_named_too(tmp_path: Path) -> None:
    from review.rules import Engine

    path = tmp_path / "prelim.toml"
    path.write_text(f"""schema = 1
name = "rouge-prelim"
extends = {json.dumps(str(pattern("rouge.toml")))}
anchors = {{ rouge = {{ pattern = '(?:r+)+ouge$' }} }}
""")
    ruleset = load_ruleset(path)
    scan = Engine(ruleset, timeout=0.2).scan("ROUGE-1 with pyrouge and Porter stemming. " + "r" * 3000 + "!")
    assert scan.timed_out == ["[anchors.rouge]"] and scan.prelim, "the anchor ran away, the prelim did not"
    assert not any(h.kind.value == "protocol" for h in scan.hits), "near-anchor rules found no anchor"
    path.write_text(path.read_text().replace("anchors = ", "prelim = { pattern = '(?:r+)+ouge$' }\nanchors = "))
    scan = Engine(load_ruleset(path), timeout=0.2).scan("r" * 3000 + "!")
    assert scan.timed_out == ["[prelim]"] and scan.gated


# ------------------------------------------------------------------ PDFs cut short

class CloseEarly:
    """An HTTP/1.0 server that sends a PDF with no Content-Length, cut after `keep` bytes, then closes."""

    def __init__(self, body: bytes, keep: int):
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

            def do_GET(self) -> None:
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/pdf")
                self.end_headers()
                self.wfile.write(body[:keep])

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d/paper.pdf" % self._httpd.server_address[1]

    def __enter__(self) -> CloseEarly:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:  # type: ignore[no-untyped-def]
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def dl_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data",
                    http=HttpSettings(timeout=5.0, retries=2, backoff=0.01, max_backoff=0.05, per_host_rate=0),
                    download=DownloadSettings(workers=2))


def _paper_pdf() -> bytes:
    """A real typeset paper (tens of KB), as publishers serve them."""
    from review.pdfgen import sample_spec, write_paper
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.pdf"
        write_paper(path, sample_spec(seed=3, sections=4, paragraphs=4, report=True))
        return path.read_bytes()


def test_a_pdf_cut_short_without_content_length_is_truncated_not_ok(db, dl_settings: Settings) -> None:
    paper = _paper_pdf()
    small = make_pdf(4)
    padded = make_pdf(4, pad=5000)  # %%EOF more than a KiB before the end: must open to count as whole
    with CloseEarly(paper, len(paper) // 2) as half, CloseEarly(paper, len(paper)) as whole, \
            CloseEarly(padded, len(padded)) as trailing, CloseEarly(small, len(small) // 2) as tiny:
        for ident, url in (("HALF", half.url), ("WHOLE", whole.url), ("TRAILING", trailing.url), ("TINY", tiny.url)):
            add_paper(db, ident, url)
        report = run_download(db, dl_settings)
        assert half.requests == 3, "a body that may have broken off is tried again"
    docs = documents(db)
    assert (docs["HALF"].outcome, docs["HALF"].reason) == ("failed", "truncated")
    assert f"after {len(paper) // 2} bytes" in docs["HALF"].detail and "no length announced" in docs["HALF"].detail
    assert (docs["TINY"].outcome, docs["TINY"].reason) == ("failed", "truncated")
    assert docs["WHOLE"].outcome == "ok" and docs["WHOLE"].size == len(paper)
    assert docs["TRAILING"].outcome == "ok"
    assert report.counts["truncated"] == 2
    assert_consistent(db, dl_settings.data_dir)


# ------------------------------------------------------------------ redirects inwards

def _proxied_client(settings: Settings, proxy: LocalServer) -> HttpClient:
    """A client reaching `*.invalid` hosts through a loopback proxy (how the sample survey serves its PDFs)."""
    client = HttpClient(settings.http)
    client.session.trust_env = False
    client.session.proxies = {"http://publisher.invalid": proxy.url}  # only that host goes through it
    return client


def test_a_redirect_from_a_publisher_into_an_internal_address_is_refused(db, dl_settings: Settings) -> None:
    secret_answer = b"%PDF-1.4 internal-admin-console: db password is hunter2"
    with LocalServer() as proxy, LocalServer() as internal:
        internal.route("/admin", Reply(200, secret_answer, {"Content-Type": "application/pdf"}))
        proxy.route("/paper.pdf", Reply(302, b"", {"Location": internal.url + "/admin"}))
        add_paper(db, "INWARD", "http://publisher.invalid/paper.pdf")
        client = _proxied_client(dl_settings, proxy)
        try:
            report = run_download(db, dl_settings, client=client)
        finally:
            client.close()
        assert internal.requests == [], "the internal address was never asked"
        assert len(proxy.requests) == 1
    doc = documents(db)["INWARD"]
    assert (doc.outcome, doc.reason, report.counts["internal_redirect"]) == ("failed", "internal_redirect", 1)
    assert "internal" in doc.detail and "hunter2" not in (doc.detail or "") and doc.size is None
    assert_consistent(db, dl_settings.data_dir)


def test_a_local_mirror_may_redirect_inwards_when_the_setting_allows_it(db, dl_settings: Settings) -> None:
    data = make_pdf(7)
    dl_settings.http.allow_internal_redirects = True
    with LocalServer() as proxy, LocalServer() as internal:
        internal.route("/mirror/p.pdf", Reply(200, data, {"Content-Type": "application/pdf"}))
        proxy.route("/paper.pdf", Reply(302, b"", {"Location": internal.url + "/mirror/p.pdf"}))
        add_paper(db, "MIRROR", "http://publisher.invalid/paper.pdf")
        client = _proxied_client(dl_settings, proxy)
        try:
            report = run_download(db, dl_settings, client=client)
        finally:
            client.close()
    assert report.counts == {"ok": 1} and documents(db)["MIRROR"].final_url == internal.url + "/mirror/p.pdf"
