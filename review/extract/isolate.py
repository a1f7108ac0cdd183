"""Run extractions in worker processes with a hard time limit and a memory cap.

Why: PDF parsers loop forever or eat all memory on some files, and a C library can
crash outright. Each extraction runs in a long-lived child process whose address space
is capped with `resource.setrlimit(RLIMIT_AS)` (start size + memory_mb); the parent waits at most `timeout`
seconds for the answer and otherwise kills the child (SIGKILL) and starts a new one.
A MemoryError inside the child becomes the outcome "memory" (and the child retires, as
its heap may be in bad shape); a child that dies becomes "crash" with the signal name.
Whatever happens, the caller gets an `Extraction`, never an exception, and the next
PDF gets a healthy worker.

Workers are forked (cheap restarts, the backends already imported). The pool is one
event loop over the workers' pipes, so the parent has no threads when it forks.

A worker never outlives its parent: on Linux the kernel kills it when the parent dies
(PR_SET_PDEATHSIG); everywhere, a worker holds no copy of any parent-side pipe end, so
the parent's death closes its pipe and an idle worker's read ends (end of file). And a
worker cannot burn CPU past its time limit even with nobody left to kill it: before each
PDF its CPU-time limit (RLIMIT_CPU) is set to what it has used plus `timeout`.
"""

from __future__ import annotations

import faulthandler
import multiprocessing as mp
import os
import signal
import sys
import time
import weakref
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any, Iterator

from review.extract.core import Extraction, extract_in_process
from review.log import get_logger
from review.procs import die_with_parent

log = get_logger("extract")

def _context() -> Any:
    # fork: a restart costs milliseconds and needs no importable __main__. The parent
    # runs no threads while forking (the pool is one event loop), and a child never
    # touches inherited database connections: it leaves through os._exit.
    return mp.get_context("fork")


def _address_space() -> int:
    """This process's current virtual size in bytes (0 when /proc is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(memory_mb: int) -> None:
    """Cap the address space at the worker's start size plus `memory_mb`.

    A forked worker starts with its parent's mappings (imported libraries, thread
    stacks), which can be hundreds of MB of address space; the cap is the room a PDF
    gets on top of that, so the same setting means the same thing in any parent.
    """
    import resource

    if memory_mb > 0:
        cap = _address_space() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# Parent-side ends of every worker's pipe, so that each new child closes its copies: a
# child holding one would keep that pipe open after the parent died (no end of file).
_PARENT_ENDS: "weakref.WeakSet[Connection]" = weakref.WeakSet()
def _die_with_parent(parent_pid: int) -> None:
    """Die with the parent; exit at once if it is already gone (it died before the request)."""
    die_with_parent()
    if os.getppid() != parent_pid:
        os._exit(0)


def _detach_from_parent_files() -> None:
    """Close the child's copies of parent-side pipe ends, and point fds 0-2 at /dev/null.

    Whoever reads the parent's stdout or stderr (a pipe, `| tee`, a test) sees the end of
    it when the parent exits, not when the last orphaned worker does.
    """
    for end in list(_PARENT_ENDS):
        end.close()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _limit_cpu(seconds: float) -> None:
    """Let this process use at most `seconds` more CPU time; past that the kernel ends it (SIGXCPU)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _worker_main(conn: Connection, memory_mb: int, timeout: float, parent_pid: int) -> None:
    """Child loop: receive (path, backend), send back an Extraction as a dict."""
    _die_with_parent(parent_pid)
    if faulthandler.is_enabled():  # a worker's crash is reported by the parent, not dumped on its terminal
        faulthandler.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # the CPU-time limit ends the process
    _detach_from_parent_files()
    # Fresh stdout/stderr objects: a lock held by a parent thread (a progress bar) at fork
    # time must not block the child; parser warnings are noise here anyway.
    sys.stdout = sys.stderr = open(os.devnull, "w")
    try:
        _limit_memory(memory_mb)
    except (ValueError, OSError) as exc:  # a cap below current use: report, do not die silently
        conn.send({"setup_error": f"cannot set memory cap of {memory_mb} MB: {exc}"})
        return
    conn.send({"ready": os.getpid()})
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the parent is gone
            return
        if job is None:
            return
        path, backend = job
        _limit_cpu(timeout)
        result = extract_in_process(path, backend)
        try:
            conn.send(result.as_dict())
        except MemoryError:
            return
        if result.reason == "memory":
            return  # a fresh worker takes the next PDF


class Worker:
    """One child process; restarted after a timeout, a crash or an out-of-memory."""

    def __init__(self, *, timeout: float, memory_mb: int):
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.proc: Any = None
        self.conn: Connection | None = None
        self.job: Any = None
        self.backend = ""
        self.path = ""
        self.started = 0.0

    def _start(self) -> None:
        ctx = _context()
        parent, child = ctx.Pipe()
        _PARENT_ENDS.add(parent)
        proc = ctx.Process(target=_worker_main, args=(child, self.memory_mb, self.timeout, os.getpid()),
                           daemon=True, name="review-extract-worker")
        proc.start()
        child.close()
        if not parent.poll(60):
            proc.kill()
            raise RuntimeError("extract worker did not start within 60 s")
        try:
            hello = parent.recv()
        except EOFError:
            proc.join(5)
            raise RuntimeError(f"extract worker died at start (exit code {proc.exitcode})") from None
        if "setup_error" in hello:
            proc.join()
            raise RuntimeError(hello["setup_error"])
        self.proc, self.conn = proc, parent

    def _discard(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def close(self) -> None:
        if self.conn is not None and self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(2)
            except (OSError, BrokenPipeError):
                pass
        self._discard()

    @property
    def deadline(self) -> float:
        return self.started + self.timeout

    def submit(self, job: Any, path: str | Path, backend: str) -> None:
        """Hand one PDF to the child (starting a child if needed); answer via `collect`."""
        if self.proc is None or not self.proc.is_alive():
            self._discard()
            self._start()
        assert self.conn is not None
        self.job, self.path, self.backend = job, str(path), backend
        self.started = time.perf_counter()
        self.conn.send((self.path, backend))

    def collect(self) -> Extraction:
        """The answer of a child whose connection is readable (or that died)."""
        assert self.conn is not None
        try:
            data = self.conn.recv()
        except (EOFError, OSError):
            return self._died()
        result = Extraction(**data)
        if result.reason == "memory":
            self._discard()
        return result

    def expire(self) -> Extraction:
        """Kill a child that passed its deadline; the outcome is a timeout."""
        elapsed = time.perf_counter() - self.started
        self._discard()
        log.warning("%s: killed after %.0f s (timeout)", self.path, elapsed)
        return Extraction.failed(self.backend, "timeout", f"no result within {self.timeout:g} s; worker killed",
                                 elapsed)

    def extract(self, path: str | Path, backend: str) -> Extraction:
        """Extract one PDF in the child and wait for it (at most `timeout` seconds)."""
        self.submit(None, path, backend)
        assert self.conn is not None
        if self.conn.poll(self.timeout):
            return self.collect()
        return self.expire()

    def _died(self) -> Extraction:
        elapsed = time.perf_counter() - self.started
        code = None
        if self.proc is not None:
            self.proc.join(5)
            code = self.proc.exitcode
        self._discard()
        if code is not None and code < 0:
            try:
                what = signal.Signals(-code).name
            except ValueError:
                what = f"signal {-code}"
        else:
            what = f"exit code {code}"
        log.warning("%s: extract worker died (%s)", self.path, what)
        if what == "SIGXCPU":  # its CPU-time limit, the same limit as the wall-clock one
            return Extraction.failed(self.backend, "timeout", f"CPU time limit of {self.timeout:g} s reached; "
                                     "worker ended", elapsed)
        # Under a memory cap, allocation failures inside C code end in SIGSEGV/SIGABRT.
        reason = "memory" if what in ("SIGSEGV", "SIGABRT", "SIGBUS") and self.memory_mb > 0 else "crash"
        return Extraction.failed(self.backend, reason, f"worker died ({what})", elapsed)


Job = tuple[Any, str | Path, str]  # (caller's key, path, backend)


class WorkerPool:
    """`size` workers driven by one event loop (no threads), yielding results as they come."""

    def __init__(self, size: int, *, timeout: float, memory_mb: int):
        self.workers = [Worker(timeout=timeout, memory_mb=memory_mb) for _ in range(max(1, size))]

    def imap(self, jobs: Iterator[Job]) -> Iterator[tuple[Any, Extraction]]:
        """Run every job; yield (key, Extraction) in completion order.

        `jobs` is pulled lazily, only when a worker is free, so a caller may claim work
        from the database inside the iterator.
        """
        idle = list(self.workers)
        busy: list[Worker] = []
        exhausted = False
        while True:
            while idle and not exhausted:
                try:
                    key, path, backend = next(jobs)
                except StopIteration:
                    exhausted = True
                    break
                w = idle.pop()
                w.submit(key, path, backend)
                busy.append(w)
            if not busy:
                return
            now = time.perf_counter()
            wait_for = max(0.0, min(w.deadline for w in busy) - now)
            ready = set(mp_wait([w.conn for w in busy if w.conn is not None], timeout=wait_for))
            for w in list(busy):
                if w.conn in ready:
                    result = w.collect()
                elif time.perf_counter() >= w.deadline:
                    result = w.expire()
                else:
                    continue
                busy.remove(w)
                idle.append(w)
                yield w.job, result

    def close(self) -> None:
        for w in self.workers:
            w.close()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def extract_isolated(path: str | Path, backend: str = "pypdfium2", *, timeout: float = 120.0,
                     memory_mb: int = 2048) -> Extraction:
    """Extract one PDF in a fresh worker process (for one-off callers such as `review check`)."""
    from review.extract.backends import get_backend

    get_backend(backend)  # fail fast, in the caller, on a misspelt backend
    worker = Worker(timeout=timeout, memory_mb=memory_mb)
    try:
        return worker.extract(path, backend)
    finally:
        worker.close()
