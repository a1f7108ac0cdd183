"""A narrow Label Studio client: the calls the review needs, with clear errors.

Built on label-studio-sdk 2.x. URL and key come from the environment (`LABEL_STUDIO_URL`,
and the variable named by `label_studio.api_key_env`, `LABEL_STUDIO_API_KEY` by default)
or the settings' URL. The key lives only in this object: it is never logged, stored or
put into an error message. Every failure becomes a `ServiceError` naming what was tried
(server down, key refused, project deleted) so nothing is half-written by surprise.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urlsplit

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from review.errors import ConfigError, ServiceError
from review.http import ResponseTooLarge, capped_httpx_client, load_json
from review.labelstudio.shapes import Checked, check_task
from review.log import get_logger
from review.settings import HttpSettings, Settings

log = get_logger("labelstudio")

URL_ENV = "LABEL_STUDIO_URL"
LOOPBACK = {"localhost", "127.0.0.1", "::1", "ip6-localhost", "ip6-loopback"}
DEFAULT_PORTS = {"http": 80, "https": 443}


class ProjectNotFound(ServiceError):
    """The project is not on the server (deleted in Label Studio)."""


def normalize_server_url(url: str) -> str:
    """One spelling per server: scheme and host in lower case, every loopback name as
    "localhost", no default port, no credentials, query or trailing slash."""
    parts = urlsplit(url.strip() if "://" in url else f"http://{url.strip()}")
    scheme = (parts.scheme or "http").lower()
    host = (parts.hostname or "").lower()
    if host in LOOPBACK or host.startswith("127."):
        host = "localhost"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def plain(obj: Any) -> Any:
    """SDK objects (pydantic) and plain dicts alike, as plain JSON-like values."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, list):
        return [plain(x) for x in obj]
    return obj


def _iso(value: Any) -> str | None:
    """A timestamp as one fixed text (Label Studio gives ISO strings or datetimes)."""
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


@dataclass
class RemoteTask:
    """One task as Label Studio holds it (what queue and pull need of it)."""

    id: int
    data: dict[str, Any]
    predictions: list[dict[str, Any]] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ref(self) -> str | None:
        return self.data.get("ref")


class LabelStudioClient:
    """One connection to one Label Studio server, acting as the key's owner."""

    def __init__(self, url: str, api_key: str, *, key_env: str = "LABEL_STUDIO_API_KEY", timeout: float = 60.0,
                 http: HttpSettings | None = None):
        if not url:
            raise ConfigError("no Label Studio URL", hint=f"set {URL_ENV} or label_studio.url")
        if not api_key:
            raise ConfigError(f"no Label Studio API key: the environment variable {key_env} is empty",
                              hint=f"export {key_env}=<token from Label Studio: Account & Settings>")
        self.url = url.rstrip("/")
        self.server_url = normalize_server_url(url)
        self.key_env = key_env
        # the SDK's httpx client is ours: every answer stops at http.max_response_bytes
        self.http = http or HttpSettings()
        self._sdk = LabelStudio(base_url=self.url, api_key=api_key, timeout=timeout,
                                httpx_client=capped_httpx_client(self.http, timeout=timeout))
        self._identity: tuple[str | None] | None = None

    def __repr__(self) -> str:  # never show the key
        return f"LabelStudioClient({self.url!r})"

    @classmethod
    def from_settings(cls, settings: Settings) -> LabelStudioClient:
        """URL from LABEL_STUDIO_URL (else the setting), key from the named variable."""
        ls = settings.label_studio
        url = os.environ.get(URL_ENV) or ls.url
        key = os.environ.get(ls.api_key_env, "")
        return cls(url, key, key_env=ls.api_key_env, timeout=ls.timeout, http=settings.http)

    def origin(self, project_id: int) -> str:
        """How decisions from one project are labelled: normalized server URL and project id, no key."""
        return f"label_studio:{self.server_url}#{project_id}"

    @contextmanager
    def _call(self, what: str, *, project_id: int | None = None) -> Iterator[None]:
        """Translate transport and HTTP failures into one clear ServiceError."""
        try:
            yield
        except ResponseTooLarge as exc:
            raise ServiceError(f"Label Studio's answer is too large ({what}): {exc.message}", item=exc.item,
                               hint=exc.hint) from None
        except RecursionError:  # the SDK parses with the recursive json module
            raise ServiceError(f"Label Studio's answer is nested too deeply to read ({what})", item=self.url) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ServiceError(f"cannot reach Label Studio ({what}): {type(exc).__name__}", item=self.url,
                               hint=f"is the server running? set {URL_ENV} or label_studio.url") from None
        except httpx.TimeoutException:
            raise ServiceError(f"Label Studio did not answer in time ({what})", item=self.url,
                               hint="retry; nothing already saved is lost") from None
        except httpx.HTTPError as exc:
            raise ServiceError(f"Label Studio connection failed ({what}): {type(exc).__name__}",
                               item=self.url) from None
        except ApiError as exc:
            status = exc.status_code
            if status in (401, 403):
                raise ServiceError(f"Label Studio refused the API key ({what}, HTTP {status})", item=self.url,
                                   hint=f"check {self.key_env}: copy the token from Account & Settings") from None
            if status == 404 and project_id is not None:
                raise ProjectNotFound(f"Label Studio project {project_id} not found; was it deleted? ({what})",
                                      item=self.origin(project_id),
                                      hint="decisions already pulled are kept; queue again to make a new project") from None
            body = str(exc.body)[:300]
            raise ServiceError(f"Label Studio answered HTTP {status} ({what}): {body}", item=self.url) from None

    # --- identity and users
    def whoami(self) -> dict[str, Any]:
        with self._call("check the API key"):
            return plain(self._sdk.users.whoami())

    def identity(self) -> str | None:
        """The server's own identity: its organization's id and creation time (the same
        whatever URL reaches it; a reinstalled server gets a new one). None if not readable."""
        if self._identity is None:
            me = self.whoami()
            org_id = me.get("active_organization")
            with self._call("read the organization"):
                try:
                    orgs = [plain(o) for o in self._sdk.organizations.list()]
                except ApiError as exc:
                    if exc.status_code not in (403, 404):
                        raise
                    orgs = []
            org = next((o for o in orgs if o.get("id") == org_id), None)
            found = f"organization {org_id} created {org['created_at']}" if org and org.get("created_at") else None
            self._identity = (found,)
        return self._identity[0]

    def users(self) -> dict[int, str]:
        """User id -> e-mail (the stable name of an annotator)."""
        with self._call("list users"):
            return {u.id: (u.email or u.username or f"user:{u.id}") for u in self._sdk.users.list()}

    # --- projects
    def projects(self) -> dict[int, dict[str, Any]]:
        """Every project on the server: id -> {title, created_at} (one light listing)."""
        with self._call("list projects"):
            return {p.id: {"title": p.title, "created_at": _iso(p.created_at)}
                    for p in self._sdk.projects.list(include="id,title,created_at", page_size=100)}

    def get_project(self, project_id: int) -> dict[str, Any]:
        with self._call("read the project", project_id=project_id):
            p = self._sdk.projects.get(project_id)
        return {"id": p.id, "title": p.title, "maximum_annotations": getattr(p, "maximum_annotations", None),
                "created_at": _iso(getattr(p, "created_at", None)), "label_config": getattr(p, "label_config", None)}

    def create_project(self, title: str, label_config: str, overlap: int, description: str = "") -> int:
        with self._call("create the project"):
            p = self._sdk.projects.create(title=title, label_config=label_config, maximum_annotations=overlap,
                                          description=description, show_skip_button=True)
        log.info("created Label Studio project %s (%s)", p.id, title)
        return p.id

    def set_label_config(self, project_id: int, label_config: str) -> None:
        with self._call("update the labeling configuration", project_id=project_id):
            self._sdk.projects.update(project_id, label_config=label_config)

    def set_overlap(self, project_id: int, overlap: int) -> None:
        with self._call("set reviewers per task", project_id=project_id):
            self._sdk.projects.update(project_id, maximum_annotations=overlap)

    def delete_project(self, project_id: int) -> None:
        with self._call("delete the project", project_id=project_id):
            self._sdk.projects.delete(project_id)

    # --- tasks and predictions
    def tasks_page(self, project_id: int, page: int, page_size: int = 100, *, annotations: bool = True,
                   checked: Checked | None = None) -> tuple[list[RemoteTask], bool]:
        """One page of tasks (id and data, and their annotations if asked) and whether more follow.

        The page itself asks only for id and data, and the annotations of its tasks come from
        the project's JSON export limited to those task ids: together about twice as fast as
        the full task serialization, and still one page at a time (a pull commits per page).
        Every task and annotation is checked at the boundary (`review.labelstudio.shapes`):
        a malformed one is named in `checked` and left out, the rest of the page still counts.
        """
        checked = checked if checked is not None else Checked()
        where = f"{self.origin(project_id)} page {page}"
        with self._call(f"read tasks page {page}", project_id=project_id):
            if page == 1:  # a deleted project must be an error, not an empty list
                self._sdk.projects.get(project_id)
            pager = self._sdk.tasks.list(project=project_id, fields="task_only", include="id,data", page=page,
                                         page_size=page_size)
        listed = list(pager.items or [])
        tasks = [RemoteTask(id=t["id"], data=t["data"]) for t in
                 (check_task({"id": getattr(raw, "id", None), "data": getattr(raw, "data", None)}, where, checked)
                  for raw in listed) if t is not None]
        if annotations and tasks:
            by_id = {t.id: t for t in tasks}
            for exported in self.export(project_id, [t.id for t in tasks]):
                task = check_task(exported, f"{where} export", checked)
                if task is not None and task.get("id") in by_id:
                    by_id[task["id"]].annotations = task["annotations"]
        # the SDK's has_next only says "this page was not empty"; asking past the end is a 404
        total = getattr(pager.response, "total", None)
        more = len(listed) == page_size and (total is None or page * page_size < total)
        return tasks, more

    def export(self, project_id: int, task_ids: list[int] | None = None) -> list[dict[str, Any]]:
        """The project's Label Studio JSON export (all tasks, or only `task_ids`)."""
        extra = {"additional_query_parameters": {"ids[]": [str(i) for i in task_ids]}} if task_ids else None
        with self._call("export annotations", project_id=project_id):
            raw = b"".join(self._sdk.projects.exports.download_sync(
                project_id, export_type="JSON", download_all_tasks=True, request_options=extra))
        try:
            data = load_json(raw, max_depth=self.http.max_json_depth)
        except ValueError as exc:
            raise ServiceError(f"Label Studio's export is not usable JSON ({exc})", item=self.origin(project_id)) from None
        return data if isinstance(data, list) else []

    def all_tasks(self, project_id: int, page_size: int = 100, *, annotations: bool = True,
                  predictions: bool = True) -> Iterator[RemoteTask]:
        """Every task of the project, with its predictions (one request) and annotations."""
        preds = self.predictions_by_task(project_id) if predictions else {}
        page = 1
        while True:
            tasks, more = self.tasks_page(project_id, page, page_size, annotations=annotations)
            for t in tasks:
                t.predictions = preds.get(t.id, [])
                yield t
            if not more or not tasks:
                return
            page += 1

    def predictions_by_task(self, project_id: int) -> dict[int, list[dict[str, Any]]]:
        """Task id -> its predictions (id, model_version, result), for the whole project at once."""
        out: dict[int, list[dict[str, Any]]] = {}
        with self._call("list predictions", project_id=project_id):
            for p in self._sdk.predictions.list(project=project_id):
                d = plain(p)
                out.setdefault(d.get("task"), []).append(d)
        return out

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Create tasks (with their predictions) in one request; their ids, in order."""
        with self._call(f"import {len(tasks)} tasks", project_id=project_id):
            r = self._sdk.projects.import_tasks(project_id, request=tasks, return_task_ids=True)
        ids = list(r.task_ids or [])
        if len(ids) != len(tasks):
            raise ServiceError(f"Label Studio created {len(ids)} tasks for {len(tasks)} sent",
                               item=self.origin(project_id), hint="rerun `review queue`: it reconciles by task ref")
        return ids

    def replace_predictions(self, task_id: int, result: list[dict[str, Any]], model_version: str,
                            old: list[dict[str, Any]] | None = None, *, project_id: int | None = None) -> int:
        """Delete the task's predictions and add the new one (after a rule change)."""
        with self._call(f"update the prediction of task {task_id}", project_id=project_id):
            if old is None:
                old = [plain(p) for p in self._sdk.predictions.list(task=task_id)]
            for p in old:
                if p.get("id") is not None:
                    self._sdk.predictions.delete(p["id"])
            new = self._sdk.predictions.create(task=task_id, result=result, model_version=model_version)
        return new.id

    def update_task_data(self, task_id: int, data: dict[str, Any], *, project_id: int | None = None) -> None:
        with self._call(f"update the data of task {task_id}", project_id=project_id):
            self._sdk.tasks.update(str(task_id), data=data)

    # --- annotations (what a reviewer does; tests use it to act as reviewers)
    def create_annotation(self, task_id: int, result: list[dict[str, Any]], **extra: Any) -> int:
        with self._call(f"annotate task {task_id}"):
            return self._sdk.annotations.create(id=task_id, result=result, **extra).id

    def update_annotation(self, annotation_id: int, result: list[dict[str, Any]], **extra: Any) -> None:
        with self._call(f"update annotation {annotation_id}"):
            self._sdk.annotations.update(id=annotation_id, result=result, **extra)

    def delete_annotation(self, annotation_id: int) -> None:
        with self._call(f"delete annotation {annotation_id}"):
            self._sdk.annotations.delete(annotation_id)
