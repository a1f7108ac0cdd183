"""`--update` and `--as-of`: the anthology data repository through plain git.

Why plain git: the data repository is large and changes daily; git fetches only what
changed, and the commit we harvested from goes into the run's signature. `--as-of DATE`
reads the repository as it was at the last commit before DATE straight from git's object
store (`GitTree`), so the checkout on disk is never switched or touched: a rerun of the
paper's corpus needs the Anthology as it was, not a filter over today's data.
"""

from __future__ import annotations

import subprocess
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import IO, Any

from review.errors import FetchError, InputFileError
from review.log import get_logger

log = get_logger("harvest.git")

GIT_TIMEOUT = 3600.0


def _git(*args: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              env=None, check=False)
    except FileNotFoundError:
        raise FetchError("git is not installed", hint="install git, or clone the data yourself",
                         reason="git_missing") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f}s", reason="timeout") from None
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise FetchError(f"git {args[0]} failed: {message[-1] if message else done.returncode}",
                         item=str(cwd or ""), reason="git_failed")
    return done.stdout.strip()


def is_clone(path: Path) -> bool:
    return (Path(path) / ".git").exists()


def clone_or_pull(repo_url: str, dest: Path, *, full_history: bool = False) -> str:
    """Bring `dest` up to date with `repo_url`; return the checked-out commit.

    A new clone is shallow unless `full_history` (what `--as-of` needs)."""
    dest = Path(dest)
    if is_clone(dest):
        log.info("pulling %s in %s", repo_url, dest)
        _git("pull", "--ff-only", "--quiet", cwd=dest)
    elif dest.exists() and any(dest.iterdir()):
        raise FetchError("exists and is not a git clone; refusing to overwrite it", item=str(dest),
                         hint="remove it or point harvest.acl_data_dir elsewhere", reason="not_a_clone")
    else:
        log.info("cloning %s into %s%s", repo_url, dest, "" if full_history else " (latest commit only)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "--quiet", *(() if full_history else ("--depth", "1")), repo_url, str(dest))
    return head_commit(dest)


def head_commit(repo: Path) -> str:
    return _git("rev-parse", "HEAD", cwd=repo)


def checkout_state(repo: Path) -> dict[str, Any]:
    """Signature fields of a clone harvested as it is on disk: its commit, and whether the
    files differ from it. Empty when git cannot tell (not installed)."""
    try:
        state: dict[str, Any] = {"acl_data_commit": head_commit(repo)}
        if _git("status", "--porcelain", "--untracked-files=no", cwd=repo):
            state["acl_data_modified"] = True
        return state
    except FetchError as exc:
        log.warning("%s: cannot read its git commit (%s); the run's signature goes without it", repo, exc)
        return {}


def commit_before(repo: Path, when: date) -> str:
    """The last commit on the checked-out branch (first parents) made before `when`, 00:00 UTC.

    A shallow clone lacks the older history: it is fetched once, in full, when needed."""
    if not is_clone(repo):
        raise InputFileError("--as-of needs a git clone of the anthology data repository, with its history",
                             item=str(repo), hint="use --update to clone one (harvest.acl_repo_url)")
    limit = datetime.combine(when, time(), timezone.utc) - timedelta(seconds=1)
    args = ("rev-list", "-1", "--first-parent", f"--before={limit.strftime('%Y-%m-%dT%H:%M:%S+0000')}", "HEAD")
    commit = _git(*args, cwd=repo)
    if not commit and _git("rev-parse", "--is-shallow-repository", cwd=repo) == "true":
        log.info("%s holds only recent history; fetching the rest once to find its state before %s", repo, when)
        _git("fetch", "--quiet", "--unshallow", cwd=repo)
        commit = _git(*args, cwd=repo)
    if not commit:
        raise InputFileError(f"the anthology repository has no commit before {when.isoformat()}", item=str(repo))
    return commit


class GitTree:
    """Files of one commit, read from git's object store (one `git cat-file` process).

    Use as a context manager; `paths(folder)` lists the files directly in a folder and
    `read(path)` returns one file's bytes."""

    def __init__(self, repo: Path, commit: str):
        self.repo = Path(repo)
        self.commit = commit
        listing = _git("ls-tree", "-r", "-z", commit, cwd=self.repo)
        self._blobs: dict[str, str] = {}
        for entry in filter(None, listing.split("\0")):
            meta, path = entry.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind == "blob":
                self._blobs[path] = sha
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> GitTree:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=60)
            self._proc = None

    def is_dir(self, folder: str) -> bool:
        prefix = folder.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self._blobs)

    def paths(self, folder: str, suffix: str = "") -> list[str]:
        prefix = folder.rstrip("/") + "/" if folder else ""
        return sorted(p for p in self._blobs
                      if p.startswith(prefix) and "/" not in p[len(prefix):] and p.endswith(suffix))

    def exists(self, path: str) -> bool:
        return path in self._blobs

    def read(self, path: str) -> bytes:
        proc = self._process()
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{self._blobs[path]}\n".encode())
        stdin.flush()
        header = stdout.readline().decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise FetchError(f"git cat-file could not read {path} at {self.commit[:12]}", item=str(self.repo),
                             reason="git_failed")
        data = _read_exactly(stdout, int(header[2]))
        stdout.read(1)  # the newline after each object
        return data

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.repo, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise FetchError("git cat-file ended early", reason="git_failed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
