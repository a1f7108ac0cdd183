"""One cached venv per locked environment (a reference or a candidate package).

A venv built from a lock carries the lock's sha256 in `.review-lock-sha256`, the same stamp
`.ci/run`'s `locked_venv` writes, so a venv CI built is reused here and a changed lock
rebuilds it. A release that has no lock (`--package NAME==VERSION`) is installed from
its pip spec into a venv of its own, marked `unlocked` in every result's signature.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from review.log import get_logger

log = get_logger("packages")

LOCKS = Path(__file__).resolve().parents[2] / "locks" / "packages"
STAMP = ".review-lock-sha256"


class InstallFailed(Exception):
    """A venv could not be built; the message is pip's last lines."""


@dataclass(frozen=True)
class Venv:
    path: Path
    locked: bool  # installed from a lock with hashes

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "review-ci" / "packages"


def lock_path(lock: str) -> Path:
    return LOCKS / f"{lock}.txt"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cached(cache: Path, lock: str) -> Venv | None:
    """The venv of `lock` if it is already built from this very lock (tests skip otherwise)."""
    path = cache / lock
    stamp = path / STAMP
    if lock_path(lock).is_file() and stamp.is_file() and stamp.read_text().strip() == _sha(lock_path(lock)):
        return Venv(path, True)
    return None


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", spec).strip("-").lower()


def ensure(cache: Path, *, lock: str | None = None, spec: str | None = None, timeout: float = 900.0) -> Venv:
    """The venv for a lock (preferred) or a bare pip spec, built once and reused after; two
    runs wanting the same venv build it once (the second waits on a lock file)."""
    import fcntl

    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{lock or _slug(spec or '')}.building", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        return _ensure(cache, lock, spec, timeout)


def _ensure(cache: Path, lock: str | None, spec: str | None, timeout: float) -> Venv:
    if lock:
        ready = cached(cache, lock)
        if ready:
            return ready
        lockfile = lock_path(lock)
        if not lockfile.is_file():
            raise InstallFailed(f"no lock file {lockfile}")
        path = cache / lock
        _build(path, ["--require-hashes", "--no-deps", "-r", str(lockfile)], timeout)
        (path / STAMP).write_text(_sha(lockfile) + "\n")
        return Venv(path, True)
    if not spec:
        raise InstallFailed("neither a lock nor a pip spec")
    path = cache / f"unlocked-{_slug(spec)}"
    if (path / STAMP).is_file() and (path / STAMP).read_text().strip() == f"spec:{spec}":
        return Venv(path, False)
    _build(path, [spec], timeout)
    (path / STAMP).write_text(f"spec:{spec}\n")
    return Venv(path, False)


def _build(path: Path, pip_args: list[str], timeout: float) -> None:
    log.info("building venv %s (pip install %s)", path, " ".join(pip_args))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    (path / STAMP).write_text("building\n")  # as .ci/run does: a half-built venv is never taken for a built one
    try:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=timeout)
        done = subprocess.run([str(path / "bin" / "pip"), "install", "-q", *pip_args],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        shutil.rmtree(path, ignore_errors=True)
        raise InstallFailed(f"install timed out after {timeout:.0f}s") from exc
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(path, ignore_errors=True)
        raise InstallFailed(f"venv creation failed: {exc.stderr!r}") from exc
    if done.returncode != 0:
        shutil.rmtree(path, ignore_errors=True)
        lines = [ln for ln in (done.stderr or "").splitlines() if ln.strip() and "is ignored" not in ln]
        raise InstallFailed("pip install failed: " + " | ".join(lines[-3:]))


def installed_version(venv: Venv, dist: str) -> str:
    """The version pip installed (what the result is about, whatever the spec said)."""
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    done = subprocess.run([str(venv.python), "-I", "-c", code], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else "?"
