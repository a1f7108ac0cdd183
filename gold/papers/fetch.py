"""Bring the PDFs of a papers gold file from their public sources, byte for byte.

The PDFs are third-party files and stay out of git; each gold entry records where its
file lives (`source`: GitHub repository, commit, path, git blob id, sha256, size) and,
where the paper has one, its ACL Anthology address (`acl_anthology`, for reference only:
the Anthology's own file may differ in bytes from the copy that was labelled). This
script puts every file where the entry's `pdf` path points, checking the sha256 and the
git blob id, so the labels always describe exactly the text that was read.

Sources, tried in order for each missing file:

1. `--local DIR` (repeatable): any file under DIR with the right sha256;
2. `--git-dir DIR` (repeatable): a local clone or bare mirror holding the blob;
3. https://raw.githubusercontent.com/<repo>/<commit>/<path> through the project's HTTP
   layer (polite, retried).

Usage (from the repository root):

    python gold/papers/fetch.py                       # gold/papers/dev.jsonl -> gold/papers/pdfs/
    python gold/papers/fetch.py --git-dir /path/to/SVAIGBA+paper_list/repo --local ../shared/fixtures/pdfs
    python gold/papers/fetch.py --check               # only say what is missing or wrong

Exit status: 0 when every file is present and verified, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class Wanted:
    id: str
    target: Path
    repo: str
    commit: str
    path: str
    blob: str
    sha256: str
    size: int

    @property
    def url(self) -> str:
        return RAW.format(repo=self.repo, commit=self.commit, path=quote(self.path))

    def verify(self, data: bytes) -> str | None:
        """Why `data` is not this file, or None when it is."""
        if len(data) != self.size:
            return f"{len(data)} bytes, expected {self.size}"
        if hashlib.sha256(data).hexdigest() != self.sha256:
            return "sha256 differs"
        if git_blob_id(data) != self.blob:
            return "git blob id differs"
        return None


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def wanted(gold: Path) -> Iterator[Wanted]:
    """The files a gold file names, with where they come from."""
    for number, line in enumerate(gold.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entry = json.loads(line)
        src, pdf = entry.get("source"), entry.get("pdf")
        if not pdf:
            continue
        if not isinstance(src, dict):
            raise SystemExit(f"{gold}:{number}: entry {entry.get('id')!r} has no `source` to fetch from")
        yield Wanted(str(entry["id"]), (gold.parent / pdf).resolve(), src["repo"], src["commit"], src["path"],
                     src["blob"], src["sha256"], int(src["bytes"]))


def local_index(folders: Iterable[Path]) -> dict[str, Path]:
    """sha256 -> file, for every file under the given folders."""
    index: dict[str, Path] = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                index.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), p)
    return index


def from_git(git_dirs: Iterable[Path], blob: str) -> bytes | None:
    for git_dir in git_dirs:
        done = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blob], capture_output=True)
        if done.returncode == 0:
            return done.stdout
    return None


class Web:
    """raw.githubusercontent.com through review.http (imported only when needed)."""

    def __init__(self) -> None:
        self._client = None

    def get(self, url: str) -> tuple[bytes | None, str]:
        if self._client is None:
            sys.path.insert(0, str(HERE.parents[1]))
            from review.http import HttpClient
            from review.settings import HttpSettings

            self._client = HttpClient(HttpSettings())
        from review.errors import FetchError

        try:
            resp = self._client.get(url, timeout=120)
        except FetchError as exc:
            return None, f"{exc.reason or 'fetch failed'}"
        if resp.status_code != 200:
            return None, f"HTTP {resp.status_code}"
        return resp.content, ""


def write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".part")
    tmp.write_bytes(data)
    tmp.replace(target)


def fetch_all(items: list[Wanted], *, local: dict[str, Path], git_dirs: list[Path], web: bool,
              check_only: bool) -> int:
    counts: dict[str, int] = {}
    failed = []
    client = Web() if web else None
    for w in items:
        if w.target.is_file() and w.verify(w.target.read_bytes()) is None:
            counts["present"] = counts.get("present", 0) + 1
            continue
        if check_only:
            failed.append((w, "missing" if not w.target.exists() else "present but not the labelled file"))
            continue
        data, how, reasons = None, "", []
        if w.sha256 in local:
            data, how = local[w.sha256].read_bytes(), "local"
        if data is None and git_dirs:
            data, how = from_git(git_dirs, w.blob), "git"
        if data is None and client is not None:
            data, why = client.get(w.url)
            how = "web"
            if data is None:
                reasons.append(f"{w.url}: {why}")
        problem = w.verify(data) if data is not None else "not found in any source"
        if problem:
            failed.append((w, "; ".join([problem, *reasons])))
            continue
        write_atomically(w.target, data)  # type: ignore[arg-type]
        counts[how] = counts.get(how, 0) + 1
    for w, why in failed:
        print(f"{w.id}: {why} ({w.repo}@{w.commit[:10]}:{w.path})", file=sys.stderr)
    done = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
    print(f"{len(items)} files: {done}; {len(failed)} missing or wrong", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, default=HERE / "dev.jsonl", help="gold file (default: dev.jsonl here)")
    parser.add_argument("--local", type=Path, action="append", default=[], help="folder of already downloaded files")
    parser.add_argument("--git-dir", type=Path, action="append", default=[], help="local clone or mirror of a source repository")
    parser.add_argument("--offline", action="store_true", help="use only --local and --git-dir sources")
    parser.add_argument("--check", action="store_true", help="fetch nothing; report missing or wrong files")
    args = parser.parse_args(argv)
    items = list(wanted(args.gold))
    return fetch_all(items, local=local_index(args.local), git_dirs=args.git_dir, web=not args.offline,
                     check_only=args.check)


if __name__ == "__main__":
    sys.exit(main())
