"""Get a codebase onto disk: a shallow git clone into the cache, or a local archive.

Why so guarded: the repositories are strangers' code. A clone runs with no prompts, no
LFS downloads and no system git config, is killed when it runs past `clone_timeout` or
grows past `max_repo_mb`, and a half-finished clone never stays in the cache. Archives
are unpacked member by member: absolute paths, `..`, links, device files and members over
the per-file cap are refused and counted (the scan reports them in `skipped` and `limits`),
and the same size and file-count caps hold. Nothing from the checkout is ever executed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO
from urllib.parse import urlsplit

from review.log import get_logger
from review.procs import die_with_parent
from review.redact import redact

log = get_logger("codebases.fetch")

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
POLL_SECONDS = 0.2
COPY_CHUNK = 1 << 16
GIT_ERROR_CHARS = 2000  # what `codebases.scan_detail` keeps of a failed clone


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
    skipped: Counter[str] = field(default_factory=Counter)  # archive members refused, by kind (REFUSED)
    limits: list[str] = field(default_factory=list)  # what the fetch could not take, for the scan's `limits`


def is_archive(path: str | Path) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def cache_path(data_dir: Path, url: str) -> Path:
    """clones/<host>/<owner>/<name> under the data directory (names made filesystem-safe)."""
    parts = urlsplit(url)
    host = (parts.hostname or "local").lower()
    segs = [s for s in parts.path.split("/") if s not in ("", ".", "..")]
    safe = [safe_segment(s.removesuffix(".git")) for s in segs] or ["repo"]
    return data_dir / "clones" / safe_segment(host) / Path(*safe)


def safe_segment(seg: str) -> str:
    """One path segment made filesystem-safe (and at most 120 characters)."""
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
    stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty git never blocks on a full pipe
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True,
                            preexec_fn=die_with_parent)  # a SIGKILLed scan leaves no clone running
    try:
        while proc.poll() is None:
            if time.monotonic() - started > timeout:
                raise FetchFailed("clone_timeout", f"clone took longer than {timeout:g} s")
            if dest.exists() and dir_bytes(dest, stop_at=max_bytes) > max_bytes:
                raise FetchFailed("too_large", f"clone grew past {max_bytes // 1_000_000} MB")
            time.sleep(POLL_SECONDS)
        if proc.returncode != 0:
            err = git_error(stderr)
            low = err.lower()
            reason = "not_found" if "not found" in low or "does not exist" in low else "clone_failed"
            raise FetchFailed(reason, err or f"git exited {proc.returncode}")
        if dir_bytes(dest, stop_at=max_bytes) > max_bytes:
            raise FetchFailed("too_large", f"checkout is larger than {max_bytes // 1_000_000} MB")
    except BaseException:
        _kill_group(proc)
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        stderr.close()
    dest.joinpath(".git", "review-complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return Checkout(dest, _head(dest), cached=False)


def git_error(stderr: IO[bytes], limit: int = GIT_ERROR_CHARS) -> str:
    """git's whole error text, redacted, at most `limit` characters (its start and its end).

    Why whole: git's last line is often advice ("and the repository exists."), the cause is
    above it. Why redacted: git echoes URLs and helper output, which may hold a credential.
    """
    size = stderr.seek(0, os.SEEK_END)
    stderr.seek(0)
    if size <= 8 * limit:
        raw = stderr.read()
    else:  # only both ends can be kept anyway: read no more of a huge error than that
        raw = stderr.read(4 * limit)
        stderr.seek(-4 * limit, os.SEEK_END)
        raw += b"\n" + stderr.read()
    text = redact(raw.decode("utf-8", "replace")).strip()
    if len(text) <= limit:
        return text
    keep = (limit - 40) // 2
    return f"{text[:keep]}\n... ({len(text) - 2 * keep} characters cut) ...\n{text[-keep:]}"


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


# why each refused archive member is refused: the counter in the scan's `skipped`, and its words
REFUSED = {
    "archive_absolute_path": "absolute path",
    "archive_parent_path": "'..' in the path",
    "archive_symlink": "symbolic link",
    "archive_hard_link": "hard link",
    "archive_special_file": "device, FIFO or other special file",
    "archive_member_too_large": "over code.max_file_kb",
}
REFUSED_NAMES_SHOWN = 5


class _Unpacker:
    """Writes the members an archive may hold into dest and keeps count of those it refuses.

    Sizes are counted as bytes actually written, not as the archive's headers claim, so a
    member that lies about its size (a zip bomb) is cut off at the cap all the same.
    """

    def __init__(self, archive: Path, dest: Path, max_bytes: int, max_files: int, max_file_bytes: int | None):
        self.archive, self.dest = archive, dest
        self.max_bytes, self.max_files, self.max_file_bytes = max_bytes, max_files, max_file_bytes
        self.total = self.count = 0
        self.refused: Counter[str] = Counter()
        self.refused_names: list[str] = []

    def refuse(self, kind: str, name: str) -> None:
        self.refused[kind] += 1
        if len(self.refused_names) < REFUSED_NAMES_SHOWN:
            self.refused_names.append(name)
        log.warning("archive %s: member %r refused (%s)", self.archive.name, name, REFUSED[kind])

    def target(self, name: str) -> Path | None:
        """Where a regular member goes, or None (counted) when its path leaves dest."""
        p = PurePosixPath(name.replace("\\", "/"))
        if p.is_absolute() or (p.parts and p.parts[0].endswith(":")):
            self.refuse("archive_absolute_path", name)
            return None
        if ".." in p.parts:
            self.refuse("archive_parent_path", name)
            return None
        parts = [s for s in p.parts if s != "."]
        return self.dest.joinpath(*parts) if parts else None

    def write(self, name: str, target: Path, src: IO[bytes]) -> None:
        """Copy one member, stopping at the per-file cap (member refused) or the archive caps (fetch fails)."""
        self.count += 1
        if self.count > self.max_files:
            raise FetchFailed("too_large", f"archive holds more than {self.max_files} files")
        cap = self.max_bytes - self.total
        if self.max_file_bytes is not None:
            cap = min(cap, self.max_file_bytes)
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with target.open("wb") as out:
            while written <= cap:
                chunk = src.read(min(COPY_CHUNK, cap + 1 - written))
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
        if written > cap:
            target.unlink()
            if self.max_file_bytes is not None and written > self.max_file_bytes:
                self.refuse("archive_member_too_large", name)
                return
            raise FetchFailed("too_large", f"archive unpacks to more than {self.max_bytes // 1_000_000} MB")
        self.total += written

    def limits(self) -> list[str]:
        """One line for the scan's `limits` naming what was refused and a few of the members."""
        if not self.refused:
            return []
        kinds = ", ".join(f"{REFUSED[k]} {n}" for k, n in sorted(self.refused.items()))
        n = sum(self.refused.values())
        names = ", ".join(repr(x) for x in self.refused_names) + (" ..." if n > len(self.refused_names) else "")
        return [f"archive {self.archive.name}: {n} members refused ({kinds}): {names}"]


def unpack_archive(archive: Path, dest: Path, *, max_bytes: int, max_files: int,
                   max_file_bytes: int | None = None) -> Checkout:
    """Unpack a .zip or .tar(.gz) safely into dest (see the module docstring).

    Refused members are counted in the checkout's `skipped` and named in its `limits`:
    the scan reports them, so a hostile archive never passes for a small clean one.
    """
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    unpacker = _Unpacker(archive, dest, max_bytes, max_files, max_file_bytes)
    try:
        if archive.name.lower().endswith(".zip"):
            _unzip(archive, unpacker)
        else:
            _untar(archive, unpacker)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error, RuntimeError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise FetchFailed("bad_archive", f"{archive.name}: {exc}") from None
    except FetchFailed:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Checkout(_single_root(dest), None, cached=False, skipped=unpacker.refused, limits=unpacker.limits())


def _unzip(archive: Path, unpacker: _Unpacker) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0o170000
            if info.is_dir() or mode == 0o040000:
                continue
            if mode == 0o120000:
                unpacker.refuse("archive_symlink", info.filename)
                continue
            if mode not in (0, 0o100000):
                unpacker.refuse("archive_special_file", info.filename)
                continue
            target = unpacker.target(info.filename)
            if target is not None:
                with zf.open(info) as src:
                    unpacker.write(info.filename, target, src)


def _untar(archive: Path, unpacker: _Unpacker) -> None:
    with tarfile.open(archive) as tf:
        for member in tf:
            if member.isdir():
                continue  # directories are made as needed
            if member.issym():
                unpacker.refuse("archive_symlink", member.name)
                continue
            if member.islnk():
                unpacker.refuse("archive_hard_link", member.name)
                continue
            if not member.isfile():
                unpacker.refuse("archive_special_file", member.name)
                continue
            target = unpacker.target(member.name)
            src = tf.extractfile(member) if target is not None else None
            if target is not None and src is not None:
                with src:
                    unpacker.write(member.name, target, src)


def _single_root(dest: Path) -> Path:
    """GitHub-style archives wrap everything in one folder; scan from inside it."""
    entries = list(dest.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
