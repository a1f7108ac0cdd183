"""The README's two quick-start commands, run on a fresh clone in a temporary directory.

Slow (it builds a virtual environment and installs the package), but it is the promise a
new user meets first, so CI runs it. The second command's full test run is what CI itself
executes (`.ci/run`); here it is run up to the install and then asked to collect the whole
suite and run one module, so the suite does not run itself recursively.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow
INNER = "REVIEW_README_TEST_INNER"


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)][:2]


def _sh(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEW_") or k == "REVIEW_TEST_POSTGRES_URL"}
    env[INNER] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_quick_start_commands_are_the_documented_ones():
    first, second = quick_start_commands()
    install = ("python3 -m venv .venv && .venv/bin/pip install --require-hashes --no-deps -r locks/review.txt"
               " && .venv/bin/pip install --no-deps --no-build-isolation -e .")
    assert first == f"{install} && .venv/bin/review survey --sample"
    assert second == f"{install} && .venv/bin/pytest"


@pytest.mark.skipif(bool(os.environ.get(INNER)), reason="already inside the fresh-clone test")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_readme_commands_on_a_fresh_clone(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    first, second = quick_start_commands()

    proc = _sh(first, clone, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = re.search(r"^report:\s+(\S+)$", proc.stdout, flags=re.M)
    assert report and Path(report.group(1)).is_file(), proc.stdout[-2000:]
    assert Path(report.group(1)).is_relative_to(clone)
    assert re.search(r"^figure:\s+\S+figure3\.png$", proc.stdout, flags=re.M)

    install, _, pytest_cmd = second.rpartition(" && ")
    assert pytest_cmd == ".venv/bin/pytest"
    proc = _sh(install, clone, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    proc = _sh(f"{pytest_cmd} -q -p no:cacheprovider --collect-only", clone, timeout=600)
    assert proc.returncode == 0 and re.search(r"\d+ tests? collected", proc.stdout), proc.stdout[-3000:]
    proc = _sh(f"{pytest_cmd} -q -p no:cacheprovider tests/test_compute.py", clone, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
