"""Get a codebase onto disk: a shallow git clone into the cache, or a local archive.

Why so guarded: the repositories are strangers' code. A clone runs with no prompts, no
LFS downloads and no system git config, is killed when it runs past `clone_timeout` or
grows past `max_repo_mb`, and a half-finished clone never stays in the cache. Archives
are unpacked member by member: absolute paths, `..`, links and device files are refused,
and the same size and file-count caps hold. Nothing from the checkout is ever executed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from review.log import get_logger
from review.procs import die_with_parent

log = get_logger("codebases.fetch")

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
POLL_SECONDS = 0.2


class FetchFailed(Exception):
    """The codebase could not be fetched; `reason` is the short word stored per codebase."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class Checkout:
    path: Path
    commit: str | None
    cached: bool  # reused from the cache, not fetched now


def is_archive(path: str | Path) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def cache_path(data_dir: Path, url: str) -> Path:
    """clones/<host>/<owner>/<name> under the data directory (names made filesystem-safe)."""
    parts = urlsplit(url)
    host = (parts.hostname or "local").lower()
    segs = [s for s in parts.path.split("/") if s not in ("", ".", "..")]
    safe = [_safe(s.removesuffix(".git")) for s in segs] or ["repo"]
    return data_dir / "clones" / _safe(host) / Path(*safe)


def _safe(seg: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in seg)[:120] or "_"


def dir_bytes(path: Path, stop_at: int | None = None) -> int:
    """Bytes under path (symlinks not followed); stops counting early past `stop_at`."""
    total = 0
    for dirpath, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
            if stop_at is not None and total > stop_at:
                return total
    return total


def git_clone(url: str, dest: Path, *, timeout: float, max_bytes: int, refresh: bool = False) -> Checkout:
    """Shallow-clone url into dest (reusing a finished clone unless refresh)."""
    if dest.joinpath(".git").is_dir() and dest.joinpath(".git", "review-complete").exists() and not refresh:
        return Checkout(dest, _head(dest), cached=True)
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_LFS_SKIP_SMUDGE="1", GIT_CONFIG_NOSYSTEM="1",
               GIT_ASKPASS="/bin/true", SSH_ASKPASS="/bin/true", GIT_SSH_COMMAND="ssh -oBatchMode=yes")
    cmd = ["git", "-c", "protocol.file.allow=always", "-c", "core.fsmonitor=false", "clone", "--depth", "1",
           "--single-branch", "--no-tags", "--quiet", url, str(dest)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True,
                            preexec_fn=die_with_parent)  # a SIGKILLed scan leaves no clone running
    try:
        while proc.poll() is None:
            if time.monotonic() - started > timeout:
                raise FetchFailed("clone_timeout", f"clone took longer than {timeout:g} s")
            if dest.exists() and dir_bytes(dest, stop_at=max_bytes) > max_bytes:
                raise FetchFailed("too_large", f"clone grew past {max_bytes // 1_000_000} MB")
            time.sleep(POLL_SECONDS)
        err = (proc.stderr.read() if proc.stderr else b"").decode("utf-8", "replace").strip()
        if proc.returncode != 0:
            reason = "not_found" if "not found" in err.lower() or "does not exist" in err.lower() else "clone_failed"
            raise FetchFailed(reason, err.splitlines()[-1] if err else f"git exited {proc.returncode}")
        if dir_bytes(dest, stop_at=max_bytes) > max_bytes:
            raise FetchFailed("too_large", f"checkout is larger than {max_bytes // 1_000_000} MB")
    except BaseException:
        _kill_group(proc)
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        if proc.stderr:
            proc.stderr.close()
    dest.joinpath(".git", "review-complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return Checkout(dest, _head(dest), cached=False)


def _kill_group(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Kill git and the helpers it started (index-pack, remote helpers): they write into dest too."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    time.sleep(POLL_SECONDS)  # let the killed helpers' file handles close before removing the folder


def _head(path: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def unpack_archive(archive: Path, dest: Path, *, max_bytes: int, max_files: int) -> Checkout:
    """Unpack a .zip or .tar(.gz) safely into dest (see the module docstring)."""
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        if archive.name.lower().endswith(".zip"):
            _unzip(archive, dest, max_bytes, max_files)
        else:
            _untar(archive, dest, max_bytes, max_files)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise FetchFailed("bad_archive", f"{archive.name}: {exc}") from None
    except FetchFailed:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Checkout(_single_root(dest), None, cached=False)


def _member_path(dest: Path, name: str) -> Path | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return dest.joinpath(*p.parts)


def _unzip(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    total = count = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            target = _member_path(dest, info.filename)
            mode = (info.external_attr >> 16) & 0o170000
            if target is None or mode in (0o120000,):  # unsafe path or symlink
                continue
            count += 1
            total += info.file_size
            if count > max_files or total > max_bytes:
                raise FetchFailed("too_large", f"archive holds more than {max_files} files or {max_bytes // 1_000_000} MB")
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                shutil.copyfileobj(src, out)


def _untar(archive: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    total = count = 0
    with tarfile.open(archive) as tf:
        for member in tf:
            if not member.isfile():
                continue  # directories are made as needed; links and devices are refused
            target = _member_path(dest, member.name)
            if target is None:
                continue
            count += 1
            total += member.size
            if count > max_files or total > max_bytes:
                raise FetchFailed("too_large", f"archive holds more than {max_files} files or {max_bytes // 1_000_000} MB")
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tf.extractfile(member)
            if src is None:
                continue
            with src, target.open("wb") as out:
                shutil.copyfileobj(src, out)


def _single_root(dest: Path) -> Path:
    """GitHub-style archives wrap everything in one folder; scan from inside it."""
    entries = list(dest.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
