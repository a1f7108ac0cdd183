"""The content-addressed PDF store: `<data_dir>/pdfs/ab/cd/<sha256>.pdf`.

Why content-addressed: a file's name is its checksum, so a rerun can never overwrite a
good file with a different one, two papers sharing a PDF share one file, and any file can
be verified by hashing it. Downloads are written to a temp file inside the store (same
filesystem), flushed to disk and renamed into place, so a reader sees either nothing or
the whole file. Temp files are named after the host and process that wrote them, so a
later run can delete the leftovers of a killed process without touching live ones.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

from review.claims import ProcessId

TMP_DIR = ".tmp"
STALE_FOREIGN_SECONDS = 24 * 3600  # temp files of other machines are left alone this long


class PdfStore:
    """Where downloaded PDFs live; paths stored in the database are relative to `data_dir`."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.root = self.data_dir / "pdfs"
        self.tmp = self.root / TMP_DIR

    @staticmethod
    def relpath(sha256: str) -> str:
        return f"pdfs/{sha256[:2]}/{sha256[2:4]}/{sha256}.pdf"

    def path(self, relpath: str) -> Path:
        return self.data_dir / relpath

    def has(self, relpath: str | None) -> bool:
        return bool(relpath) and self.path(relpath).is_file()  # type: ignore[arg-type]

    def temp_path(self) -> Path:
        """A fresh temp file name owned by this process: `<host>.<pid>.<random>.part`."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        host = socket.gethostname().replace(".", "_")
        return self.tmp / f"{host}.{os.getpid()}.{uuid.uuid4().hex}.part"

    def commit(self, temp: Path, sha256: str) -> str:
        """Move a finished, flushed temp file to its content address; returns the relpath.

        If the file is already there (same bytes, by construction) the temp file is dropped.
        """
        rel = self.relpath(sha256)
        final = self.path(rel)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.is_file() and final.stat().st_size == temp.stat().st_size:
            temp.unlink(missing_ok=True)
        else:
            os.replace(temp, final)
            _fsync_dir(final.parent)
        return rel

    def clean_stale(self) -> int:
        """Delete temp files left by dead processes (this host) or old ones (other hosts)."""
        if not self.tmp.is_dir():
            return 0
        me = socket.gethostname().replace(".", "_")
        removed = 0
        for part in self.tmp.glob("*.part"):
            bits = part.name.split(".")
            try:
                host, pid = bits[0], int(bits[1])
            except (IndexError, ValueError):
                host, pid = "", -1
            if host == me:
                stale = pid != os.getpid() and ProcessId(socket.gethostname(), pid).gone()
            else:
                try:
                    stale = time.time() - part.stat().st_mtime > STALE_FOREIGN_SECONDS
                except FileNotFoundError:
                    continue
            if stale:
                part.unlink(missing_ok=True)
                removed += 1
        return removed

    def partial_files(self) -> list[Path]:
        return sorted(self.tmp.glob("*.part")) if self.tmp.is_dir() else []


def _fsync_dir(path: Path) -> None:
    """Make the rename itself durable (POSIX); harmless where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
