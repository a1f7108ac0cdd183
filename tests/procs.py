"""Real `review` processes for tests that kill or interrupt them, and checks on what they leave.

`review_command(...)` starts the CLI with SIGINT set to raise KeyboardInterrupt, whatever
the test process inherited: a shell starts background jobs (`bash .ci/run &`) with SIGINT
ignored, an ignored signal stays ignored across exec, and Python then never installs its
Ctrl-C handler, so a Ctrl-C test would pass or fail by how the suite was started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_LAUNCH = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
           "from review.cli import main; main(sys.argv[1:])")


def review_command(*args: str) -> list[str]:
    """argv for `review ARGS...` in a fresh interpreter, Ctrl-C raising KeyboardInterrupt."""
    return [sys.executable, "-c", _LAUNCH, *args]


def start_review(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(review_command(*args), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without REVIEW_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEW_")}
    env.update(extra)
    return env


def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        if stat is not None and stat[1] == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie, killed but not yet reaped, is not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait until none of `pids` runs; return those still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def children_die_with(parent: subprocess.Popen, what: str, *, start_timeout: float = 30,
                      gone_timeout: float = 10) -> None:
    """Wait for `parent`'s child processes, SIGKILL the parent, and assert every child ends.

    Whatever the outcome, nothing is left running: a failed check kills the leftovers.
    """
    helpers: list[int] = []
    try:
        deadline = time.monotonic() + start_timeout
        while not (helpers := children(parent.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert helpers, f"{what} never started"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert wait_gone(helpers, gone_timeout) == [], f"{what} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in wait_gone(helpers, 0):
            os.kill(pid, signal.SIGKILL)


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], int(fields[1])


def sigkill_when(proc: subprocess.Popen, ready, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL `proc` as soon as `ready()` is true: the mid-run kill of the rerun tests."""
    import signal
    import time

    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, f"the {what} never got under way"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
