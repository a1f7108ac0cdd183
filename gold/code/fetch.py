#!/usr/bin/env python3
"""Check out every repository of the code gold set at its labelled commit.

The gold labels describe each repository at one commit (`repos.txt`: `owner/name@commit`),
so the checkouts must be exactly those trees. Two sources:

    python gold/code/fetch.py --out CHECKOUTS --mirror DIR   # DIR/owner+name/repo[/.git], offline
    python gold/code/fetch.py --out CHECKOUTS                # git clone from GitHub (needs internet)
    python gold/code/fetch.py --out CHECKOUTS --git-base URL # from another git host or a local folder

Each repository lands in CHECKOUTS/owner+name (the layout `review evaluate code --root`
reads). A checkout is built in a temporary folder and renamed into place when complete,
so an interrupted run leaves no half tree and a rerun only fetches what is missing;
CHECKOUTS/.gold-commits.json records which commit each folder holds (a folder at another
commit is replaced). Only the standard library and the `git` command are used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = ".gold-commits.json"


def read_repos(path: Path) -> list[tuple[str, str]]:
    """(owner/name, commit) pairs; `#` lines and blank lines ignored."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        repo, sep, commit = line.partition("@")
        if not sep or repo.count("/") != 1 or len(commit) != 40:
            sys.exit(f"{path}:{n}: expected owner/name@<40-hex commit>, got {line!r}")
        out.append((repo, commit))
    return out


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


def mirror_gitdir(mirror: Path, repo: str) -> Path | None:
    """The git directory of a mirrored repository, in any of the layouts `fetch` leaves."""
    base = mirror / repo.replace("/", "+")
    for cand in (base / "repo" / ".git", base / "repo", base / ".git", base, mirror / f"{repo.replace('/', '+')}.git"):
        if cand.is_dir() and ((cand / "HEAD").is_file() or (cand / "objects").is_dir()):
            return cand
    return None


def from_mirror(gitdir: Path, commit: str, dest: Path) -> list[str]:
    """Write the tree of `commit` into dest (no .git); returns the paths whose blobs are absent.

    Why not `git archive`: mirrors made by snapshot services may lack large blobs (data,
    checkpoints), and one missing blob makes the whole archive fail. Such files are left
    out and named; submodules become empty folders, as GitHub shows them.
    """
    listing = git(f"--git-dir={gitdir}", "ls-tree", "-r", "-z", "--full-tree", commit).stdout
    entries = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, raw_path = item.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        rel = raw_path.decode("utf-8", errors="surrogateescape")
        if rel.startswith("/") or ".." in rel.split("/") or rel.split("/")[0] == ".git":
            raise RuntimeError(f"unsafe path in tree: {rel!r}")
        entries.append((mode, kind, sha, rel))
    missing: list[str] = []
    batch = subprocess.Popen(["git", f"--git-dir={gitdir}", "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert batch.stdin is not None and batch.stdout is not None
    try:
        for mode, kind, sha, rel in entries:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if kind == "commit":  # a submodule: its content lives in another repository
                target.mkdir(exist_ok=True)
                continue
            batch.stdin.write(sha.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                missing.append(rel)
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)  # the newline after each object
            if mode == "120000":
                target.symlink_to(data.decode("utf-8", errors="surrogateescape"))
            else:
                target.write_bytes(data)
                if mode == "100755":
                    target.chmod(0o755)
    finally:
        batch.stdin.close()
        batch.wait()
    return missing


def from_remote(base: str, repo: str, commit: str, dest: Path) -> None:
    """Clone `base/owner/name.git` at `commit`: one shallow fetch of the commit when the server
    allows it (GitHub does), else the whole history."""
    git("init", "-q", str(dest))
    git("remote", "add", "origin", f"{base.rstrip('/')}/{repo}.git", cwd=dest)
    try:
        git("fetch", "-q", "--depth", "1", "origin", commit, cwd=dest)
        git("checkout", "-q", "FETCH_HEAD", cwd=dest)
    except subprocess.CalledProcessError:
        git("fetch", "-q", "origin", cwd=dest)
        git("checkout", "-q", commit, cwd=dest)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="folder of owner+name checkouts to fill")
    ap.add_argument("--repos", type=Path, default=HERE / "repos.txt", help="owner/name@commit list")
    ap.add_argument("--mirror", type=Path, help="folder of git directories (owner+name/repo); default: clone")
    ap.add_argument("--git-base", default="https://github.com", help="where to clone owner/name.git from "
                    "(default https://github.com)")
    ap.add_argument("--only", action="append", help="only this owner/name (repeatable)")
    args = ap.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob(".part-*"):  # left by a run that was killed mid-copy
        shutil.rmtree(stale, ignore_errors=True)
    manifest_path = args.out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    failed = 0
    for repo, commit in read_repos(args.repos):
        if args.only and repo not in args.only:
            continue
        folder = args.out / repo.replace("/", "+")
        if folder.is_dir() and manifest.get(repo) == commit:
            continue
        tmp = Path(tempfile.mkdtemp(prefix=".part-", dir=args.out))
        try:
            if args.mirror:
                gitdir = mirror_gitdir(args.mirror, repo)
                if gitdir is None:
                    raise RuntimeError(f"not in the mirror {args.mirror}")
                missing = from_mirror(gitdir, commit, tmp)
                if missing:
                    print(f"{repo}: {len(missing)} files absent from the mirror (left out): "
                          + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""), file=sys.stderr)
            else:
                from_remote(args.git_base, repo, commit, tmp)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            detail = exc.stderr.decode(errors="replace").strip() if isinstance(exc, subprocess.CalledProcessError) else exc
            print(f"{repo}@{commit[:12]}: FAILED: {detail}", file=sys.stderr)
            shutil.rmtree(tmp, ignore_errors=True)
            failed += 1
            continue
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
        manifest[repo] = commit
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(f"{repo}@{commit[:12]} -> {folder}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
