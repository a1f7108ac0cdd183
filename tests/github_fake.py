"""A stand-in for the GitHub REST API on a LocalServer, answering in GitHub's real formats.

Covers what `review code github` meets: GET /repos/{owner}/{repo} (200, 301 Moved
Permanently to /repositories/{id} for renamed or transferred repositories, 404), GET
/repositories/{id}, GET /search/code (401 without a token), and rate limits: 403 with
`X-RateLimit-Remaining: 0` and `X-RateLimit-Reset` (primary), 403 "secondary rate limit"
with `Retry-After`, and 429 with `Retry-After`. Faults are queued per resource.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from typing import Any
from urllib.parse import unquote

from review.localserver import LocalServer, Reply, Request

DOCS = "https://docs.github.com/rest"


class FakeGitHub:
    def __init__(self, server: LocalServer, *, core_limit: int = 5000, search_limit: int = 600):
        self.server = server
        self.repos: dict[str, dict[str, Any]] = {}
        self.by_id: dict[int, str] = {}
        self.moved: dict[str, int] = {}
        self.files: dict[str, dict[str, str]] = {}
        self.faults: dict[str, list[Reply]] = defaultdict(list)
        self.limits = {"core": core_limit, "search": search_limit}
        self.used: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._next_id = 100_000
        server.route("/repos/", self._repo, prefix=True)
        server.route("/repositories/", self._repo_by_id, prefix=True)
        server.route("/search/code", self._search)
        server.route("/rate_limit", self._rate_limit)

    # -- set-up
    def add_repo(self, full_name: str, *, stars: int = 10, license: str | None = "mit", archived: bool = False,
                 default_branch: str = "main", pushed_at: str = "2021-06-01T12:00:00Z",
                 files: dict[str, str] | None = None) -> dict[str, Any]:
        self._next_id += 1
        owner, name = full_name.split("/")
        base = self.server.url
        lic = None if license is None else {
            "key": license, "name": {"mit": "MIT License", "apache-2.0": "Apache License 2.0"}.get(license, license),
            "spdx_id": license.upper() if license == "mit" else license.title(), "url": f"{base}/licenses/{license}",
            "node_id": "MDc6TGljZW5zZTEz"}
        data = {
            "id": self._next_id, "node_id": f"MDEwOlJlcG9zaXRvcnk{self._next_id}", "name": name, "full_name": full_name,
            "private": False,
            "owner": {"login": owner, "id": 4242, "node_id": "MDQ6VXNlcjQyNDI=", "type": "User", "site_admin": False,
                      "url": f"{base}/users/{owner}", "html_url": f"https://github.com/{owner}"},
            "html_url": f"https://github.com/{full_name}", "description": "Code for our paper", "fork": False,
            "url": f"{base}/repos/{full_name}", "created_at": "2017-04-10T09:00:00Z", "updated_at": "2023-01-02T10:00:00Z",
            "pushed_at": pushed_at, "git_url": f"git://github.com/{full_name}.git",
            "clone_url": f"https://github.com/{full_name}.git", "size": 2048, "stargazers_count": stars,
            "watchers_count": stars, "language": "Python", "has_issues": True, "forks_count": 3, "archived": archived,
            "disabled": False, "open_issues_count": 1, "license": lic, "topics": [], "visibility": "public",
            "forks": 3, "open_issues": 1, "watchers": stars, "default_branch": default_branch,
            "network_count": 3, "subscribers_count": 2,
        }
        self.repos[full_name.lower()] = data
        self.by_id[self._next_id] = full_name.lower()
        self.files[full_name.lower()] = dict(files or {})
        return data

    def move(self, old: str, new: str) -> None:
        """`old` now redirects (301) to the repository `new` (which must exist)."""
        self.moved[old.lower()] = self.repos[new.lower()]["id"]

    def fail_next(self, resource: str, reply: Reply) -> None:
        self.faults[resource].append(reply)

    # -- canned GitHub answers
    def headers(self, resource: str, remaining: int | None = None, reset_in: float = 3600) -> dict[str, str]:
        limit = self.limits[resource]
        rem = max(0, limit - self.used[resource]) if remaining is None else remaining
        return {"Content-Type": "application/json; charset=utf-8", "X-GitHub-Media-Type": "github.v3; format=json",
                "X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(rem),
                "X-RateLimit-Reset": str(int(time.time() + reset_in)), "X-RateLimit-Used": str(self.used[resource]),
                "X-RateLimit-Resource": "core" if resource == "core" else "code_search",
                "X-GitHub-Request-Id": "C0DE:1234:5678:9ABC:0000"}

    def primary_limit(self, resource: str, reset_in: float) -> Reply:
        body = {"message": "API rate limit exceeded for user ID 4242. If you reach out to GitHub Support for help, "
                           "please include the request ID C0DE:1234:5678:9ABC:0000.",
                "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api"}
        return Reply(403, json.dumps(body), self.headers(resource, remaining=0, reset_in=reset_in))

    def secondary_limit(self, resource: str, retry_after: int, status: int = 403) -> Reply:
        body = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
                           "If you reach out to GitHub Support for help, please include the request ID "
                           "C0DE:1234:5678:9ABC:0001.",
                "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}
        return Reply(status, json.dumps(body), {**self.headers(resource), "Retry-After": str(retry_after)})

    def _fault(self, resource: str) -> Reply | None:
        with self._lock:
            self.used[resource] += 1
            if self.faults[resource]:
                return self.faults[resource].pop(0)
        return None

    def _json(self, resource: str, status: int, body: Any, extra: dict[str, str] | None = None) -> Reply:
        return Reply(status, json.dumps(body), {**self.headers(resource), **(extra or {})})

    # -- routes
    def _repo(self, req: Request) -> Reply:
        fault = self._fault("core")
        if fault is not None:
            return fault
        parts = unquote(req.path).split("/")
        if len(parts) < 4:
            return self._json("core", 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"})
        key = f"{parts[2]}/{parts[3]}".lower()
        if key in self.moved:
            new_id = self.moved[key]
            url = f"{self.server.url}/repositories/{new_id}"
            return self._json("core", 301, {"message": "Moved Permanently", "url": url,
                                            "documentation_url": f"{DOCS}/guides/best-practices-for-using-the-rest-api#follow-redirects"},
                              {"Location": url})
        if key not in self.repos:
            return self._json("core", 404, {"message": "Not Found",
                                            "documentation_url": f"{DOCS}/repos/repos#get-a-repository", "status": "404"})
        return self._json("core", 200, self.repos[key], {"ETag": f'W/"{self.repos[key]["id"]:x}"'})

    def _repo_by_id(self, req: Request) -> Reply:
        fault = self._fault("core")
        if fault is not None:
            return fault
        try:
            key = self.by_id[int(req.path.rstrip("/").split("/")[-1])]
        except (KeyError, ValueError):
            return self._json("core", 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"})
        return self._json("core", 200, self.repos[key])

    def _rate_limit(self, req: Request) -> Reply:
        if req.headers.get("Authorization", "").endswith("bad-token"):
            return self._json("core", 401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"})

        def res(name: str) -> dict[str, int]:
            return {"limit": self.limits[name], "used": self.used[name],
                    "remaining": max(0, self.limits[name] - self.used[name]), "reset": int(time.time() + 3600)}

        return self._json("core", 200, {"resources": {"core": res("core"), "search": res("search")},
                                        "rate": res("core")})

    def _search(self, req: Request) -> Reply:
        if "Authorization" not in req.headers and "authorization" not in req.headers:
            return self._json("search", 401, {"message": "Requires authentication", "documentation_url":
                                              f"{DOCS}/search/search#search-code", "status": "401"})
        fault = self._fault("search")
        if fault is not None:
            return fault
        q = req.query.get("q", [""])[0]
        terms = [t for t in q.split() if not t.startswith("repo:")]
        repos = [t[5:].lower() for t in q.split() if t.startswith("repo:")]
        items = []
        for repo in repos:
            if repo not in self.repos:
                return self._json("search", 422, {"message": "Validation Failed", "errors": [
                    {"message": "The listed users and repositories cannot be searched either because the resources "
                                "do not exist or you do not have permission to view them.",
                     "resource": "Search", "field": "q", "code": "invalid"}], "documentation_url": DOCS, "status": "422"})
            for path, text in self.files.get(repo, {}).items():
                if all(t.lower() in text.lower() or t.lower() in path.lower() for t in terms):
                    r = self.repos[repo]
                    items.append({"name": path.rsplit("/", 1)[-1], "path": path, "sha": "0" * 40,
                                  "url": f"{self.server.url}/repos/{r['full_name']}/contents/{path}?ref=abc",
                                  "git_url": f"{self.server.url}/repos/{r['full_name']}/git/blobs/{'0' * 40}",
                                  "html_url": f"https://github.com/{r['full_name']}/blob/abc/{path}",
                                  "repository": {k: r[k] for k in ("id", "node_id", "name", "full_name", "private",
                                                                   "owner", "html_url", "description", "fork", "url")},
                                  "score": 1.0})
        per_page = int(req.query.get("per_page", ["30"])[0])
        return self._json("search", 200, {"total_count": len(items), "incomplete_results": False,
                                          "items": items[:per_page]})
