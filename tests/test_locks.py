"""Every environment CI builds holds exactly what its lock file pins (locks/, docs/development.md).

The test venv is checked here always; the Label Studio and ppi venvs when `.ci/run`
names them in REVIEW_LOCKED_VENVS (and under CI they must be named). The checker itself is
run on locks made in the test, so a drifted venv is known to be caught.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT

LOCKS = ROOT / "locks"
CHECK = LOCKS / "check.py"


def _check(python: str, lock, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, str(CHECK), str(lock), *extra], capture_output=True, text=True, timeout=120)


def test_the_test_venv_matches_its_lock():
    done = _check(sys.executable, LOCKS / "review.txt", "--ignore", "rogue-review")
    assert done.returncode == 0, done.stderr


def test_service_venvs_match_their_locks():
    named = os.environ.get("REVIEW_LOCKED_VENVS")
    if not named:
        if os.environ.get("CI"):
            pytest.fail("REVIEW_LOCKED_VENVS is not set in CI: .ci/run names the venvs it built")
        pytest.skip("REVIEW_LOCKED_VENVS not set (.ci/run sets it)")
    for pair in named.split(":"):
        venv, lock = pair.split("=")
        done = _check(f"{venv}/bin/python", ROOT / lock)
        assert done.returncode == 0, f"{venv} against {lock}:\n{done.stderr}"


def test_a_drifted_venv_is_named_package_by_package(tmp_path):
    pytest_version = importlib.metadata.version("pytest")
    lock = tmp_path / "lock.txt"
    lock.write_text("# a lock this venv does not match\n"
                    "pytest==0.0.1 \\\n    --hash=sha256:00\n"
                    "no-such-package-anywhere==1.0\n"
                    "never-on-this-python==2.0 ; python_version < '3.0'\n", encoding="utf-8")
    done = _check(sys.executable, lock)
    assert done.returncode == 1
    assert f"pytest: locked 0.0.1, installed {pytest_version}" in done.stderr
    assert "no-such-package-anywhere: locked 1.0, not installed" in done.stderr
    assert "never-on-this-python" not in done.stderr
    assert "pluggy: installed" in done.stderr and "not in the lock" in done.stderr


def test_a_line_that_is_not_a_pin_is_refused(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("requests>=2\n", encoding="utf-8")
    done = _check(sys.executable, lock)
    assert done.returncode != 0 and "lock.txt:1: not a pinned requirement" in done.stderr


def _pinned(lock: str) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", (LOCKS / lock).read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in pins}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def test_every_declared_dependency_is_locked():
    """A dependency added to pyproject.toml without `locks/compile` would float again."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = list(project["dependencies"])
    for extra in ("test", "postgres"):
        declared += project["optional-dependencies"][extra]
    pins = _pinned("review.txt")
    missing = sorted({_name(r) for r in declared} - set(pins))
    assert not missing, f"not in locks/review.txt (run locks/compile): {missing}"
    assert {"hatchling", "editables"} <= set(pins)


@pytest.mark.parametrize("lock, top", [("label-studio.txt", "label-studio==1.23.2"), ("ppi.txt", "ppi-python==0.2.3")])
def test_service_locks_pin_what_their_inputs_name(lock, top):
    name, version = top.split("==")
    assert _pinned(lock).get(name) == version
    assert top in (LOCKS / lock.replace(".txt", ".in")).read_text(encoding="utf-8")
