"""Which queued projects live on the server a client reaches, and which are gone.

A server is identified by what it is, not by the URL string typed: its own identity (the
organization's id and creation time, the same under any URL) when both sides know it,
else its normalized URL (`http://LOCALHOST:8080/` = `http://127.0.0.1:8080` =
`http://[::1]:8080`). A project is matched by its id and its creation time, so a project
deleted in Label Studio, or an id reused by a new project, is never mistaken for the one
we queued. Such a project is marked gone (its decisions stay, for the audit trail); a
second row for the same remote project (left by an older release that told URL spellings
apart) is marked gone as a duplicate and its copies of the decisions are withdrawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from review.db.base import utcnow
from review.db.models import HumanDecision, HumanProject
from review.labelstudio.client import LabelStudioClient, normalize_server_url
from review.log import get_logger

log = get_logger("labelstudio")


@dataclass
class Server:
    url: str  # normalized
    identity: str | None
    remote: dict[int, dict[str, Any]]  # project id -> {title, created_at}


@dataclass
class Reconciled:
    live: list[HumanProject] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # found gone now: "origin (title): reason"
    already_gone: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


def this_server(client: LabelStudioClient) -> Server:
    return Server(client.server_url, client.identity(), client.projects())


def same_server(hp: HumanProject, server: Server) -> bool:
    if hp.server_id and server.identity:
        return hp.server_id == server.identity
    return bool(hp.url) and normalize_server_url(hp.url or "") == server.url


def _mark_gone(hp: HumanProject, reason: str) -> None:
    hp.gone_at, hp.gone_reason = utcnow(), reason


def reconcile(session: Session, server: Server, run_id: int | None = None) -> Reconciled:
    """Our live projects on `server` (server identity and creation times filled in where
    missing), marking those no longer there gone."""
    out = Reconciled()
    rows = session.scalars(select(HumanProject).where(HumanProject.url.is_not(None)).order_by(HumanProject.id))
    by_project: dict[int, HumanProject] = {}
    for hp in rows:
        if not same_server(hp, server):
            continue
        if hp.server_id is None and server.identity:
            hp.server_id = server.identity
        if hp.gone_at is not None:
            out.already_gone.append(f"{hp.origin} ({hp.title}): {hp.gone_reason}")
            continue
        remote = server.remote.get(hp.project_id) if hp.project_id is not None else None
        if remote is None:
            _mark_gone(hp, "deleted in Label Studio")
            out.gone.append(f"{hp.origin} ({hp.title}): deleted in Label Studio")
            continue
        if hp.remote_created and remote["created_at"] and remote["created_at"] != hp.remote_created:
            reason = f"project {hp.project_id} is now another project ({remote['title']!r}, created {remote['created_at']})"
            _mark_gone(hp, reason)
            out.gone.append(f"{hp.origin} ({hp.title}): {reason}")
            continue
        first = by_project.get(hp.project_id)  # type: ignore[arg-type]
        if first is not None:
            _mark_gone(hp, f"the same Label Studio project as {first.origin}")
            session.execute(update(HumanDecision).where(HumanDecision.origin == hp.origin,
                                                        HumanDecision.deleted.is_(False))
                            .values(deleted=True, run_id=run_id))
            out.duplicates.append(f"{hp.origin}: the same project as {first.origin}; its copies withdrawn")
            continue
        hp.remote_created = hp.remote_created or remote["created_at"]
        by_project[hp.project_id] = hp  # type: ignore[index]
        out.live.append(hp)
    for line in out.gone:
        log.error("%s; its decisions are kept", line)
    for line in out.duplicates:
        log.warning("%s", line)
    return out


def elsewhere(session: Session, server: Server) -> list[str]:
    """Servers holding our projects when this one holds none (for a clear message)."""
    rows = session.scalars(select(HumanProject).where(HumanProject.url.is_not(None), HumanProject.gone_at.is_(None)))
    return sorted({hp.url for hp in rows if hp.url and not same_server(hp, server)})


def new_origin(session: Session, client: LabelStudioClient, project_id: int, created: str | None) -> str:
    """The origin of a newly registered project; unique even if an old project of a
    replaced server had the same URL and id."""
    origin = client.origin(project_id)
    if session.scalar(select(HumanProject.id).where(HumanProject.origin == origin)) is None:
        return origin
    return f"{origin}@{created or utcnow().isoformat()}"
