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
