"""Helpers for the harvest tests: settings, fixture paths, a DBLP search API stand-in."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from review.localserver import Reply, Request
from review.settings import Settings

DATA = Path(__file__).resolve().parent / "data"
ACL_DATA = DATA / "acl"
DBLP_DATA = DATA / "dblp"

_TOC = re.compile(r"^toc:db/(.+)/([^/]+)\.bht:$")


def settings_for(tmp_path: Path, **harvest: Any) -> Settings:
    """Settings for tests: fast HTTP limits, no polite delay, data under tmp_path."""
    s = Settings()
    s.data_dir = tmp_path / "data"
    s.http.per_host_rate = 0
    s.http.backoff = 0.01
    s.http.max_backoff = 2.0
    s.http.retries = 3
    s.http.timeout = 5
    s.harvest.dblp_delay = 0
    for key, value in harvest.items():
        setattr(s.harvest, key, value)
    return s


class DblpApi:
    """Serves /search/publ/api like DBLP: TOC queries answered from tests/data/dblp/api/*.json,
    sliced by f/h; unknown TOCs get the empty answer. `faults[toc]` is a list of Replies
    served (and consumed) before the real answer for that TOC."""

    def __init__(self, extra: dict[str, dict] | None = None):
        self.answers: dict[str, dict] = {}
        for path in (DBLP_DATA / "api").glob("*.json"):
            if path.stem != "empty":
                self.answers[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        self.answers.update(extra or {})
        self.empty = json.loads((DBLP_DATA / "api" / "empty.json").read_text(encoding="utf-8"))
        self.faults: dict[str, list[Reply]] = {}
        self.calls: Counter[str] = Counter()
        self.pages: list[tuple[str, int, int]] = []

    def __call__(self, req: Request) -> Reply:
        query = req.query.get("q", [""])[0]
        m = _TOC.match(query)
        if not m or req.query.get("format", [""])[0] != "json":
            return Reply(400, "bad query")
        toc = m.group(2)
        self.calls[toc] += 1
        if self.faults.get(toc):
            return self.faults[toc].pop(0)
        first = int(req.query.get("f", ["0"])[0])
        size = int(req.query.get("h", ["30"])[0])
        self.pages.append((toc, first, size))
        answer = copy.deepcopy(self.answers.get(toc, self.empty))
        hits = answer["result"]["hits"]
        all_hits = hits.get("hit", [])
        page = all_hits[first:first + size]
        hits["@first"], hits["@sent"] = str(first), str(len(page))
        if page:
            hits["hit"] = page
        else:
            hits.pop("hit", None)
        return Reply(200, json.dumps(answer, ensure_ascii=False), {"Content-Type": "application/json"})

    def install(self, server: Any) -> None:
        server.route("/search/publ/api", self)


def counts_of(db: Any) -> dict[str, int]:
    from sqlalchemy import func, select

    from review.db.models import Paper, SourceRecord

    with db.session() as s:
        return {"papers": s.scalar(select(func.count()).select_from(Paper)),
                "records": s.scalar(select(func.count()).select_from(SourceRecord))}


def paper(db: Any, ident: str) -> Any:
    from sqlalchemy import select

    from review.db.models import Paper

    with db.session() as s:
        return s.scalars(select(Paper).where(Paper.ident == ident)).one()



def git(cwd: Path, *args: str, when: str | None = None) -> str:
    """Run git in `cwd` with a fixed identity; `when` (ISO 8601) dates the commit."""
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip()


def previous_release_ident(collection: str, volume: str, number: str) -> str:
    """The old-style id releases before schema 0008 stored: `{collection}-{volume}{paper:03d}`,
    wrong for two-digit volumes (W02 volume 1 paper 1 became W02-1001, another paper's id)."""
    return f"{collection}-{volume}{int(number):03d}"


def insert_row(conn: Any, table: str, **values: Any) -> int:
    """Insert one row into `table` as the schema on disk has it (not today's models), filling
    required columns the caller does not care about; returns the new id."""
    from datetime import datetime, timezone

    from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, MetaData, Table, insert

    t = Table(table, MetaData(), autoload_with=conn)
    for col in t.columns:
        if col.primary_key or col.nullable or col.name in values or col.server_default is not None:
            continue
        kind = type(col.type)
        values[col.name] = (datetime.now(timezone.utc) if issubclass(kind, DateTime) else
                            [] if issubclass(kind, JSON) else False if issubclass(kind, Boolean) else
                            0 if issubclass(kind, (Integer, Float)) else "x")
    return conn.execute(insert(t).values(**values).returning(t.c.id)).scalar_one()
