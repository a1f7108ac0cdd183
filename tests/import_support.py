"""Helpers for the import tests: real PDFs, archives built member by member, paper rows.

Archives are written with tarfile/zipfile themselves (not by copying a folder), so a
test can put in exactly what a hostile or broken archive holds: `../` and absolute
names, symbolic and hard links, a cut-off member, a zip member that lies about its size.
"""

from __future__ import annotations

import hashlib
import io
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import pypdfium2 as pdfium

from review.db.models import Paper, SourceRecord


def make_pdf(n: int = 0, pad: int = 0) -> bytes:
    """A small valid PDF, different for each `n`; `pad` bytes of comments after the header
    make it bigger while it still ends in %%EOF, as a real PDF does."""
    doc = pdfium.PdfDocument.new()
    doc.new_page(200 + n, 300)
    buf = io.BytesIO()
    doc.save(buf)
    data = buf.getvalue()
    if pad:
        head, _, rest = data.partition(b"\n")
        line = b"% padding to make the file bigger than one read chunk\n"
        data = head + b"\n" + line * (pad // len(line) + 1) + rest
    return data


def crc(data: bytes) -> str:
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def add_paper(db, ident: str, *, crc32: str | None = None, sha256: str | None = None, doi: str | None = None,
              arxiv: str | None = None, title: str | None = None, pdf_url: str | None = "auto",
              year: int = 2020) -> int:
    """A harvested ACL paper (with its acl source record, as the harvester writes it)."""
    if pdf_url == "auto":
        pdf_url = f"https://aclanthology.org/{ident}.pdf"
    with db.session() as s:
        paper = Paper(ident=ident, source="acl", title=title or f"Paper {ident}", pdf_url=pdf_url, pdf_crc32=crc32,
                      pdf_sha256=sha256, doi=doi, arxiv_id=arxiv, venue="acl", venues=["acl"], year=year)
        paper.records.append(SourceRecord(source="acl", source_id=ident, raw={}))
        s.add(paper)
        s.flush()
        return paper.id


def write_tar(path: Path, members: list[tuple], mode: str = "w") -> Path:
    """members: (name, bytes) files, (name, "symlink", target) or (name, "hardlink", target)."""
    with tarfile.open(path, mode) as tar:
        for member in members:
            info = tarfile.TarInfo(member[0])
            if len(member) == 3:
                info.type = tarfile.SYMTYPE if member[1] == "symlink" else tarfile.LNKTYPE
                info.linkname = member[2]
                tar.addfile(info)
            else:
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return path


def write_zip(path: Path, members: list[tuple]) -> Path:
    """members: (name, bytes) files or (name, "symlink", target)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member in members:
            info = zipfile.ZipInfo(member[0])
            info.compress_type = zipfile.ZIP_DEFLATED
            if len(member) == 3:
                info.external_attr = (0o120777 << 16)
                zf.writestr(info, member[2])
            else:
                info.external_attr = (0o100644 << 16)
                zf.writestr(info, member[1])
    return path


def zip_bomb(path: Path, name: str, size: int, *, declared: int | None = None) -> Path:
    """A zip with one member of `size` zero bytes (deflate makes it ~1000x smaller).

    With `declared`, both size fields (local header and central directory) claim that
    many bytes instead: the lying member of a crafted bomb."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w") as zf:
        with zf.open(info, "w", force_zip64=False) as fh:
            block = b"\0" * (1 << 20)
            left = size
            while left > 0:
                fh.write(block[:left])
                left -= len(block)
    if declared is not None:
        data = bytearray(path.read_bytes())
        for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size field
            at = data.find(sig)
            struct.pack_into("<I", data, at + offset, declared)
        path.write_bytes(bytes(data))
    return path
