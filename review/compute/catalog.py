"""The package catalog (the metric folder's `packages` file): canonical labels, aliases, tested correctness.

A package that was never tested is unknown, never correct; a catalog may also name
packages that could not be identified (kind "unidentified"), and whether citing one counts
as citing a package is a setting (`compute.counts_as_package`, every label by default).
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from review.errors import RuleFileError
from review.metric import data_path, find_data_file
from review.settings import ComputeSettings, Settings


@dataclass(frozen=True)
class Package:
    label: str
    kind: str
    software_error: bool | None  # None = unknown (not tested or unidentified)
    no_config: bool
    result: str


@dataclass
class Catalog:
    """The package catalog: canonical labels, aliases, tested correctness."""

    packages: dict[str, Package]
    aliases: dict[str, str]
    path: str
    sha256: str

    def canonical(self, name: str) -> str:
        """The catalog label for a package name (as written when it is not in the catalog)."""
        key = _alias_key(name)
        return self.aliases.get(key, name.strip())

    def error(self, label: str) -> bool | None:
        pkg = self.packages.get(label)
        return pkg.software_error if pkg else None

    def no_config(self, label: str) -> bool:
        pkg = self.packages.get(label)
        return bool(pkg and pkg.no_config)

    def signature(self) -> dict[str, Any]:
        return {"packages_sha256": self.sha256[:12]}

    @property
    def no_config_labels(self) -> list[str]:
        """The packages whose citation is enough for R2, in catalog order."""
        return [p.label for p in self.packages.values() if p.no_config]


def counts_as_package(label: str, settings: ComputeSettings) -> bool:
    """Whether a cited label counts as a package (`compute.counts_as_package`; yes unless listed)."""
    return settings.counts_as_package.get(label, True)


def _alias_key(name: str) -> str:
    return " ".join(name.casefold().split())


def load_catalog(path: str | Path | None, settings: Settings | None = None) -> Catalog:
    """Parse and validate the package catalog (`path`, else the settings' metric's); every
    problem names the entry and key."""
    file = data_path(settings, path, "packages") if settings is not None else find_data_file(str(path))
    raw = file.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=str(file)) from None
    unknown = set(data) - {"schema", "package"}
    if unknown:
        raise RuleFileError(f"unknown key(s) {sorted(unknown)}", item=str(file))
    if data.get("schema") != 1:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads 1)", item=str(file))
    packages: dict[str, Package] = {}
    aliases: dict[str, str] = {}
    allowed = {"label", "kind", "software_error", "no_config", "result", "aliases", "claims", "measured"}
    for i, entry in enumerate(data.get("package", [])):
        where = f"{file}: package #{i + 1} ({entry.get('label', '?')})"
        extra = set(entry) - allowed
        if extra:
            raise RuleFileError(f"unknown key(s) {sorted(extra)}", item=where)
        label = entry.get("label")
        if not isinstance(label, str) or not label.strip():
            raise RuleFileError("label missing", item=where)
        err = entry.get("software_error")
        if err not in (True, False, "unknown"):
            raise RuleFileError(f"software_error must be true, false or \"unknown\", not {err!r}", item=where)
        if label in packages:
            raise RuleFileError("label listed twice", item=where)
        packages[label] = Package(label=label, kind=str(entry.get("kind", "")),
                                  software_error=None if err == "unknown" else bool(err),
                                  no_config=bool(entry.get("no_config", False)), result=str(entry.get("result", "")))
        for alias in [label, *entry.get("aliases", [])]:
            key = _alias_key(alias)
            if aliases.get(key, label) != label:
                raise RuleFileError(f"alias {alias!r} already names {aliases[key]}", item=where)
            aliases[key] = label
    return Catalog(packages=packages, aliases=aliases, path=str(file), sha256=hashlib.sha256(raw).hexdigest())
