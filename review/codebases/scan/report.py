"""What a scan reports: every occurrence of a package with its role, the two package lists
(C1 `packages_used` and `packages_present`), the C2 verdict condition by condition, the
appendix B anti-features and the limits the scan ran into."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

# Where an occurrence stands (CODE_LABELS.md): only "evaluation" puts a package in
# packages_used; training, unreached, declared and vendored put it in packages_present;
# docs and commented put it nowhere.
EVALUATION = "evaluation"  # produces the reported scores: reached from an evaluation entry point
TRAINING = "training"  # reached only through training, reward, oracle, validation or data code
UNREACHED = "unreached"  # code nothing in the repository calls (defined or imported, never used)
DECLARED = "declared"  # a dependency file, install line, set-up command or link to the package
VENDORED = "vendored"  # a copy of the package's code, never called
DOCS = "docs"  # named in documentation only
COMMENTED = "commented"  # commented out
ROLES = (EVALUATION, TRAINING, UNREACHED, DECLARED, VENDORED, DOCS, COMMENTED)
PRESENT_ROLES = frozenset({TRAINING, UNREACHED, DECLARED, VENDORED})


@dataclass
class Evidence:
    """One line (or file) that shows a package, and why it counts where it counts."""

    package: str
    file: str
    line: int | None
    text: str
    source: str  # requirements | install | url | setup | import | call | shell | readme | vendored | file | custom
    cell: int | None = None  # notebook cell (1-based) when the file is a notebook
    commented: bool = False
    superseded: bool = False  # hidden by a more specific package on the same line
    identifier: str = ""  # the module, name, command or pattern that matched
    role: str = ""  # one of ROLES
    reason: str = ""  # why this role, in words a reviewer can check
    scope: str | None = None  # the function or class the line is in ("" for module level)
    parser: str | None = None  # "ast" or "regex" for Python code (regex: a file ast cannot parse)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("cell", "scope", "parser"):
            if d[key] is None:
                del d[key]
        return d


@dataclass
class AntiFeature:
    """An appendix B anti-feature with where it was seen."""

    feature: str  # several_packages | commented_out_alternative | missing_module | package_differs_from_paper
    detail: str
    file: str | None = None
    line: int | None = None
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Condition:
    """One of the four C2 conditions of CODE_LABELS.md, checked with its evidence."""

    number: int
    name: str  # identifiable | called | nothing_missing | no_conflict
    holds: bool | None
    reasons: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScanReport:
    target: str
    packages_used: list[str] = field(default_factory=list)
    packages_present: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    anti_features: list[AntiFeature] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    eval_reproducible: bool | None = None
    eval_reproducible_reason: list[str] = field(default_factory=list)
    entry_points: list[dict[str, Any]] = field(default_factory=list)
    limits: list[str] = field(default_factory=list)  # what the scan could not read or follow
    prelim: bool = False
    files_seen: int = 0
    files_read: int = 0
    truncated: bool = False
    skipped: Counter[str] = field(default_factory=Counter)
    commit: str | None = None
    signature: dict[str, Any] = field(default_factory=dict)

    @property
    def packages(self) -> list[str]:
        """C1, the packages that produce the reported scores (`packages_used`)."""
        return self.packages_used

    @property
    def anti_feature_names(self) -> list[str]:
        return sorted({a.feature for a in self.anti_features})

    @property
    def verdict(self) -> str:
        return "unknown" if self.eval_reproducible is None else str(self.eval_reproducible).lower()

    def c2_evidence(self) -> list[dict[str, Any]]:
        """The rows each failed (or undecided) condition rests on, first those of condition 1."""
        rows = [dict(r, condition=c.number) for c in self.conditions if c.holds is not True for r in c.evidence]
        return rows or [dict(r, condition=c.number) for c in self.conditions for r in c.evidence[:2]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "commit": self.commit, "packages": self.packages_used,
            "packages_used": self.packages_used, "packages_present": self.packages_present,
            "eval_reproducible": self.eval_reproducible, "eval_reproducible_reason": self.eval_reproducible_reason,
            "eval_reproducible_evidence": self.c2_evidence(), "conditions": [c.as_dict() for c in self.conditions],
            "prelim": self.prelim, "anti_features": self.anti_feature_names,
            "anti_feature_evidence": [a.as_dict() for a in self.anti_features],
            "evidence": [e.as_dict() for e in self.evidence], "entry_points": self.entry_points,
            "limits": self.limits, "files_seen": self.files_seen, "files_read": self.files_read,
            "truncated": self.truncated, "skipped": dict(sorted(self.skipped.items())), "signature": self.signature,
        }
