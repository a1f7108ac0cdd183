"""Where the anthology's files come from: a checkout on disk, or one commit of its git history.

Why two sources behind one interface: `--as-of DATE` must harvest the data repository as it
was, without switching (or even touching) the user's checkout; both give the harvest the
collection files by name and the venue index from `data/yaml`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from review.errors import InputFileError
from review.harvest.git_update import GitTree

try:  # the C loader is ten times faster on the big venue files
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YamlLoader = yaml.SafeLoader


@dataclass
class VenueIndex:
    """What `data/yaml` says about venues: old-style letters and explicit volume lists."""

    letters: dict[str, str] = field(default_factory=dict)  # "U" -> "alta"
    volumes: dict[str, list[str]] = field(default_factory=dict)  # "2021.gem-1" -> ["ws"]

    @classmethod
    def load(cls, yaml_dir: Path) -> VenueIndex:
        entries: dict[str, Any] = {}
        single = yaml_dir / "venues.yaml"  # older checkouts: one file for all venues
        if single.is_file():
            entries.update(_read_yaml(single) or {})
        venue_dir = yaml_dir / "venues"
        if venue_dir.is_dir():
            for path in sorted(venue_dir.glob("*.yaml")):
                entries[path.stem] = _read_yaml(path) or {}
        return cls.from_entries(entries)

    @classmethod
    def from_entries(cls, entries: dict[str, Any]) -> VenueIndex:
        index = cls()
        for venue_id, info in entries.items():
            if not isinstance(info, dict):
                continue
            letter = info.get("oldstyle_letter")
            if letter:
                index.letters[str(letter)] = venue_id
            vols = info.get("volumes") or {}
            lists = vols.values() if isinstance(vols, dict) else [vols]
            for items in lists:
                for vol in items or []:
                    index.volumes.setdefault(str(vol), []).append(venue_id)
        return index


def _read_yaml(path: Path | str, data: bytes | None = None) -> Any:
    try:
        if data is not None:
            return yaml.load(data, Loader=_YamlLoader)
        with Path(path).open("rb") as fh:
            return yaml.load(fh, Loader=_YamlLoader)
    except (OSError, yaml.YAMLError) as exc:
        raise InputFileError(f"unreadable venue file: {exc}", item=str(path)) from None


class CheckoutFiles:
    """The XML and venue files of an anthology checkout on disk."""

    def __init__(self, data_dir: Path):
        self.xml_dir = find_xml_dir(data_dir)

    def xml_names(self) -> list[str]:
        return sorted(p.name for p in self.xml_dir.glob("*.xml"))

    def open_xml(self, name: str) -> str | IO[bytes]:
        return str(self.xml_dir / name)  # lxml reads a path fastest

    def venues(self) -> VenueIndex:
        return VenueIndex.load(self.xml_dir.parent / "yaml")


class CommitFiles:
    """The same files as they were at one commit of the data repository (`--as-of`)."""

    def __init__(self, tree: GitTree):
        self.tree = tree
        folder = next((f for f in ("data/xml", "xml") if tree.paths(f, ".xml")), None)
        if folder is None:
            raise InputFileError(f"no anthology XML at commit {tree.commit[:12]} (expected data/xml/*.xml)",
                                 item=str(tree.repo))
        self.xml_dir = folder
        self.yaml_dir = folder.rsplit("/", 1)[0] + "/yaml" if "/" in folder else "yaml"

    def xml_names(self) -> list[str]:
        return [p.rsplit("/", 1)[-1] for p in self.tree.paths(self.xml_dir, ".xml")]

    def open_xml(self, name: str) -> str | IO[bytes]:
        return io.BytesIO(self.tree.read(f"{self.xml_dir}/{name}"))

    def venues(self) -> VenueIndex:
        entries: dict[str, Any] = {}
        single = f"{self.yaml_dir}/venues.yaml"
        if self.tree.exists(single):
            entries.update(_read_yaml(single, self.tree.read(single)) or {})
        for path in self.tree.paths(f"{self.yaml_dir}/venues", ".yaml"):
            entries[path.rsplit("/", 1)[-1][: -len(".yaml")]] = _read_yaml(path, self.tree.read(path)) or {}
        return VenueIndex.from_entries(entries)


def find_xml_dir(data_dir: Path) -> Path:
    """`data/xml` of an anthology checkout (or the folder itself if it holds the XML)."""
    for candidate in (data_dir / "data" / "xml", data_dir / "xml", data_dir):
        if candidate.is_dir() and any(candidate.glob("*.xml")):
            return candidate
    raise InputFileError("no anthology XML found (expected data/xml/*.xml)", item=str(data_dir),
                         hint="point harvest.acl_data_dir at a checkout, or use --update to clone one")
