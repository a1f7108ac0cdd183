"""Copy one file into the PDF store's temp area, checked as the downloader checks.

The same checks as a download (review/download/fetch.py): at most `download.max_bytes`
(counted while reading, so a member that lies about its size, or a zip bomb, stops at
the cap), the `%PDF-` magic in the first KiB, and the record's CRC32 / sha256 when they
are known (`checks()`, once the file is matched). A download is complete when its body
matches Content-Length; a file has no such header, so completeness is the `%%EOF`
marker PDF writers put at the end (a cut-off file lacks it).

Hashes are computed on the way, so a file is read once: the temp file is either
committed to its content address or deleted.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from review.download.fetch import CHUNK, MAGIC_WINDOW, crc32_hex, is_pdf
from review.download.store import PdfStore

EOF_MARKER = b"%%EOF"
TAIL_WINDOW = 2048  # writers may add a newline, padding or a short trailer after %%EOF

# Reasons, shared with the downloader's words where they mean the same.
TOO_LARGE = "too_large"
NOT_PDF = "not_pdf"
TRUNCATED = "truncated"
CHECKSUM = "checksum_mismatch"
UNREADABLE = "unreadable"


@dataclass
class Copied:
    """A file copied to a temp file with its hashes, or why it was not."""

    size: int = 0
    sha256: str | None = None
    crc32: str | None = None
    temp: Path | None = None
    reason: str | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    def discard(self) -> None:
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None


def copy_checked(stream: IO[bytes], store: PdfStore, *, max_bytes: int, fsync: bool = True) -> Copied:
    """Stream `stream` into a temp file of `store`, hashing it; never more than `max_bytes`.

    On any failed check the temp file is removed and `reason` says why; on success the
    caller owns `temp` (commit it with `store.commit` or `discard()` it).
    """
    digest, crc, size = hashlib.sha256(), 0, 0
    head, tail = b"", b""
    temp = store.temp_path()
    out = Copied(temp=temp)
    try:
        with temp.open("wb") as fh:
            while True:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    return _fail(out, TOO_LARGE, f"more than the limit of {max_bytes} bytes (download.max_bytes)")
                if len(head) < MAGIC_WINDOW:
                    head += chunk[: MAGIC_WINDOW - len(head)]
                tail = (tail + chunk)[-TAIL_WINDOW:]
                digest.update(chunk)
                crc = zlib.crc32(chunk, crc)
                fh.write(chunk)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
    except Exception as exc:  # a damaged archive member: bad CRC, cut-off gzip, I/O error
        return _fail(out, UNREADABLE, f"cannot read the file: {type(exc).__name__}: {exc}")
    except BaseException:  # Ctrl-C mid-copy: leave no temp file behind
        out.discard()
        raise
    out.size, out.sha256, out.crc32 = size, digest.hexdigest(), crc32_hex(crc)
    if not is_pdf(head):
        return _fail(out, NOT_PDF, f"starts with {head[:40]!r}, not %PDF-")
    if EOF_MARKER not in tail:
        return _fail(out, TRUNCATED, f"no %%EOF at the end of its {size} bytes: the file is cut off")
    return out


def checks(copied: Copied, *, crc32: str | None, sha256: str | None) -> tuple[str, str] | None:
    """(reason, detail) when the file is not the one the record describes, else None."""
    if crc32 and crc32.strip().lower().zfill(8) != copied.crc32:
        return CHECKSUM, f"crc32 {copied.crc32}, the record says {crc32.lower()} (another version of the paper?)"
    if sha256 and sha256.lower() != copied.sha256:
        return CHECKSUM, f"sha256 {copied.sha256[:12]}..., the record says {sha256[:12]}..."
    return None


def _fail(out: Copied, reason: str, detail: str) -> Copied:
    out.discard()
    out.reason, out.detail = reason, detail
    return out
