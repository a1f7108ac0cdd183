"""`review queue`: put automated labels in front of reviewers, once.

Creates or reuses the Label Studio project, then reconciles: the project's own task list
(by each task's `ref`) is the truth, so a rerun, even after a crash between import and
commit, never imports an item twice. A task whose prediction came from another rule-file
version gets its prediction replaced; tasks already annotated keep their annotations
(predictions and annotations are separate in Label Studio). A rerun never changes the
project's reviewers per task unless `overlap` is given. `--select disputed` builds
adjudication tasks (`review.labelstudio.adjudication`). `--offline FILE` writes the same
tasks as Label Studio import JSON instead.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import select

from review.db.models import HumanProject, HumanTask, RuleSet
from review.db.session import Database
from review.errors import ConfigError, InputFileError, ReviewError, ServiceError
from review.labelstudio.adjudication import adjudication_config, adjudication_task
from review.labelstudio.client import LabelStudioClient
from review.labelstudio.projects import new_origin, reconcile, this_server
from review.estimate.design import SAMPLED, Draw, default_order, make_draw, record
from review.labelstudio.select import choose, order
from review.labelstudio.tasks import KINDS, Candidate, build_task, candidates, label_config, ref_of
from review.resolution import disputes
from review.log import get_logger
from review.metric import metric_of
from review.progress import progress
from review.runs import record_run
from review.settings import Settings

log = get_logger("queue")

TITLE_WORDING = {"papers": "project_papers", "code": "project_code"}  # the metric's wording keys of the project titles
IMPORT_BATCH = 250


@dataclass
class QueueResult:
    kind: str
    project: str = ""
    project_id: int | None = None
    origin: str = ""
    selected: int = 0
    imported: int = 0
    updated: int = 0  # predictions replaced after a rule change
    unchanged: int = 0
    overlap: int = 1
    offline_file: str | None = None
    config_file: str | None = None  # the labeling configuration written next to the offline tasks
    dry_run: bool = False
    design: int | None = None  # the sampling design recorded for --select sample|stratified

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if self.offline_file:
            return (f"queue {self.kind}: wrote {self.selected} tasks to {self.offline_file} and the labeling "
                    f"configuration to {config_path(Path(self.offline_file))}")
        verb = "would import" if self.dry_run else "imported"
        return (f"queue {self.kind}: {verb} {self.imported}, updated {self.updated} predictions, "
                f"{self.unchanged} unchanged of {self.selected} selected into '{self.project}' "
                f"(project {self.project_id}, {self.overlap} reviewer(s) per task)")


def default_rule_set(db: Database, settings: Settings) -> str | None:
    """The sha256 of the configured rule file (label.rules) when papers were labelled with
    it, so queue and compute read the same labels; None means the newest per paper."""
    try:
        from review.rules.stage import resolve_rules

        sha = resolve_rules(settings).sha256
    except (ImportError, ReviewError, OSError):
        return None
    with db.session() as s:
        return sha if s.scalar(select(RuleSet.id).where(RuleSet.sha256 == sha)) is not None else None


def _select(db: Database, kind: str, select_: str, n: int | None, seed: int, by: str, order_: str,
            rule_set: str | None, limit: int | None, only: set[int] | None = None) -> tuple[list[Candidate], Draw | None]:
    """The chosen candidates in order, and for a sample the draw that made them."""
    with db.session() as s:
        cands = candidates(s, kind, rule_set)
        if only is not None:
            cands = [c for c in cands if c.item_id in only]
        chosen = order(choose(s, cands, select_, n=n, seed=seed, by=by), order_, seed=seed)
    cut = None
    if limit and limit < len(chosen):
        chosen = chosen[:limit]
        if order_ != "random":
            cut = f"cut to --limit {limit} after ordering by {order_}, not at random"
    draw = None
    if select_ in SAMPLED:
        draw = make_draw(kind, select_, seed, n or 0, by, ((c.item_id, getattr(c, by, None)) for c in cands),
                         (c.item_id for c in chosen), cut, order_)
    return chosen, draw


def write_offline(db: Database, kind: str, chosen: list[Candidate], path: Path, adjudication: bool = False,
                  settings: Settings | None = None) -> int:
    """The tasks as Label Studio import JSON (a list of {data, predictions} objects), or as
    a spreadsheet when `path` ends in .csv (`review.labelstudio.spreadsheet`); and next to
    them the rendered labeling configuration (`config_path`), which the Label Studio project
    the JSON is imported into needs and which nobody should have to rebuild by hand."""
    from review.labelstudio.spreadsheet import write_tasks_csv

    build = _builder(db, kind, adjudication, settings)
    tasks = [build(c) for c in chosen]
    config = adjudication_config(kind, settings) if adjudication else label_config(kind, settings)
    if path.suffix.lower() == ".csv":
        _write_atomic(path, lambda tmp: write_tasks_csv(tasks, config, tmp))
    else:
        _write_atomic(path, lambda tmp: tmp.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8"))
    _write_atomic(config_path(path), lambda tmp: tmp.write_text(config.xml, encoding="utf-8"))
    return len(tasks)


def config_path(tasks_file: Path) -> Path:
    """Where `--offline FILE` puts the labeling configuration: FILE's stem + .label-config.xml."""
    return tasks_file.with_name(tasks_file.stem + ".label-config.xml")


def _write_atomic(path: Path, write: Callable[[Path], Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".part")
        write(tmp)
        tmp.replace(path)
    except OSError as exc:
        raise InputFileError(f"cannot write {path.name}: {exc.strerror}", item=str(path)) from None


def run_queue(db: Database, settings: Settings, kind: str, *, project: str | None = None, select_: str = "all",
              n: int | None = None, seed: int = 0, by: str = "year", order_: str | None = None,
              overlap: int | None = None, rule_set: str | None = None, limit: int | None = None,
              offline: Path | None = None, dry_run: bool = False,
              client: LabelStudioClient | None = None, only: set[int] | None = None) -> QueueResult:
    """Queue `kind` ('papers' or 'code') items for review; see the module docstring.

    `overlap` (reviewers per task) is set on a new project (default label_studio.overlap,
    1 for adjudication) and changed on an existing one only when given. `only` narrows the
    candidates to these item ids (`review plan --queue`: the codebases of the drawn papers).
    Without `order_`, a drawn sample is queued in random order (`design.default_order`).
    """
    order_ = order_ or default_order(select_)
    if kind not in KINDS:
        raise ConfigError(f"unknown queue {kind!r}", hint="review queue papers|code")
    adjudication = select_ == "disputed"
    metric = metric_of(settings)
    title = project or metric.text(TITLE_WORDING[kind]) + (" (adjudication)" if adjudication else "")
    args = {"kind": kind, "project": title, "select": select_, "n": n, "seed": seed, "by": by, "order": order_,
            "overlap": overlap, "rule_set": rule_set, "limit": limit, "offline": str(offline) if offline else None,
            "dry_run": dry_run}
    default = 1 if adjudication else settings.label_studio.overlap
    result = QueueResult(kind=kind, project=title, overlap=overlap or default, dry_run=dry_run)
    with record_run(db, f"queue {kind}", args) as run:
        run.signature.update(metric.signature())
        if kind == "papers" and not rule_set:
            rule_set = default_rule_set(db, settings)
        chosen, draw = _select(db, kind, select_, n, seed, by, order_, rule_set, limit, only)
        result.selected = len(chosen)
        if draw is not None and not dry_run:
            with db.session() as s:
                result.design = record(s, draw, rule_set=rule_set, target=str(offline) if offline else title,
                                       run_id=run.id)
            run.count("sampling_design", result.design)  # its id: the run drew a recorded sample
        if offline is not None:
            result.offline_file, result.config_file = str(offline), str(config_path(offline))
            if not dry_run:
                write_offline(db, kind, chosen, offline, adjudication, settings)
            run.count("exported", len(chosen))
            run.summary = result.summary()
            return result
        client = client or LabelStudioClient.from_settings(settings)
        client.whoami()  # a wrong key or a dead server fails here, before anything is written
        _sync(db, client, kind, title, chosen, result, overlap, default, adjudication, dry_run, run.id, settings)
        for key in ("imported", "updated", "unchanged"):
            run.count(key, getattr(result, key))
        run.rules_sha256 = chosen[0].model_version if chosen and kind == "papers" and not adjudication else None
        run.summary = result.summary()
    return result


def _project(db: Database, client: LabelStudioClient, kind: str, title: str, overlap: int | None, default: int,
             adjudication: bool, dry_run: bool, run_id: int,
             settings: Settings | None = None) -> tuple[int | None, int | None, int]:
    """(Label Studio project id, HumanProject id, reviewers per task), creating either when
    missing. An existing project keeps its reviewers per task unless `overlap` is given."""
    config = adjudication_config(kind, settings) if adjudication else label_config(kind, settings)
    server = this_server(client)
    titled = sorted(pid for pid, p in server.remote.items() if p["title"] == title)
    pid = titled[0] if titled else None
    if pid is None:
        if dry_run:
            return None, None, overlap or default
        purpose = "adjudication of disputed questions" if adjudication else "verification of automated labels"
        pid = client.create_project(title, config.xml, overlap or default, description=f"review queue {kind}: {purpose}")
        info = client.get_project(pid)
        server.remote[pid] = {"title": title, "created_at": info["created_at"]}
    else:
        info = client.get_project(pid)
        if not dry_run:
            if overlap is not None and info.get("maximum_annotations") != overlap:
                client.set_overlap(pid, overlap)
                info["maximum_annotations"] = overlap
            _refresh_config(client, pid, info, config.xml)
    with db.session() as s:
        hp = next((h for h in reconcile(s, server, run_id).live if h.project_id == pid), None)
        if hp is None and not dry_run:
            hp = HumanProject(origin=new_origin(s, client, pid, info.get("created_at")), url=server.url,
                              server_id=server.identity, project_id=pid, remote_created=info.get("created_at"),
                              title=title, kind=kind, purpose="adjudication" if adjudication else "review")
            s.add(hp)
            s.flush()
        hp_id = hp.id if hp else None
        if dry_run:
            s.rollback()  # what reconcile noticed is written by a real run
        return pid, hp_id, int(info.get("maximum_annotations") or overlap or default)


def _refresh_config(client: LabelStudioClient, pid: int, info: dict[str, Any], xml: str) -> None:
    """Give an existing project the current form (e.g. a new "can't tell" choice)."""
    if info.get("label_config") and info["label_config"].strip() != xml.strip():
        try:
            client.set_label_config(pid, xml)
        except ServiceError as exc:  # Label Studio refuses a form its annotations no longer fit
            log.warning("project %s keeps its labeling configuration: %s", pid, exc.message)


def _sync(db: Database, client: LabelStudioClient, kind: str, title: str, chosen: list[Candidate],
          result: QueueResult, overlap: int | None, default: int, adjudication: bool, dry_run: bool,
          run_id: int, settings: Settings | None = None) -> None:
    pid, hp_id, result.overlap = _project(db, client, kind, title, overlap, default, adjudication, dry_run, run_id,
                                          settings)
    result.project_id = pid
    with db.session() as s:
        hp = s.get(HumanProject, hp_id) if hp_id else None
        result.origin = hp.origin if hp else (client.origin(pid) if pid else "")
    remote: dict[str, Any] = {}
    if pid is not None:
        for t in client.all_tasks(pid, annotations=False):
            if t.ref:
                remote.setdefault(t.ref, t)
    with db.session() as s:
        known = {t.item_id: t for t in s.scalars(select(HumanTask).where(HumanTask.project_ref == hp_id))} if hp_id else {}
    build = _builder(db, kind, adjudication, settings)
    pending: list[tuple[Candidate, dict[str, Any]]] = []

    def flush() -> None:
        if not pending:
            return
        ids = client.import_tasks(pid, [task for _, task in pending])
        with db.session() as s:
            for (c, task), task_id in zip(pending, ids):
                s.add(HumanTask(project_ref=hp_id, kind=kind, item_id=c.item_id, task_id=task_id,
                                model_version=task["predictions"][0]["model_version"], run_id=run_id))
        result.imported += len(pending)
        pending.clear()

    with progress(len(chosen), f"queue {kind}") as bar:
        for c in chosen:
            t = remote.get(ref_of(kind, c.item_id))
            task = build(c) if adjudication or (t is None and not dry_run) else None
            version = task["predictions"][0]["model_version"] if task else c.model_version
            if t is None:
                if dry_run:
                    result.imported += 1
                else:
                    pending.append((c, task))  # type: ignore[arg-type]
                    if len(pending) >= IMPORT_BATCH:
                        flush()
            else:
                if {p.get("model_version") for p in t.predictions} != {version}:
                    result.updated += 1
                    if not dry_run:
                        task = task or build(c)
                        if adjudication:  # the dispute itself changed: show the current one
                            client.update_task_data(t.id, task["data"], project_id=pid)
                        client.replace_predictions(t.id, task["predictions"][0]["result"], version,
                                                   old=t.predictions, project_id=pid)
                else:
                    result.unchanged += 1
                if not dry_run:
                    _remember(db, hp_id, kind, c, t.id, version, known, run_id)
            bar.advance()
        if not dry_run:
            flush()


def _builder(db: Database, kind: str, adjudication: bool,
             settings: Settings | None = None) -> Callable[[Candidate], dict[str, Any]]:
    """Builds one item's task: the review task, or the adjudication task with its dispute."""
    config = adjudication_config(kind, settings) if adjudication else label_config(kind, settings)
    found: dict[int, Any] = {}
    if adjudication:
        with db.session() as s:
            found = disputes(s, kind)
    pdf_root = settings.resolve(settings.data_dir) if settings is not None else None  # links to the local PDFs

    def build(c: Candidate) -> dict[str, Any]:
        with db.session() as s:
            if adjudication:
                return adjudication_task(s, c, config, found.get(c.item_id, {}), pdf_root)
            return build_task(s, c, config, pdf_root)
    return build


def _remember(db: Database, hp_id: int | None, kind: str, c: Candidate, task_id: int, version: str,
              known: dict[int, HumanTask], run_id: int) -> None:
    """Keep the item -> task mapping current (also heals a mapping lost in a crash)."""
    row = known.get(c.item_id)
    if row is not None and row.task_id == task_id and row.model_version == version:
        return
    with db.session() as s:
        existing = s.scalar(select(HumanTask).where(HumanTask.project_ref == hp_id, HumanTask.item_id == c.item_id))
        if existing is None:
            s.add(HumanTask(project_ref=hp_id, kind=kind, item_id=c.item_id, task_id=task_id,
                            model_version=version, run_id=run_id))
        else:
            existing.task_id, existing.model_version, existing.run_id = task_id, version, run_id
