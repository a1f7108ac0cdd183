"""Reading a checkout without trusting it.

Symlinks are never followed (so a link loop cannot trap the walk; links pointing outside
the checkout are counted apart), special files, binary files and files over the size cap
are skipped, non-UTF-8 text is decoded leniently, unreadable folders are counted, and at
most `max_files` files are taken: every skip is a counter in the report, never a crash.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

from review.codebases.scan.report import ScanReport

BINARY_SNIFF = 8192

DEP_NAMES = re.compile(r"^(?:requirements[\w.-]*\.(?:txt|in)|setup\.py|setup\.cfg|pyproject\.toml|"
                       r"(?:environment|conda|env)[\w.-]*\.ya?ml|pipfile|pipfile\.lock|install[\w.-]*\.sh|"
                       r"\.gitmodules)$", re.I)
SHELL_EXT = {".sh", ".bash", ".zsh", ".cmd", ".bat", ".slurm", ".pbs", ".job"}
SHELL_NAMES = re.compile(r"^(?:makefile|dockerfile|gnumakefile|[\w.-]+\.dockerfile|dockerfile[\w.-]*)$", re.I)
README_EXT = {".md", ".rst", ".markdown", ".org", ".adoc"}
DOC_TXT = re.compile(r"(?:readme|install|usage|instruction|requirement|guide|howto|getting)", re.I)
PERL_EXT = {".pl", ".pm", ".perl"}
OTHER_CODE_EXT = {".lua", ".c", ".cc", ".cpp", ".h", ".hpp", ".java", ".scala", ".go", ".rs", ".js", ".ts", ".jl", ".r"}


@dataclass
class TextFile:
    """A readable text file of the checkout: its path (posix, relative), kind and content."""

    rel: str
    kind: str  # notebook | deps | python | shell | readme | perl | code | other
    content: str


def kind_of(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    ext = os.path.splitext(lower)[1]
    parent = rel.rsplit("/", 2)[-2].lower() if "/" in rel else ""
    if lower.endswith(".ipynb"):
        return "notebook"
    if DEP_NAMES.match(name) or (parent == "requirements" and ext in (".txt", ".in")):
        return "deps"
    if ext == ".py":
        return "python"
    if ext in SHELL_EXT or SHELL_NAMES.match(name):
        return "shell"
    if lower.startswith("readme") or ext in README_EXT or (ext == ".txt" and (DOC_TXT.search(name) or parent == "docs")):
        return "readme"  # a .txt is documentation only when its name or folder says so (else it is data)
    if ext in PERL_EXT:
        return "perl"
    if ext in OTHER_CODE_EXT:
        return "code"
    return "other"


def read_tree(root: Path, report: ScanReport, max_files: int, max_file_bytes: int) -> tuple[list[TextFile], set[str]]:
    """Every readable text file (sorted by path) and every path seen, text or not."""
    texts: list[TextFile] = []
    paths: set[str] = set()
    for rel, path in _walk(root, report, max_files):
        paths.add(rel)
        text = _read_text(path, report, max_file_bytes)
        if text is None:
            continue
        report.files_read += 1
        texts.append(TextFile(rel, kind_of(rel), text))
    return texts, paths


def _walk(root: Path, report: ScanReport, max_files: int) -> Iterator[tuple[str, Path]]:
    root_str = str(root)

    def unreadable(_: OSError) -> None:
        report.skipped["unreadable_folder"] += 1

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable):
        kept = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d == ".git":
                continue
            if os.path.islink(full):
                report.skipped["symlink_outside" if not _inside(full, root_str) else "symlink"] += 1
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                report.skipped["symlink_outside" if not _inside(full, root_str) else "symlink"] += 1
                continue
            if not os.path.isfile(full):
                report.skipped["special_file"] += 1
                continue
            if report.files_seen >= max_files:
                report.truncated = True
                report.skipped["over_file_cap"] += 1
                continue
            report.files_seen += 1
            yield PurePosixPath(Path(full).relative_to(root).as_posix()).as_posix(), Path(full)


def _inside(link: str, root: str) -> bool:
    try:
        target = os.path.realpath(link)
    except (OSError, RuntimeError):  # a loop of links
        return True
    return target == root or target.startswith(root + os.sep)


def _read_text(path: Path, report: ScanReport, max_bytes: int) -> str | None:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            report.skipped["too_large_file"] += 1
            return None
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError:
        report.skipped["unreadable"] += 1
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        report.skipped["binary"] += 1
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        report.skipped["non_utf8_decoded_leniently"] += 1
        return data.decode("utf-8", errors="replace")
