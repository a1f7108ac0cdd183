"""Helpers for the codebase tests: real git repositories built on the spot, papers in a database."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Mapping

from review.db.models import Paper, PaperText
from review.db.session import Database

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def make_repo(root: Path, files: Mapping[str, str | bytes], *, symlinks: Mapping[str, str] | None = None,
              commit: bool = True) -> Path:
    """A git repository at root holding `files` (path -> text or bytes), committed once."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for rel, target in (symlinks or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    if commit:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


def notebook(cells: list[tuple[str, str]]) -> str:
    """An nbformat-4 notebook JSON with (cell_type, source) cells, sources split in lines."""
    import json

    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": t, "metadata": {}, "source": src.splitlines(keepends=True),
                   **({"outputs": [], "execution_count": None} if t == "code" else {})} for t, src in cells],
    }, indent=1)


def add_paper(db: Database, ident: str, title: str, *, text: str | None = None, **fields: Any) -> int:
    """Insert a paper (and its extracted text) directly: other stages are built in parallel."""
    with db.session() as s:
        p = Paper(ident=ident, source=fields.pop("source", "acl"), title=title, **fields)
        s.add(p)
        s.flush()
        if text is not None:
            s.add(PaperText(paper_id=p.id, content=text, chars=len(text), outcome="ok"))
        return p.id


def main_script(*lines: str) -> str:
    """A Python script that runs `lines` (one statement each, first the imports) under a
    `__main__` guard, as research evaluation scripts do."""
    imports = [ln for ln in lines if ln.startswith(("import ", "from "))]
    body = [ln for ln in lines if ln not in imports]
    return "\n".join(imports) + "\n\n\ndef main():\n" + "".join(f"    {ln}\n" for ln in body) + (
        "\n\nif __name__ == '__main__':\n    main()\n")


def scan(root: Path, **kw: Any):  # type: ignore[no-untyped-def]
    """The scan of one checkout with the project's catalog."""
    from review.codebases.scan import scan_tree

    return scan_tree(root, _catalog(), **kw)


_CATALOG: list[Any] = []


def _catalog() -> Any:
    if not _CATALOG:
        from review.codebases.catalog import load_catalog

        _CATALOG.append(load_catalog())
    return _CATALOG[0]
