"""`--update`: clone the anthology data repository, or fast-forward an existing clone.

Why plain git: the data repository is large and changes daily; git fetches only what
changed, and the commit we harvested from goes into the run's signature.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from review.errors import FetchError
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


def clone_or_pull(repo_url: str, dest: Path) -> str:
    """Bring `dest` up to date with `repo_url`; return the checked-out commit."""
    dest = Path(dest)
    if (dest / ".git").exists():
        log.info("pulling %s in %s", repo_url, dest)
        _git("pull", "--ff-only", "--quiet", cwd=dest)
    elif dest.exists() and any(dest.iterdir()):
        raise FetchError("exists and is not a git clone; refusing to overwrite it", item=str(dest),
                         hint="remove it or point harvest.acl_data_dir elsewhere", reason="not_a_clone")
    else:
        log.info("cloning %s into %s", repo_url, dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "--quiet", "--depth", "1", repo_url, str(dest))
    return _git("rev-parse", "HEAD", cwd=dest)
