"""`review pull`: reviewers' annotations into human decisions, resolved and measured.

Reads every task of every project queued on this server (the server found by what it
is, see `review.labelstudio.projects`) page by page (committing each page, so an
interrupted pull keeps what it read and a rerun picks up the rest without duplicating),
notices updated and cancelled annotations, and marks deletions only after a complete
listing (a half-finished pull never mistakes unread annotations for deleted ones). A
project deleted in Label Studio is marked gone and the others are read; the run is then
recorded as failed (`PullIncomplete`), and later pulls skip the gone project. Then
recomputes the resolutions and the agreement per question, and writes the agreement to
`<exports_dir>/human_agreement.json`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import func, select

from review.db.base import utcnow
from review.db.models import HumanProject, HumanResolution, HumanTask
from review.db.session import Database
from review.errors import ServiceError
from review.labelstudio.agreement import agreement_report
from review.labelstudio.client import LabelStudioClient, ProjectNotFound
from review.labelstudio.decisions import ingest, mark_missing_deleted
from review.labelstudio.projects import elsewhere, reconcile, this_server
from review.labelstudio.shapes import Checked
from review.labelstudio.tasks import label_config, parse_ref
from review.resolution import resolve_all
from review.log import get_logger
from review.progress import progress
from review.runs import record_run
from review.settings import Settings

log = get_logger("pull")
AGREEMENT_FILE = "human_agreement.json"


@dataclass
class PullResult:
    projects: int = 0
    tasks: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    withdrawn: int = 0  # questions no longer answered, or skipped annotations
    deleted: int = 0  # annotations gone from their origin
    malformed: int = 0  # tasks, annotations or result items of a wrong shape, named in the log and left out
    failed_projects: list[str] = field(default_factory=list)
    gone_projects: list[str] = field(default_factory=list)  # deleted in Label Studio before (skipped)
    resolutions: dict[str, int] = field(default_factory=dict)
    to_adjudicate: int = 0  # questions waiting for an adjudicator (ties, "can't tell")
    agreement: list[dict[str, Any]] = field(default_factory=list)
    agreement_file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def add(self, counts: Counter[str]) -> None:
        for key in ("new", "updated", "unchanged", "withdrawn"):
            setattr(self, key, getattr(self, key) + counts.get(key, 0))

    def summary(self) -> str:
        failed = f"; {len(self.failed_projects)} project(s) failed" if self.failed_projects else ""
        gone = f"; {len(self.gone_projects)} gone project(s) skipped" if self.gone_projects else ""
        gone += f"; {self.malformed} malformed part(s) left out" if self.malformed else ""
        return (f"pull: {self.new} new, {self.updated} updated, {self.withdrawn + self.deleted} withdrawn/deleted "
                f"decisions from {self.tasks} tasks in {self.projects} project(s); {self.to_adjudicate} question(s) "
                f"to adjudicate{failed}{gone}")


class PullIncomplete(ServiceError):
    """Something could not be read (a project deleted, a server error): everything else
    was pulled and resolved, and the run is recorded as failed. Carries the result."""

    def __init__(self, result: PullResult):
        super().__init__(f"{len(result.failed_projects)} project(s) could not be pulled: "
                         + "; ".join(result.failed_projects),
                         hint="decisions already pulled are kept; the other projects were pulled")
        self.result = result


def finish(db: Database, settings: Settings, result: PullResult, run_id: int | None) -> None:
    """Resolve, measure agreement and export it (shared by pull and file import)."""
    with db.session() as s:
        result.resolutions = resolve_all(s, run_id)
        result.to_adjudicate = s.scalar(select(func.count()).select_from(HumanResolution)
                                        .where(HumanResolution.needs_adjudication.is_(True))) or 0
    with db.session() as s:
        result.agreement = agreement_report(s)
    out = settings.resolve(settings.exports_dir) / AGREEMENT_FILE
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"agreement": result.agreement, "resolutions": result.resolutions},
                                  indent=2, default=str), encoding="utf-8")
        result.agreement_file = str(out)
    except OSError as exc:
        log.warning("could not write %s: %s", out, exc.strerror)


def _pull_project(db: Database, client: LabelStudioClient, hp: HumanProject, users: dict[int, str],
                  result: PullResult, run_id: int, page_size: int, on_page: Callable[[int], None] | None) -> None:
    config = label_config(hp.kind)
    with db.session() as s:
        mapping = {t.task_id: t.item_id for t in s.scalars(select(HumanTask).where(HumanTask.project_ref == hp.id))}
    seen: set[str] = set()
    checked = Checked()
    page = 1
    with progress(len(mapping) or None, f"pull {hp.title}") as bar:
        while True:
            tasks, more = client.tasks_page(hp.project_id, page, page_size, checked=checked)
            counts: Counter[str] = Counter()
            with db.session() as s:
                for t in tasks:
                    item = mapping.get(t.id)
                    parsed = parse_ref(t.ref)
                    if item is None and parsed and parsed[0] == hp.kind:
                        item = parsed[1]
                    if item is None:
                        log.warning("%s: task %s has no review ref; skipped", hp.origin, t.id)
                        counts["skipped"] += 1
                        continue
                    ingest(s, origin=hp.origin, kind=hp.kind, item_id=item, task_ref=str(t.id),
                           annotations=t.annotations, users=users, config=config, seen=seen, counts=counts,
                           run_id=run_id, partial=checked.partial)
            result.add(counts)
            result.tasks += len(tasks)
            bar.advance(len(tasks))
            if on_page is not None:
                on_page(page)
            if not more or not tasks:
                break
            page += 1
    result.malformed += len(checked.problems)
    with db.session() as s:
        if checked.complete:  # a task or annotation that could not be read is not known to be gone
            result.deleted += mark_missing_deleted(s, hp.origin, seen | checked.unread, run_id)
        else:
            log.warning("%s: %d malformed part(s) left out; no decision is marked deleted this time",
                        hp.origin, len(checked.problems))
        row = s.get(HumanProject, hp.id)
        if row is not None:
            row.last_pulled_at = utcnow()


def run_pull(db: Database, settings: Settings, *, project: str | None = None,
             client: LabelStudioClient | None = None, page_size: int | None = None,
             on_page: Callable[[int], None] | None = None) -> PullResult:
    """Pull every project queued on this Label Studio server (or the one titled `project`).

    Raises `PullIncomplete` (after pulling everything else) when a project could not be
    read. `on_page(n)` is called after page n is committed (progress hooks; tests
    interrupt there).
    """
    result = PullResult()
    page_size = page_size or settings.label_studio.page_size
    with record_run(db, "pull", {"project": project, "page_size": page_size}) as run:
        client = client or LabelStudioClient.from_settings(settings)
        client.whoami()
        server = this_server(client)
        with db.session() as s:
            found = reconcile(s, server, run.id)
            others = elsewhere(s, server) if not found.live and not found.gone else []
        projects = [hp for hp in found.live if not project or hp.title == project]
        result.failed_projects += found.gone
        result.gone_projects = found.already_gone
        if project and not projects and not found.gone:
            raise ServiceError(f"no queued project titled {project!r} on this server", item=client.url,
                               hint="run `review queue` first, or check --project")
        if others:
            log.warning("no project queued on %s; queued projects live on: %s", server.url, ", ".join(others))
        users = client.users()
        for hp in projects:
            try:
                _pull_project(db, client, hp, users, result, run.id, page_size, on_page)
                result.projects += 1
            except ProjectNotFound as exc:  # deleted since the listing: gone, the others go on
                _gone(db, hp, "deleted in Label Studio")
                result.failed_projects.append(f"{hp.origin} ({hp.title}): {exc.message}")
            except ServiceError as exc:  # one failing project must not stop the others
                log.error("%s: %s", hp.origin, exc)
                result.failed_projects.append(f"{hp.origin} ({hp.title}): {exc.message}")
        finish(db, settings, result, run.id)
        for key in ("tasks", "new", "updated", "unchanged", "withdrawn", "deleted"):
            run.count(key, getattr(result, key))
        run.count("failed_projects", len(result.failed_projects))
        run.count("gone_projects", len(result.gone_projects))
        run.count("malformed", result.malformed)
        run.summary = result.summary()
        if result.failed_projects:
            raise PullIncomplete(result)
    return result


def _gone(db: Database, hp: HumanProject, reason: str) -> None:
    with db.session() as s:
        row = s.get(HumanProject, hp.id)
        if row is not None and row.gone_at is None:
            row.gone_at, row.gone_reason = utcnow(), reason
    log.error("%s (%s): %s; its decisions are kept", hp.origin, hp.title, reason)
