"""Processes we start must not outlive the process that started them.

A SIGKILLed `review extract` or `review code scan` cannot clean up after itself, so its
children (extract workers, `git clone`) ask the kernel up front to kill them when their
parent dies. Linux only (prctl); elsewhere they end when their pipes close.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent_pid: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies.

    Call it in the child (a worker's first line, or `preexec_fn` of a subprocess). The
    signal follows the parent *thread* that forked: start children from a thread that
    outlives them. With `parent_pid` (the parent's pid, taken before the fork) a child
    whose parent died before the request exits at once instead of living on.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the caller's pipes still end an idle child
        return
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(0)
