"""`review code github`: look each codebase up on GitHub with PyGithub, and search it for the metric's term.

What a look-up records: exists / renamed (GitHub answers 301 for a moved repository and
PyGithub follows it silently, so a rename shows as a different `full_name` in the answer)
/ deleted (404), archived, default branch, stars, license, last push; then
`code_metric_prelim` from GitHub code search (`<term> repo:owner/name`), which needs a token.

Rate limits, GitHub's way: PyGithub's own retry is replaced by one that only retries
5xx, so every rate-limit answer reaches this module, which sleeps visibly (progress and
log) until `X-RateLimit-Reset` for the primary limit, for `Retry-After` when given, and a
minute for a secondary limit without one. Searches are also spaced by the per-minute
limit GitHub announces in `X-RateLimit-Limit`, so the limit is rarely hit at all. A wait
longer than `code.max_wait` stops the run cleanly; the queue resumes it later.

The token is read from the environment variable named by `code.github_token_env` and is
handed only to PyGithub: it is never stored, logged, or put in a run's arguments.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Callable

import requests
from pydantic import BaseModel, ConfigDict, ValidationError
from github import (Auth, BadCredentialsException, Github, GithubException, RateLimitExceededException,
                    UnknownObjectException)
from sqlalchemy import or_, select, update
from urllib3.util.retry import Retry

from review.claims import Held, claim, enqueue, finish, release, worker_name
from review.db.base import utcnow
from review.db.models import Codebase, WorkItem
from review.db.session import Database
from review.errors import ServiceError
from review.http import cap_session, user_agent
from review.log import get_logger
from review.names import codebase_name_of
from review.progress import progress
from review.runs import record_run
from review.settings import HttpSettings, Settings
from review.stage import held

log = get_logger("codebases.github")

STAGE = "github"
SECONDARY_DEFAULT_WAIT = 60.0
MAX_ATTEMPTS = 6


class RateLimitStop(Exception):
    """GitHub asks for a longer pause than `code.max_wait`: stop now, resume later."""

    def __init__(self, wait: float, resource: str):
        super().__init__(f"GitHub {resource} rate limit asks for {wait:.0f} s")
        self.wait = wait
        self.resource = resource


class RepoLicense(BaseModel):
    model_config = ConfigDict(extra="allow")
    key: str | None = None
    spdx_id: str | None = None


class RepoAnswer(BaseModel):
    """The fields of GitHub's repository answer that a look-up keeps, checked at the boundary:
    a wrong shape (stars as text, a license that is not an object) makes that one codebase's
    look-up an error naming the field, instead of a bad value in the database or a crash."""

    model_config = ConfigDict(extra="allow")
    full_name: str | None = None
    default_branch: str | None = None
    stargazers_count: int | None = None
    license: RepoLicense | None = None
    archived: bool | None = None
    pushed_at: str | None = None  # read leniently (_parse_time): a bad date is no date, not an error
    size: int | None = None


@dataclass
class Lookup:
    status: str  # exists | renamed | deleted | error
    detail: str | None = None
    full_name: str | None = None
    default_branch: str | None = None
    stars: int | None = None
    license: str | None = None
    archived: bool | None = None
    pushed_at: datetime | None = None
    size_kb: int | None = None


@dataclass
class Search:
    total: int
    incomplete: bool
    paths: list[str] = field(default_factory=list)


class GitHubClient:
    """PyGithub with rate limits handled where they can be seen, counted and tested."""

    def __init__(self, api_url: str, token: str | None, *, timeout: float = 30.0, max_wait: float = 3900.0,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 on_wait: Callable[[str], None] | None = None, contact: str = "", retries: int = 3,
                 backoff: float = 1.0, max_bytes: int = HttpSettings().max_response_bytes):
        # 5xx only: rate-limit answers must reach `_call`, which waits for them visibly
        retry = Retry(total=retries, backoff_factor=backoff, status_forcelist=(500, 502, 503, 504),
                      allowed_methods=frozenset({"GET"}), respect_retry_after_header=False, raise_on_status=False)
        self.gh = Github(auth=Auth.Token(token) if token else None, base_url=api_url.rstrip("/"),
                         timeout=int(timeout), retry=retry, user_agent=user_agent(contact), per_page=5,
                         seconds_between_requests=None, seconds_between_writes=None)
        _cap_answers(self.gh, max_bytes)
        self.has_token = bool(token)
        self.max_wait = max_wait
        self.sleep, self.clock, self.on_wait = sleep, clock, on_wait
        self.calls: Counter[str] = Counter()
        self.waited: Counter[str] = Counter()
        self._next_search = 0.0

    # -- rate limits
    def _call(self, resource: str, fn: Callable[[], Any]) -> Any:
        for attempt in range(MAX_ATTEMPTS):
            if resource == "search":
                self._space_search()
            self.calls[resource] += 1
            try:
                value = fn()
            except GithubException as exc:
                wait = self.rate_wait(exc)
                if wait is None or attempt == MAX_ATTEMPTS - 1:
                    raise
                self._wait(wait, resource, "secondary" if exc.headers and "retry-after" in _lower(exc.headers)
                           else "primary")
                continue
            self._after(resource)
            return value
        raise AssertionError("unreachable")

    def rate_wait(self, exc: GithubException) -> float | None:
        """Seconds to wait before retrying, or None when the error is not a rate limit."""
        if exc.status not in (403, 429):
            return None
        headers = _lower(exc.headers or {})
        if "retry-after" in headers:
            return _retry_after(headers["retry-after"], self.clock())
        message = str((exc.data or {}).get("message", "") if isinstance(exc.data, dict) else exc.data).lower()
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            return max(0.0, float(headers["x-ratelimit-reset"]) - self.clock()) + 1.0
        if isinstance(exc, RateLimitExceededException) or "rate limit" in message or exc.status == 429:
            return SECONDARY_DEFAULT_WAIT
        return None

    def _wait(self, seconds: float, resource: str, kind: str) -> None:
        if seconds > self.max_wait:
            raise RateLimitStop(seconds, resource)
        until = datetime.fromtimestamp(self.clock() + seconds, timezone.utc).strftime("%H:%M:%S UTC")
        message = f"GitHub {kind} rate limit ({resource}): sleeping {seconds:.0f} s until {until}"
        log.info(message)
        if self.on_wait:
            self.on_wait(message)
        self.waited[resource] += 1
        self.sleep(seconds)

    def _after(self, resource: str) -> None:
        """Read the limit headers of the answer just received; sleep now if nothing is left."""
        remaining, limit = self.gh.requester.rate_limiting
        reset = self.gh.requester.rate_limiting_resettime
        if resource == "search" and limit > 0:
            self._next_search = self.clock() + 60.0 / limit
        if remaining == 0 and reset:
            self._wait(max(0.0, reset - self.clock()) + 1.0, resource, "primary")

    def _space_search(self) -> None:
        gap = self._next_search - self.clock()
        if gap > 0:
            self.sleep(gap)

    # -- look-ups
    def lookup(self, owner: str, name: str) -> Lookup:
        wanted = f"{owner}/{name}"
        try:
            repo = self._call("core", lambda: self.gh.get_repo(wanted))
        except UnknownObjectException:
            return Lookup("deleted", "404 Not Found")
        except GithubException as exc:
            if exc.status in (404, 410, 451):
                return Lookup("deleted", f"{exc.status} {_message(exc)}")
            raise
        try:
            raw = RepoAnswer.model_validate(repo.raw_data)
        except ValidationError as exc:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()[:3])
            return Lookup("error", f"malformed answer from GitHub for {wanted}: {problem}")
        full = raw.full_name or wanted
        renamed = full.lower() != wanted.lower()
        return Lookup(
            status="renamed" if renamed else "exists",
            detail=f"moved from {wanted} to {full}" if renamed else None,
            full_name=full, default_branch=raw.default_branch, stars=raw.stargazers_count,
            license=(raw.license.spdx_id or raw.license.key) if raw.license else None,
            archived=bool(raw.archived), pushed_at=_parse_time(raw.pushed_at), size_kb=raw.size)

    def search(self, full_name: str, term: str) -> Search:
        results = self.gh.search_code(term, repo=full_name)

        def first_page() -> tuple[list[str], int, bool]:
            items = list(results.get_page(0))
            return [i.path for i in items], results.totalCount, bool(results.incomplete_results)

        paths, total, incomplete = self._call("search", first_page)
        return Search(total=total or 0, incomplete=incomplete, paths=paths[:5])


@dataclass
class GithubResult:
    counts: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    run_id: int | None = None
    stopped: str | None = None
    held: Held = field(default_factory=Held)  # what other look-up workers still hold
    term: str = ""  # what code search looked for

    def summary(self) -> str:
        c = self.counts
        n = c["exists"] + c["renamed"] + c["deleted"] + c["error"]
        per = (sum(self.calls.values()) / n) if n else 0.0
        text = (f"looked up {n} codebases: {c['exists']} exist, {c['renamed']} renamed, {c['deleted']} deleted, "
                f"{c['error']} errors; {self.term!r} found in {c['term_found']}, not in {c['term_absent']}"
                f" ({c['search_skipped_no_token']} not searched: no token); {sum(self.calls.values())} API calls "
                f"({per:.1f} per codebase), {c['rate_limit_waits']} rate-limit waits")
        text += f"; {self.held.note()}" if self.held.note() else ""
        return text + (f"; stopped: {self.stopped}" if self.stopped else "")


def search_term(settings: Settings) -> str:
    """`code.search_query`, else the preliminary term of the metric's code catalog."""
    if settings.code.search_query:
        return settings.code.search_query
    from review.codebases.catalog import load_catalog

    return load_catalog(settings.code.catalog or None, settings).prelim


def token_from_env(settings: Settings) -> str | None:
    return os.environ.get(settings.code.github_token_env) or None


def run_github(db: Database, settings: Settings, *, limit: int | None = None, refresh: bool = False,
               retry_failed: bool = False, client: GitHubClient | None = None) -> GithubResult:
    """Look up every GitHub codebase not looked up within `code.cache_days`, resumably."""
    token = token_from_env(settings)
    if client is None:
        client = GitHubClient(settings.code.github_api_url, token, timeout=settings.http.timeout,
                              max_wait=settings.code.max_wait, contact=settings.http.user_agent,
                              retries=settings.http.retries, backoff=settings.http.backoff,
                              max_bytes=settings.http.max_response_bytes)
    result = GithubResult(term=search_term(settings))
    args = {"term": result.term, "limit": limit, "refresh": refresh, "retry_failed": retry_failed, "api": settings.code.github_api_url,
            "token": "set" if token else "absent"}
    stale = utcnow() - timedelta(days=settings.code.cache_days)
    with record_run(db, "code github", args) as run:
        result.run_id = run.id
        with db.session() as s:
            due = select(Codebase.id).where(Codebase.host == "github.com")
            if not refresh:
                due = due.where(or_(Codebase.looked_up_at.is_(None), Codebase.looked_up_at < stale,
                                    Codebase.lookup_status == "error"))
            ids = list(s.scalars(due))
            enqueue(s, STAGE, ids, requeue_failed=retry_failed)
            if ids:  # cached results that went stale (or --refresh) go back to the queue
                for chunk in range(0, len(ids), 5000):
                    s.execute(update(WorkItem).where(WorkItem.stage == STAGE, WorkItem.state == "done",
                                                     WorkItem.item_id.in_(ids[chunk:chunk + 5000]))
                              .values(state="pending", worker=None, lease_until=None))
            total = s.query(WorkItem).filter(WorkItem.stage == STAGE,
                                             WorkItem.state.in_(("pending", "claimed"))).count()
        if limit is not None:
            total = min(total, limit)
        if total:
            check_service(client, settings.code.github_api_url)
        worker = worker_name()
        done = 0
        with progress(total, "code github") as bar:
            client.on_wait = bar.describe
            while limit is None or done < limit:
                with db.session() as s:
                    claims = claim(s, STAGE, worker, 1 if limit is None else min(1, limit - done))
                if not claims:
                    break
                c = claims[0]
                try:
                    outcome, error = _one(db, client, c.item_id, settings, refresh, result.term), None
                except RateLimitStop as stop:
                    with db.session() as s:
                        release(s, claims, worker)
                    result.stopped = f"{stop}; rerun `review code github` after it resets"
                    log.warning("stopping: %s", result.stopped)
                    break
                except KeyboardInterrupt:
                    with db.session() as s:
                        release(s, claims, worker)
                    raise
                except Exception as exc:  # one codebase must not stop the run
                    outcome, error = "error", f"{type(exc).__name__}: {exc}"
                    log.error("codebase %s: GitHub look-up failed: %s", codebase_name_of(db, c.item_id), error)
                    with db.session() as s:
                        cb = s.get(Codebase, c.item_id)
                        if cb is not None:
                            cb.lookup_status, cb.lookup_detail, cb.looked_up_at = "error", error[:2000], utcnow()
                with db.session() as s:
                    finish(s, c, worker, error=error)
                for key in outcome.split("+"):
                    result.counts[key] += 1
                    run.count(key)
                bar.describe("code github")
                bar.advance()
                done += 1
                if done % 20 == 0:
                    run.checkpoint()
        result.held = held(db, STAGE)
        result.calls = Counter(client.calls)
        result.counts["rate_limit_waits"] = sum(client.waited.values())
        run.counts.update({f"calls_{k}": v for k, v in client.calls.items()})
        run.count("rate_limit_waits", result.counts["rate_limit_waits"])
        if result.stopped:
            run.count("stopped_for_rate_limit")
        run.summary = result.summary()
    return result


def _one(db: Database, client: GitHubClient, codebase_id: int, settings: Settings, refresh: bool, term: str) -> str:
    with db.session() as s:
        cb = s.get(Codebase, codebase_id)
        if cb is None or not cb.owner or not cb.name:
            return "skipped"
        owner, name = cb.owner, cb.name
        searched_at = cb.searched_at
    look = client.lookup(owner, name)
    outcomes = [look.status]
    search: Search | None = None
    fresh_search = searched_at is not None and not refresh and \
        _aware(searched_at) > utcnow() - timedelta(days=settings.code.cache_days)
    if look.status in ("exists", "renamed") and not fresh_search:
        if client.has_token:
            search = client.search(look.full_name or f"{owner}/{name}", term)
            outcomes.append("term_found" if search.total > 0 else "term_absent")
        else:
            outcomes.append("search_skipped_no_token")
    with db.session() as s:
        cb = s.get(Codebase, codebase_id)
        assert cb is not None
        now = utcnow()
        cb.lookup_status, cb.lookup_detail, cb.looked_up_at = look.status, look.detail, now
        if look.status in ("exists", "renamed"):
            cb.full_name, cb.default_branch, cb.stars = look.full_name, look.default_branch, look.stars
            cb.license, cb.archived, cb.pushed_at = look.license, look.archived, look.pushed_at
        if search is not None:
            cb.code_metric_prelim, cb.searched_at = search.total > 0, now
            detail = f"search: {search.total} files mention {term!r}"
            if search.incomplete:
                detail += " (GitHub says incomplete)"
            if search.paths:
                detail += ": " + ", ".join(search.paths)
            cb.lookup_detail = "; ".join(x for x in (look.detail, detail) if x)
        elif look.status == "deleted":
            cb.code_metric_prelim = None
    return "+".join(outcomes)


def check_service(client: GitHubClient, api_url: str) -> None:
    """Fail early (exit code 7) when the API cannot be reached or refuses the token.

    `GET /rate_limit` does not count against any limit, so the probe is free.
    """
    client.calls["rate_limit"] += 1
    try:
        client.gh.get_rate_limit()
    except BadCredentialsException:
        raise ServiceError("GitHub refused the token (401 Bad credentials)", item=api_url,
                           hint="check the token in the variable named by code.github_token_env") from None
    except GithubException as exc:
        if exc.status >= 500:
            raise ServiceError(f"GitHub API answers {exc.status} {_message(exc)}", item=api_url) from None
        # anything else (e.g. a server without /rate_limit) is left to the per-item look-ups
    except (OSError, requests.RequestException) as exc:
        raise ServiceError(f"GitHub API unreachable: {type(exc).__name__}", item=api_url,
                           hint="check code.github_api_url and the network") from None


def _cap_answers(gh: Github, max_bytes: int) -> None:
    """Every answer PyGithub reads stops at `max_bytes` (`review.http.CappedAdapter`).

    PyGithub (2.x) has no option for this: its Requester makes its connection lazily from
    the connection class it keeps per instance, and that connection reads each answer whole
    through its own `requests.Session`. So the class is swapped, on this instance only, for
    one that mounts the capped adapter (same retry and pool) on that session.
    """
    requester = gh.requester
    name = "_Requester__connectionClass"
    base = getattr(requester, name, None)
    if base is None:
        raise RuntimeError("PyGithub's Requester has no connection class to cap (PyGithub changed?)")

    class Capped(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            cap_session(self.session, max_bytes, retries=self.retry, pool=self.pool_size)

    setattr(requester, name, Capped)


def _lower(headers: dict[str, Any]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _retry_after(value: str, now: float) -> float:
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - now)
        except (TypeError, ValueError):
            return SECONDARY_DEFAULT_WAIT


def _message(exc: GithubException) -> str:
    return str(exc.data.get("message", "")) if isinstance(exc.data, dict) else str(exc.data or "")


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
