"""Repository URLs: one normal form per repository, and finding them in paper text.

Why: the same repository arrives as `https://github.com/Owner/Name`, `github.com/owner/name.git`,
`git@github.com:owner/name`, `.../name/tree/master/src` or with a trailing period from a
PDF sentence. Links from the three sources must merge into one codebase, so every URL is
reduced to `https://<host>/<owner>/<name>`. Only the host is lower-cased: owner and name keep
their case, because a clone from a case-sensitive host (or a mirror on disk) needs it. Two
URLs are the same repository when their `key`s are equal: on GitHub, whose owner and
repository names are case-insensitive, the key is lower case; elsewhere it is the URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

HOSTS = {"github.com": "github.com", "www.github.com": "github.com", "raw.githubusercontent.com": "github.com",
         "gitlab.com": "gitlab.com", "www.gitlab.com": "gitlab.com",
         "bitbucket.org": "bitbucket.org", "www.bitbucket.org": "bitbucket.org"}
CASE_INSENSITIVE_HOSTS = frozenset({"github.com"})
GITHUB_RESERVED = frozenset({
    "about", "apps", "blog", "collections", "contact", "customer-stories", "enterprise", "events", "explore",
    "features", "issues", "login", "marketplace", "new", "notifications", "orgs", "organizations", "pricing",
    "pulls", "search", "security", "settings", "site", "sponsors", "topics", "trending", "users", "join",
})
TRAILING = ".,;:!?)]}>'\"*"
TEXT_URL = re.compile(
    r"(?:https?://|git@)?(?:www\.)?(github\.com|gitlab\.com|bitbucket\.org)[/:]\s?"
    r"([A-Za-z0-9][\w.-]*(?:/[\w.-]+){1,4}(?:\.git)?)", re.I)


@dataclass(frozen=True)
class RepoRef:
    host: str
    owner: str
    name: str

    @property
    def url(self) -> str:
        return f"https://{self.host}/{self.owner}/{self.name}"

    @property
    def key(self) -> str:
        """What two URLs of one repository share (the merge key of `review code link`)."""
        return self.url.lower() if self.host in CASE_INSENSITIVE_HOSTS else self.url

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


def parse_repo_url(url: str | None) -> RepoRef | None:
    """The repository a URL points into, or None when it is not a repository URL."""
    if not url:
        return None
    raw = url.strip().strip(TRAILING)
    m = re.match(r"^git@([\w.-]+):(.+)$", raw)
    if m:
        raw = f"https://{m.group(1)}/{m.group(2)}"
    if not re.match(r"^[a-z][a-z0-9+.-]*://", raw, re.I):
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
    except ValueError:
        return None
    host = HOSTS.get((parts.hostname or "").lower())
    if host is None:
        return None
    segs = [s for s in parts.path.split("/") if s]
    if host == "gitlab.com":
        if "-" in segs:
            segs = segs[: segs.index("-")]
        segs = segs[:5]
        if len(segs) < 2:
            return None
        owner, name = "/".join(segs[:-1]), segs[-1]
    else:
        if len(segs) < 2:
            return None
        owner, name = segs[0], segs[1]
        if host == "github.com" and owner.lower() in GITHUB_RESERVED:
            return None
    name = name.strip(TRAILING)
    if name.lower().endswith(".git"):
        name = name[:-4]
    if not name or not owner or name in (".", ".."):
        return None
    return RepoRef(host, owner, name)


def normalize_repo_url(url: str | None) -> str | None:
    ref = parse_repo_url(url)
    return ref.url if ref else None


def repo_key(url: str) -> str:
    """The merge key of a stored codebase URL (the URL itself when it is no repository URL)."""
    ref = parse_repo_url(url)
    return ref.key if ref else url


@dataclass(frozen=True)
class TextLink:
    ref: RepoRef
    start: int
    end: int
    match: str
    context: str


def find_repo_urls(text: str, context: int = 160) -> list[TextLink]:
    """Repository URLs written in a paper's text, in order, each repository once."""
    seen: set[str] = set()
    out: list[TextLink] = []
    for m in TEXT_URL.finditer(text or ""):
        host = m.group(1).lower()
        path = m.group(2).strip(TRAILING)
        ref = parse_repo_url(f"https://{host}/{path}")
        if ref is None or ref.key in seen:
            continue
        seen.add(ref.key)
        a, b = max(0, m.start() - context), min(len(text), m.end() + 40)
        out.append(TextLink(ref, m.start(), m.end(), m.group(0), text[a:b]))
    return out
