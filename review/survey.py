"""`review survey`: every stage in order, resumable, ending with the report and figures.

harvest -> [import pdfs, import texts] -> download -> extract -> label -> code link ->
code github -> code scan -> human pass (queued and reported, never waited on) -> compute -> export.

The imports run only when given (`pdfs`, `texts`): what the user already has is taken
before anything is downloaded. `review.importer.plan.plan_survey` says, without running
anything, what remains per stage and how long the downloads must take at least.

Each stage is the other areas' own library call, so the survey is exactly what running
the commands one by one does: each records its own run, and each resumes from its own
queue, so a survey stopped anywhere (Ctrl-C, crash, a dead network) continues where it
stopped when run again. A stage that fails is reported and the later stages still run on
whatever data exists. A stage whose code is not installed is reported as missing.

`run_sample_survey` runs the same pipeline offline on the sample corpus of the metric
folder (`label.metric`; its `sample` file): the anthology-format records and PDFs are
generated into the data folder (`sample`, or `sample-<metric>` for another metric than the default),
the PDFs are served by a loopback review.localserver.LocalServer (the downloader's HTTP
proxy for the sample's never-resolving host), and codebases are cloned from local bare
git repositories.
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from sqlalchemy import func, select

from review.db import migrate
from review.db.models import Codebase, PaperLabel
from review.db.session import Database
from review.errors import ReviewError
from review.log import get_logger
from review.runs import RunRecorder, record_run
from review.settings import Settings

log = get_logger("survey")

STAGES = ("harvest", "download", "extract", "label", "code link", "code github", "code scan", "human", "compute",
          "export")
# The sample's PDF URLs name a host that can never resolve (RFC 2606 `.invalid`); the
# downloader reaches it through the loopback server acting as its HTTP proxy. So the URLs,
# and with them every export, are the same on every run whatever port the server gets.
SAMPLE_PDF_BASE = "http://sample.review.invalid/pdfs"


@dataclass
class StageReport:
    name: str
    status: str  # ok | failed | skipped | missing
    summary: str
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.name, "status": self.status, "summary": self.summary, "seconds": round(self.seconds, 2)}


@dataclass
class SurveyResult:
    stages: list[StageReport] = field(default_factory=list)
    report: Path | None = None
    figures: list[Path] = field(default_factory=list)
    dataset: Path | None = None
    out_dir: Path | None = None
    database: str = ""
    sample: bool = False
    human_file: Path | None = None
    run_id: int | None = None
    expected: list[str] = field(default_factory=list)  # the sample's papers that fail on purpose

    @property
    def failed(self) -> list[str]:
        return [s.name for s in self.stages if s.status == "failed"]

    def as_dict(self) -> dict[str, Any]:
        return {"stages": [s.as_dict() for s in self.stages], "report": _str(self.report),
                "figures": [str(f) for f in self.figures], "dataset": _str(self.dataset), "out_dir": _str(self.out_dir),
                "database": self.database, "sample": self.sample, "human_file": _str(self.human_file),
                "failed": self.failed, "run_id": self.run_id, "expected_failures": self.expected}

    def summary(self) -> str:
        ok = sum(1 for s in self.stages if s.status == "ok")
        text = f"survey{' (sample)' if self.sample else ''}: {ok} of {len(self.stages)} stages ok"
        others = [f"{s.name} {s.status}" for s in self.stages if s.status != "ok"]
        text += f" ({', '.join(others)})" if others else ""
        if self.expected:
            text += f"; {', '.join(self.expected)} fail on purpose (the sample shows how failures are reported)"
        return text + (f"; report {self.report}" if self.report else "")


def _str(p: Path | None) -> str | None:
    return str(p) if p else None


def _text(summary: Any) -> str:
    value = summary() if callable(summary) else summary
    return str(value) if value is not None else ""


class _Pipeline:
    """Runs stages one by one, timing them and turning failures into reports."""

    def __init__(self, result: SurveyResult, run: RunRecorder, on_stage: Callable[[StageReport], None] | None):
        self.result, self.run, self.on_stage = result, run, on_stage

    def add(self, name: str, status: str, summary: str, seconds: float = 0.0) -> None:
        report = StageReport(name, status, summary, seconds)
        self.result.stages.append(report)
        self.run.count(f"stage_{status}")
        self.run.checkpoint()
        if status == "failed":
            log.error("survey: %s failed: %s", name, summary)
        if self.on_stage:
            self.on_stage(report)

    def stage(self, name: str, fn: Callable[[], str]) -> None:
        start = time.monotonic()
        try:
            summary = fn()
        except ImportError as exc:
            self.add(name, "missing", f"not available in this installation ({exc})", time.monotonic() - start)
        except ReviewError as exc:
            hint = f" (hint: {exc.hint})" if exc.hint else ""
            self.add(name, "failed", f"{exc}{hint}", time.monotonic() - start)
        except (OSError, RuntimeError, ValueError) as exc:
            self.add(name, "failed", f"{type(exc).__name__}: {exc}", time.monotonic() - start)
        else:
            self.add(name, "ok", summary, time.monotonic() - start)


def _with_run(db: Database, command: str, arguments: dict[str, Any], fn: Callable[[RunRecorder], Any]) -> Any:
    """Stages whose library call expects the caller to own the run (as their CLI does)."""
    with record_run(db, command, arguments) as run:
        out = fn(run)
        if run.summary is None:
            run.summary = _text(getattr(out, "summary", ""))
    return out


def _human_waiting(db: Database) -> tuple[int, int]:
    with db.session() as s:
        papers = s.scalar(select(func.count(func.distinct(PaperLabel.paper_id))).where(PaperLabel.prelim.is_(True))) or 0
        codes = s.scalar(select(func.count()).select_from(Codebase)) or 0
    return papers, codes


def run_survey(db: Database, settings: Settings, *, sources: Iterable[str] = ("acl", "dblp"), github: bool = True,
               human: str = "auto", out_dir: Path | None = None, fmt: str | None = None, time_: str | None = None,
               acl_update: bool | None = None, sample: bool = False, download_client: Any = None,
               on_stage: Callable[[StageReport], None] | None = None, pdfs: Path | None = None,
               texts: Path | None = None) -> SurveyResult:
    """Run every stage in order on `db`; see the module docstring.

    `human`: "auto" queues into Label Studio when its API key is set (and pulls what the
    reviewers did so far), else reports what awaits review; "offline" writes Label Studio
    import files next to the exports; "skip" only reports.
    """
    sources = [s for s in sources]
    result = SurveyResult(sample=sample, database=db.url.render_as_string(hide_password=True))
    args = {"sources": ",".join(sources), "github": github, "human": human, "sample": sample,
            "out": str(out_dir) if out_dir else None, "format": fmt}
    if pdfs or texts:
        args.update({"pdfs": str(pdfs) if pdfs else None, "texts": str(texts) if texts else None})
    with record_run(db, "survey", args) as run:
        result.run_id = run.id
        p = _Pipeline(result, run, on_stage)

        def harvest() -> str:
            parts = []
            for source in sources:
                if source == "acl":
                    from review.harvest.acl import default_acl_dir, harvest_acl

                    update = acl_update if acl_update is not None else not default_acl_dir(settings).exists()
                    parts.append("acl: " + _text(harvest_acl(db, settings, update=update).summary))
                elif source == "dblp":
                    from review.harvest.dblp import harvest_dblp

                    parts.append("dblp: " + _text(harvest_dblp(db, settings).summary))
                else:
                    raise ValueError(f"unknown source {source!r} (acl or dblp)")
            return "; ".join(parts) or "no sources"

        p.stage("harvest", harvest)
        _imports(db, settings, p, run.id, pdfs=pdfs, texts=texts)

        def download() -> str:
            from review.download.runner import run_download

            return _text(_with_run(db, "download", {"survey": run.id},
                                   lambda r: run_download(db, settings, run=r, client=download_client)).summary)

        p.stage("download", download)

        def extract() -> str:
            from review.extract.stage import run_extract

            return _text(_with_run(db, "extract", {"survey": run.id},
                                   lambda r: run_extract(db, settings, run=r)).summary)

        p.stage("extract", extract)

        def label() -> str:
            from review.rules.stage import resolve_rules, run_label

            ruleset = resolve_rules(settings)
            out = _with_run(db, "label", {"rules": str(ruleset.path), "survey": run.id},
                            lambda r: run_label(db, settings, ruleset=ruleset, run=r))
            return _text(out.summary)

        p.stage("label", label)

        def code_link() -> str:
            from review.codebases.link import run_link

            return _text(run_link(db, settings).summary)

        p.stage("code link", code_link)

        if not github:
            p.add("code github", "skipped", "offline: GitHub look-ups skipped (whether code mentions the metric comes "
                  "from the scan)")
        else:
            from_env = os.environ.get(settings.code.github_token_env)
            if not from_env:
                p.add("code github", "skipped", f"no GitHub token in ${settings.code.github_token_env}: look-ups "
                      "skipped (set it and rerun `review survey` or `review code github`)")
            else:
                def code_github() -> str:
                    from review.codebases.github import run_github

                    return _text(run_github(db, settings).summary)

                p.stage("code github", code_github)

        def code_scan() -> str:
            from review.codebases.runner import run_scan

            return _text(run_scan(db, settings).summary)

        p.stage("code scan", code_scan)

        def human_pass() -> str:
            papers, codes = _human_waiting(db)
            waiting = f"{papers} papers and {codes} codebases await human review"
            key_set = bool(os.environ.get(settings.label_studio.api_key_env))
            mode = human if human != "auto" else ("label_studio" if key_set else "report")
            if mode == "offline":
                from review.labelstudio.queue import run_queue

                folder = (out_dir or settings.resolve(settings.exports_dir)) / "human"
                folder.mkdir(parents=True, exist_ok=True)
                for kind in ("papers", "code"):
                    run_queue(db, settings, kind, offline=folder / f"{kind}.json")
                result.human_file = folder / "papers.json"
                db_opt = f"--db {result.database} " if sample else ""
                return (f"{waiting}; Label Studio import files written to {folder}, each with its labeling "
                        f"configuration (*.label-config.xml; set it as the project's, import, review, export, "
                        f"then `review {db_opt}pull --from-file EXPORT`); not waited on")
            if mode == "label_studio":
                from review.labelstudio.pull import run_pull
                from review.labelstudio.queue import run_queue

                queued = [_text(run_queue(db, settings, kind).summary) for kind in ("papers", "code")]
                pulled = _text(run_pull(db, settings).summary)
                return f"{waiting}; " + "; ".join(queued) + f"; {pulled}; not waited on"
            return (f"{waiting}; no Label Studio key in ${settings.label_studio.api_key_env}: run `review queue papers` "
                    "and `review queue code` when it is available (automated labels are used until then)")

        p.stage("human", human_pass)

        def compute() -> str:
            from review.compute import run_compute

            return run_compute(db, settings).summary()

        p.stage("compute", compute)

        def export() -> str:
            from review.export import run_export

            out = run_export(db, settings, out_dir=out_dir, fmt=fmt, time=time_)
            result.report, result.figures, result.dataset, result.out_dir = out.report, out.figures, out.dataset, out.out_dir
            return out.summary()

        p.stage("export", export)
        run.summary = result.summary()
    return result


def sample_folder(settings: Settings) -> str:
    """The sample survey's folder name: `sample` for the default metric, `sample-<name>` for
    another, so each metric's sample has its own database and exports."""
    from review.metric import default_metric, metric_of

    metric = metric_of(settings)
    return "sample" if metric.folder == default_metric().folder else f"sample-{metric.id}"


def sample_settings(settings: Settings, *, keep_database: bool = False) -> Settings:
    """The settings of the sample survey: its own data folder, database and exports folder."""
    s = settings.model_copy(deep=True)
    folder = sample_folder(settings)
    s.data_dir = settings.resolve(settings.data_dir) / folder
    s.exports_dir = settings.resolve(settings.exports_dir) / folder
    if not keep_database:
        s.database_url = ""
    s.http.per_host_rate = 0.0  # our own loopback server: no politeness delay needed
    s.http.retries = 1
    s.harvest.venues_include, s.harvest.venues_exclude = [], []
    s.code.pwc_links = ""
    s.config_path = settings.config_path
    return s


def _imports(db: Database, settings: Settings, p: _Pipeline, survey_id: int, *, pdfs: Path | None,
             texts: Path | None) -> None:
    """The import stages: PDFs and texts the user has, before anything is downloaded."""
    if pdfs is not None:
        from review.importer.pdfs import run_import_pdfs

        p.stage("import pdfs", lambda: _text(_with_run(
            db, "import pdfs", {"path": str(pdfs), "survey": survey_id},
            lambda r: run_import_pdfs(db, settings, pdfs, run=r)).summary))
    if texts is not None:
        from review.importer.texts import run_import_texts

        p.stage("import texts", lambda: _text(_with_run(
            db, "import texts", {"path": str(texts), "survey": survey_id},
            lambda r: run_import_texts(db, settings, texts, run=r)).summary))


def run_sample_survey(settings: Settings, *, keep_database: bool = False, out_dir: Path | None = None,
                      fmt: str | None = None, time_: str | None = None,
                      on_stage: Callable[[StageReport], None] | None = None) -> SurveyResult:
    """The whole pipeline offline on the metric's sample corpus (see the module docstring)."""
    from review.localserver import LocalServer, Reply, Request
    from review.metric import metric_of
    from review.sample import build_sample, metric_sample

    sample = metric_sample(metric_of(settings))  # a metric without a sample fails here, before anything is written
    s = sample_settings(settings, keep_database=keep_database)
    data_dir = Path(s.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    from review.http import HttpClient

    with LocalServer() as server:
        corpus = build_sample(data_dir / "corpus", SAMPLE_PDF_BASE, sample)

        def serve(req: Request) -> Reply:
            name = req.path.rsplit("/", 1)[-1]
            path = corpus.pdfs / name
            if "/" in name or not name.endswith(".pdf") or not path.is_file():
                return Reply(404, b"not found", {"Content-Type": "text/plain"})
            return Reply(200, path.read_bytes(), {"Content-Type": "application/pdf"})

        server.route("/pdfs/", serve, prefix=True)
        s.harvest.acl_data_dir = str(corpus.anthology)
        s.code.git_base_url = corpus.git.resolve().as_uri()
        client = HttpClient(s.http)
        client.session.trust_env = False  # no proxy from the environment: only ours
        client.session.proxies = {"http": server.url}
        db = Database(s.database)
        expected = ExpectedInSample({p.ident: EXPECTED[p.pdf] for p in sample.papers if p.pdf in EXPECTED})
        try:
            migrate.ensure_current(db)
            with expected.installed():
                result = run_survey(db, s, sources=("acl",), github=False, human="offline", out_dir=out_dir, fmt=fmt,
                                    time_=time_, acl_update=False, sample=True, download_client=client,
                                    on_stage=on_stage)
            result.expected = sorted(expected.expected)
            return result
        finally:
            db.dispose()
            client.close()


# What the sample's failures on purpose are there for (`pdf = "missing" | "broken"` in its sample file).
EXPECTED = {
    "missing": "expected: the sample's server has no PDF for this paper, to show how a failed download is reported",
    "broken": "expected: the sample serves this PDF corrupt on purpose, to show how a failed extraction is reported",
}


class ExpectedInSample(logging.Filter):
    """Marks the log lines about the sample's broken-on-purpose papers as expected (and
    INFO), so a first run does not read like a failure; every other line is untouched."""

    def __init__(self, expected: dict[str, str]):
        super().__init__()
        self.expected = expected

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not self.expected:
            return True
        message = record.getMessage()
        for ident, why in self.expected.items():
            if ident in message:
                record.msg, record.args = f"{message} ({why})", ()
                record.levelno, record.levelname = logging.INFO, "INFO"
                break
        return True

    @contextmanager
    def installed(self) -> Iterator[None]:
        from review.log import LOGGER_NAME

        handlers = list(logging.getLogger(LOGGER_NAME).handlers)
        for h in handlers:
            h.addFilter(self)
        try:
            yield
        finally:
            for h in handlers:
                h.removeFilter(self)
