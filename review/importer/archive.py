"""The files of a folder, a tar (plain or compressed) or a zip, one at a time.

Why streaming: the Anthology's PDF bundle is about 45 GB; it is read member by member
(tarfile's stream mode, zipfile's member streams) and never unpacked to disk as a
whole. Nothing is ever written under a member's own name, so a hostile name cannot
escape the store; such names, links and special files are still refused and reported,
so the user sees what their archive holds.

Each `Entry` is valid until the next one is taken (a tar stream cannot go back).
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable

from review.errors import InputFileError

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)

# Why a file was refused without reading it.
UNSAFE_PATH = "unsafe_path"
LINK = "link"
NOT_REGULAR = "not_regular_file"
ENCRYPTED = "encrypted_member"
DAMAGED = "damaged_archive"
REST = "(rest of the archive)"  # the ledger's name for what a cut-off archive no longer holds


@dataclass
class Entry:
    """One file of the source: its name, declared size, and how to read it (or why not)."""

    name: str
    size: int | None
    opener: Callable[[], IO[bytes]] | None = None
    refused: str | None = None  # UNSAFE_PATH, LINK, NOT_REGULAR, ENCRYPTED
    detail: str | None = None


def kind_of(path: Path) -> str:
    """folder, tar, zip or file; anything else is an input error naming the path."""
    if path.is_dir():
        return "folder"
    if not path.exists():
        raise InputFileError("no such file or folder", item=str(path))
    name = path.name.lower()
    if name.endswith(TAR_SUFFIXES):
        return "tar"
    if name.endswith(ZIP_SUFFIXES) or zipfile.is_zipfile(path):
        return "zip"
    if name.endswith(".pdf"):
        return "file"
    raise InputFileError("not a folder, .tar, .tar.gz, .zip or .pdf", item=str(path),
                         hint="give a folder of PDFs or an archive of them")


def shown(name: str) -> str:
    """A member name that any database can store: NUL bytes and undecodable bytes escaped."""
    return name.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def unsafe_name(name: str) -> str | None:
    """Why a member name could point outside a folder (absolute, drive letter, `..`), or None."""
    norm = name.replace("\\", "/")
    if "\x00" in norm:
        return "the name contains a NUL byte"
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":" and norm[0].isalpha()):
        return "an absolute path"
    if ".." in norm.split("/"):
        return "a path that climbs out of its folder (..)"
    return None


def entries(path: Path) -> Iterator[Entry]:
    """Every file of the folder or archive at `path`, in archive order (folders: sorted)."""
    kind = kind_of(path)
    if kind == "folder":
        yield from _folder(path)
    elif kind == "tar":
        yield from _tar(path)
    elif kind == "zip":
        yield from _zip(path)
    else:
        yield Entry(path.name, path.stat().st_size, opener=lambda: path.open("rb"))


def count(path: Path) -> int | None:
    """How many entries there are, when that is cheap to know (not for a tar stream)."""
    kind = kind_of(path)
    if kind == "folder":
        return sum(len(files) + sum(1 for d in dirs if (Path(root) / d).is_symlink())
                   for root, dirs, files in os.walk(path))
    if kind == "zip":
        with zipfile.ZipFile(path) as zf:
            return sum(1 for info in zf.infolist() if not info.is_dir())
    return 1 if kind == "file" else None


def _folder(root: Path) -> Iterator[Entry]:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        here = Path(folder)
        for name in sorted(files) + sorted(d for d in dirs if (here / d).is_symlink()):
            full = here / name
            rel = shown(full.relative_to(root).as_posix())
            try:
                st = full.lstat()
            except OSError as exc:
                yield Entry(rel, None, refused=NOT_REGULAR, detail=f"cannot stat: {exc.strerror}")
                continue
            if stat.S_ISLNK(st.st_mode):
                yield Entry(rel, None, refused=LINK, detail=f"a symbolic link to {os.readlink(full)}")
            elif not stat.S_ISREG(st.st_mode):
                yield Entry(rel, None, refused=NOT_REGULAR, detail="not a regular file")
            else:
                yield Entry(rel, st.st_size, opener=lambda f=full: f.open("rb"))


def _tar(path: Path) -> Iterator[Entry]:
    try:
        tar = tarfile.open(path, mode="r|*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputFileError(f"cannot read the archive: {exc}", item=str(path)) from None
    with tar:
        try:
            for member in tar:
                entry = _tar_entry(tar, member)
                if entry is not None:
                    yield entry
        except (tarfile.TarError, EOFError, OSError) as exc:
            # A damaged or cut-off archive: what was read so far stays imported.
            yield Entry(REST, None, refused=DAMAGED, detail=f"the archive is damaged or cut off here: {exc}")


def _tar_entry(tar: tarfile.TarFile, member: tarfile.TarInfo) -> Entry | None:
    name = shown(member.name)
    if member.isdir():
        return None
    why = unsafe_name(member.name)
    if why:
        return Entry(name, member.size, refused=UNSAFE_PATH, detail=why)
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        return Entry(name, None, refused=LINK, detail=f"a {kind} link to {member.linkname}")
    if not member.isreg():
        return Entry(name, None, refused=NOT_REGULAR, detail="not a regular file (device, fifo, ...)")

    def opener() -> IO[bytes]:
        stream = tar.extractfile(member)
        if stream is None:  # cannot happen for a regular member
            raise OSError("no data for this member")
        return stream

    return Entry(name, member.size, opener=opener)


def _zip(path: Path) -> Iterator[Entry]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputFileError(f"cannot read the archive: {exc}", item=str(path)) from None
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name, why, mode = shown(info.filename), unsafe_name(info.filename), info.external_attr >> 16
            if why:
                yield Entry(name, info.file_size, refused=UNSAFE_PATH, detail=why)
            elif stat.S_ISLNK(mode):
                yield Entry(name, None, refused=LINK, detail="a symbolic link")
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # many zips set permissions but no file type
                yield Entry(name, None, refused=NOT_REGULAR, detail="not a regular file")
            elif info.flag_bits & 0x1:
                yield Entry(name, info.file_size, refused=ENCRYPTED, detail="encrypted (needs a password)")
            else:
                yield Entry(name, info.file_size, opener=lambda i=info: zf.open(i))
