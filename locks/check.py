"""Does this interpreter's environment hold exactly what a lock file pins?

Run with the venv's own Python (`VENV/bin/python locks/check.py locks/FILE.txt`): it
reads the installed distributions from importlib.metadata and the lock's pins whose
environment markers apply here, and exits 1 naming every package that is missing, at
another version, or installed without being locked. A cached venv that drifted from its
lock (a hand install, a half-finished rebuild) is then caught before the tests run on it.
Standard library only, plus `packaging` (or pip's vendored copy, present in every venv).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path

try:
    from packaging.markers import Marker
except ImportError:  # a bare venv: pip vendors the same library
    from pip._vendor.packaging.markers import Marker

# What a venv holds for its own sake, never part of a lock.
INSTALLER_PACKAGES = {"pip", "setuptools", "wheel", "distribute"}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def normalise(name: str) -> str:
    """PEP 503 names, so `PyYAML`, `pyyaml` and `py_yaml` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path) -> dict[str, str]:
    """The lock's pins that apply to this interpreter (markers evaluated here)."""
    pins: dict[str, str] = {}
    for number, line in enumerate(lock.read_text(encoding="utf-8").splitlines(), 1):
        if not line or line[0] in " #-":
            continue
        match = _PIN.match(line)
        if not match:
            raise SystemExit(f"{lock}:{number}: not a pinned requirement: {line!r}")
        name, version, marker = match.groups()
        if marker is None or Marker(marker).evaluate():
            pins[normalise(name)] = version
    return pins


def installed() -> dict[str, str]:
    return {normalise(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}


def differences(pins: dict[str, str], have: dict[str, str], ignore: set[str]) -> list[str]:
    """One line per disagreement, sorted by package name."""
    lines = []
    for name in sorted(set(pins) | set(have)):
        if name in ignore or name in INSTALLER_PACKAGES:
            continue
        want, got = pins.get(name), have.get(name)
        if want == got:
            continue
        if got is None:
            lines.append(f"{name}: locked {want}, not installed")
        elif want is None:
            lines.append(f"{name}: installed {got}, not in the lock")
        else:
            lines.append(f"{name}: locked {want}, installed {got}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lock", type=Path)
    parser.add_argument("--ignore", action="append", default=[], help="a package the lock leaves out on purpose (the project itself)")
    args = parser.parse_args(argv)
    found = differences(locked(args.lock), installed(), {normalise(n) for n in args.ignore})
    for line in found:
        print(f"{args.lock}: {sys.prefix}: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
