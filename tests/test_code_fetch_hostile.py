"""Fetching codebases from hostile or unusual sources (issue 34, items 6 and 8): refused
archive members are reported, archives unpack into their own folders, a failed clone keeps
git's whole error, URLs keep their case, and every host is cloned through `code.git_base_url`.
Real archives and real git repositories made by the tests; nothing reaches the internet."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from code_support import main_script, make_repo
from review.codebases.fetch import FetchFailed, git_clone
from review.codebases.runner import clone_url, fetch_target, scan_target
from review.codebases.urls import find_repo_urls, parse_repo_url
from review.settings import Settings

EVAL = main_script("from rouge import Rouge", "print(Rouge().get_scores(hyps, refs, avg=True))")


def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tf.addfile(info, io.BytesIO(m[1]))
    return path


def _link(name: str, kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_hostile_tar_members_are_reported_in_skipped_and_limits(tmp_path):
    device = tarfile.TarInfo("proj/console")
    device.type, device.devmajor, device.devminor = tarfile.CHRTYPE, 5, 1
    archive = _tar(tmp_path / "x.tar.gz", [
        ("proj/requirements.txt", b"rouge==1.0.1\n"),
        ("proj/eval.py", EVAL.encode()),
        ("../../escape.py", b"import pyrouge\n"),
        ("/tmp/absolute.py", b"import pyrouge\n"),
        _link("proj/passwd", tarfile.SYMTYPE, "/etc/passwd"),
        _link("proj/hard", tarfile.LNKTYPE, "proj/eval.py"),
        device,
        ("proj/big.txt", b"x" * 3000),
    ])
    settings = Settings(data_dir=tmp_path / "data", code={"max_file_kb": 2})
    report = scan_target(settings, str(archive))
    assert report.packages_used == ["PT/rouge"] and report.files_seen == 2
    assert dict(report.skipped) == {"archive_parent_path": 1, "archive_absolute_path": 1, "archive_symlink": 1,
                                    "archive_hard_link": 1, "archive_special_file": 1,
                                    "archive_member_too_large": 1}
    line = report.limits[0]
    assert line.startswith("archive x.tar.gz: 6 members refused") and "'../../escape.py'" in line
    assert report.as_dict()["skipped"]["archive_hard_link"] == 1
    assert not list(tmp_path.rglob("escape.py")) and not list(tmp_path.rglob("big.txt"))


def test_zip_symlink_and_escapes_reported_and_a_lying_size_is_cut_off(tmp_path):
    archive = tmp_path / "x.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("proj/eval.py", EVAL)
        zf.writestr("../evil.py", "import pyrouge\n")
        link = zipfile.ZipInfo("proj/link")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("proj/bomb.txt", "0" * 5_000_000)  # compresses to a few KB
    settings = Settings(data_dir=tmp_path / "data", code={"max_file_kb": 64})
    report = scan_target(settings, str(archive))
    assert dict(report.skipped) == {"archive_parent_path": 1, "archive_symlink": 1, "archive_member_too_large": 1}
    assert report.limits[0].startswith("archive x.zip: 3 members refused")
    assert not list((tmp_path / "data").rglob("bomb.txt"))


def test_an_archive_past_the_size_cap_fails_and_leaves_nothing(tmp_path):
    archive = _tar(tmp_path / "big.tar.gz", [(f"p/f{i}.txt", b"y" * 600_000) for i in range(3)])
    settings = Settings(data_dir=tmp_path / "data", code={"max_repo_mb": 1})
    with pytest.raises(FetchFailed) as err:
        fetch_target(settings, str(archive))
    assert err.value.reason == "too_large"
    assert not [p for p in (tmp_path / "data" / "archives").iterdir()]


def test_tar_gz_and_zip_of_one_name_unpack_into_distinct_folders(tmp_path):
    _tar(tmp_path / "x.tar.gz", [("proj/eval.py", EVAL.encode()), ("proj/requirements.txt", b"rouge==1.0.1\n")])
    with zipfile.ZipFile(tmp_path / "x.zip", "w") as zf:
        zf.writestr("proj/requirements.txt", "rouge-score\n")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "x.zip").write_bytes((tmp_path / "x.zip").read_bytes())
    settings = Settings(data_dir=tmp_path / "data")
    tar_out, _ = fetch_target(settings, str(tmp_path / "x.tar.gz"))
    zip_out, _ = fetch_target(settings, str(tmp_path / "x.zip"))
    other_out, _ = fetch_target(settings, str(other / "x.zip"))
    folders = {tar_out.path.parent, zip_out.path.parent, other_out.path.parent}
    assert len(folders) == 3 and all(f.parent == tmp_path / "data" / "archives" for f in folders)
    assert (tar_out.path / "eval.py").exists() and not (zip_out.path / "eval.py").exists()
    assert scan_target(settings, str(tmp_path / "x.tar.gz")).packages_used == ["PT/rouge"]
    assert scan_target(settings, str(tmp_path / "x.zip")).packages_present == ["GL/rougescore"]


def test_a_failed_clone_keeps_gits_whole_error_redacted(tmp_path, monkeypatch):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    (tmp_path / token).mkdir()  # a folder that is no repository, its name a secret git will echo
    dest = tmp_path / "cache" / "x"
    with pytest.raises(FetchFailed) as err:
        git_clone(f"file://{tmp_path / token}", dest, timeout=60, max_bytes=10_000_000)
    detail = err.value.detail
    assert "does not appear to be a git repository" in detail and detail.rstrip().endswith("and the repository exists.")
    assert "Could not read from remote repository" in detail and len(detail.splitlines()) >= 4
    assert token not in detail and "***" in detail and not dest.exists()


def test_a_huge_git_error_is_bounded_with_both_ends_kept():
    from review.codebases.fetch import GIT_ERROR_CHARS, git_error

    buf = io.BytesIO(b"fatal: the cause\n" + b"remote: noise\n" * 50_000 + b"hint: the last advice\n")
    text = git_error(buf)
    assert len(text) <= GIT_ERROR_CHARS and text.startswith("fatal: the cause") and text.endswith("the last advice")
    assert "characters cut" in text


def test_repository_urls_keep_their_case_and_github_merges_case_insensitively():
    lab = parse_repo_url("https://GitLab.com/Group/Sub/Project.git")
    assert lab is not None and lab.url == "https://gitlab.com/Group/Sub/Project" and lab.key == lab.url
    gh, other = parse_repo_url("github.com/NLPyang/PreSumm"), parse_repo_url("https://github.com/nlpyang/presumm")
    assert gh is not None and other is not None and gh.url == "https://github.com/NLPyang/PreSumm"
    assert gh.key == other.key == "https://github.com/nlpyang/presumm"
    links = find_repo_urls("see github.com/Owner/Repo and https://github.com/owner/repo; gitlab.com/A/b and gitlab.com/a/b")
    assert [lk.ref.url for lk in links] == ["https://github.com/Owner/Repo", "https://gitlab.com/A/b",
                                             "https://gitlab.com/a/b"]


def test_link_merges_github_case_variants_but_not_gitlab_ones(db, tmp_path):
    from sqlalchemy import select

    from code_support import add_paper
    from review.codebases.link import run_link
    from review.db.models import Codebase

    pid = add_paper(db, "P20-1", "A paper", pwc_code=[{"url": "https://github.com/Alice/Summ", "official": True}],
                    text="Our code is available at https://github.com/alice/summ and https://gitlab.com/Lab/Tool; "
                         "also see gitlab.com/lab/tool.")
    run_link(db, Settings(data_dir=tmp_path), sources=("anthology_pwccode", "paper_text"))
    again = run_link(db, Settings(data_dir=tmp_path), sources=("anthology_pwccode", "paper_text"))
    with db.session() as s:
        urls = sorted(s.scalars(select(Codebase.url).where(Codebase.paper_id == pid)))
    assert urls == ["https://github.com/Alice/Summ", "https://gitlab.com/Lab/Tool", "https://gitlab.com/lab/tool"]
    assert again.counts["codebases_new"] == 0


def test_every_host_is_cloned_through_the_git_base_url(db, tmp_path):
    from sqlalchemy import select

    from code_support import add_paper
    from review.codebases.runner import run_scan
    from review.db.models import Codebase

    remote = tmp_path / "remote"
    make_repo(remote / "bitbucket.org" / "Lab" / "Summ.git", {"requirements.txt": "rouge==1.0.1\n", "eval.py": EVAL})
    make_repo(remote / "gitlab.com" / "Group" / "Sub" / "Tool.git", {"eval.py": EVAL})
    make_repo(remote / "Alice" / "Repo.git", {"eval.py": EVAL})
    pid = add_paper(db, "P21-1", "A paper")
    with db.session() as s:
        for url in ("https://bitbucket.org/Lab/Summ", "https://gitlab.com/Group/Sub/Tool", "https://github.com/Alice/Repo",
                    "https://bitbucket.org/Lab/Missing"):
            ref = parse_repo_url(url)
            s.add(Codebase(paper_id=pid, url=url, host=ref.host, owner=ref.owner, name=ref.name))
    settings = Settings(data_dir=tmp_path / "data", code={"git_base_url": f"file://{remote}"})
    result = run_scan(db, settings)
    with db.session() as s:
        got = {cb.url: (cb.scan_outcome, cb.packages, cb.scan_detail) for cb in s.scalars(select(Codebase))}
    for url in ("https://bitbucket.org/Lab/Summ", "https://gitlab.com/Group/Sub/Tool", "https://github.com/Alice/Repo"):
        assert got[url][:2] == ("ok", ["PT/rouge"]), got[url]
    missing = got["https://bitbucket.org/Lab/Missing"]
    assert missing[0] == "failed" and str(remote / "bitbucket.org" / "Lab" / "Missing.git") in missing[2]
    assert "and the repository exists." in missing[2]  # the whole error, first line to last
    assert result.counts["ok"] == 3
    assert scan_target(settings, "https://bitbucket.org/Lab/Summ/src/main/").packages_used == ["PT/rouge"]


def test_without_a_mirror_each_host_is_cloned_from_itself():
    settings = Settings()
    assert clone_url(settings, "https://bitbucket.org/Lab/Summ") == "https://bitbucket.org/Lab/Summ.git"
    assert clone_url(settings, "https://github.com/Alice/Repo") == "https://github.com/Alice/Repo.git"
    mirror = Settings(code={"git_base_url": "https://git.example.org/mirror/"})
    assert clone_url(mirror, "https://gitlab.com/G/S/T") == "https://git.example.org/mirror/gitlab.com/G/S/T.git"
    assert clone_url(mirror, "https://code.example.net/x/y") == "https://git.example.org/mirror/code.example.net/x/y.git"
    assert clone_url(mirror, "https://github.com/bob/old", "bob/New") == "https://git.example.org/mirror/bob/New.git"
