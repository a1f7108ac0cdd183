"""Paper identifiers in a file's name: ACL Anthology ids, DOIs and arXiv ids.

Why from the name: bundles and personal collections name files after the paper
(`P19-1330.pdf`, `2020.acl-main.121v2.pdf`, `1908.10383.pdf`, `10.18653_v1_D19-1620.pdf`),
and a name match needs no reading of the file. Ids are found anywhere in the name, so
`acl2019-P19-1330-hardy-highres.pdf` gives P19-1330; version suffixes (`v2`) and the
extension are ignored. A name can carry several ids; the matcher decides what to do
when they point at different papers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

# New style (2020 on): <year>.<venue>-<volume>.<number>, venue and volume alphanumeric.
_NEW_STYLE = re.compile(r"(?<![A-Za-z0-9.])(\d{4}\.[a-z0-9]+-[a-z0-9]+\.\d+)(?!\d)", re.IGNORECASE)
# Old style (to 2019): a letter, two digits of the year, four digits of volume and paper.
_OLD_STYLE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]\d{2}-\d{4})(?!\d)")
# arXiv: 1908.10383 (2007 on), cs.CL/0601001 or cs_0601001 (before).
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d.])")
_ARXIV_OLD = re.compile(r"(?<![A-Za-z])([a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?)[/_](\d{7})(?:v\d+)?(?!\d)")
_DOI_START = re.compile(r"10\.\d{4,9}[/_]")
_EXTENSION = re.compile(r"(?:v\d+)?\.pdf$", re.IGNORECASE)


@dataclass(frozen=True)
class NameIds:
    """The identifiers a file name carries (each list in order of appearance, no repeats)."""

    anthology: tuple[str, ...] = ()
    dois: tuple[str, ...] = ()
    arxiv: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.anthology or self.dois or self.arxiv)


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def anthology_ids(name: str) -> list[str]:
    """ACL Anthology ids in `name`, in canonical case (P19-1330, 2020.acl-main.121)."""
    found = [(m.start(), m.group(1).lower()) for m in _NEW_STYLE.finditer(name)]
    found += [(m.start(), m.group(1)[0].upper() + m.group(1)[1:]) for m in _OLD_STYLE.finditer(name)]
    return [ident for _, ident in sorted(found)]


def doi_candidates(name: str) -> list[str]:
    """DOIs a name may spell: `/` kept, URL-encoded, or written as `_` (file names cannot hold `/`)."""
    stem = _EXTENSION.sub("", unquote(name))
    m = _DOI_START.search(stem)
    if m is None:
        return []
    tail = stem[m.start():]
    prefix, _, rest = tail.partition(tail[m.end() - m.start() - 1])  # split at the first / or _
    variants = [f"{prefix}/{rest}", f"{prefix}/{rest.replace('_', '/')}"]
    return [v.lower() for v in _unique(variants) if rest]


def arxiv_ids(name: str) -> list[str]:
    out = [m.group(1) for m in _ARXIV_NEW.finditer(name)]
    out += [f"{m.group(1)}/{m.group(2)}" for m in _ARXIV_OLD.finditer(name)]
    return out


def ids_in_name(member: str) -> NameIds:
    """Identifiers in a member's file name, else in its folder names (`P19/P19-1330/paper.pdf`)."""
    parts = [p for p in member.replace("\\", "/").split("/") if p]
    for raw in reversed(parts or [member]):
        part = _EXTENSION.sub("", unquote(raw))
        ids = NameIds(_unique(anthology_ids(part)), _unique(doi_candidates(part)), _unique(arxiv_ids(part)))
        if ids:
            return ids
    return NameIds()
