"""Table 2: every candidate package against the reference, on one specimen, per variant.

An *output* is one score of one pair in one variant (R1, R2, RL × P/R/F; plain and
stemmed), as in Rogue Scores' Table 2; a package's output differs when it is further from
the reference's than the metric's tolerance (the reference prints 5 rounded decimals).
A package that cannot be installed, crashes or hangs is a result with its reason; the
run goes on with the next one.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from review.errors import RuleFileError
from review.log import get_logger
from review.packages import venvs
from review.packages.specimen import Pair, split_for

log = get_logger("packages")

ADAPTER_MAIN = Path(__file__).with_name("adapter_main.py")
MEASURES = ("p", "r", "f")
Scores = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Candidate:
    name: str
    label: str
    spec: str
    adapter: str
    dist: str
    lock: str | None = None
    stem: bool = True  # has a stemming option
    options: dict[str, Any] = field(default_factory=dict)
    ci: bool = False
    wraps_reference: bool = False  # a wrapper: its adapter gets the reference's venv as option reference_venv

    def release(self, spec: str) -> Candidate:
        """The same package at another release (`--package NAME==VERSION`): no lock fits it."""
        return dataclasses.replace(self, spec=spec, lock=None)


@dataclass(frozen=True)
class Harness:
    metric: str
    folder: Path
    scores: tuple[str, ...]
    measures: tuple[str, ...]
    tolerance: float
    timeout: float
    reference: dict[str, Any]
    sensitivity: tuple[dict[str, Any], ...]
    candidates: tuple[Candidate, ...]
    adapters: Path  # the metric folder's adapters file


    def candidate(self, name: str) -> Candidate:
        for c in self.candidates:
            if c.name.lower() == name.lower():
                return c
        raise RuleFileError(f"no candidate package {name!r}", item=str(self.folder / "harness.toml"),
                            hint="known: " + ", ".join(c.name for c in self.candidates))


def load_harness(folder: Path, metric: str) -> Harness:
    """The metric folder's harness.toml, checked enough that a typo fails before any venv is built."""
    path = folder / "harness.toml"
    if not path.is_file():
        raise RuleFileError("this metric has no package harness (harness.toml)", item=str(path))
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != 1:
        raise RuleFileError(f"schema {data.get('schema')!r} is not supported (this release reads 1)", item=str(path))
    keys = set(Candidate.__dataclass_fields__)
    cands = []
    for i, c in enumerate(data.get("candidate", []), 1):
        unknown = set(c) - keys
        if unknown or not {"name", "label", "spec", "adapter", "dist"} <= set(c):
            raise RuleFileError(f"candidate {i}: unknown keys {sorted(unknown)} or one of name, label, spec, adapter, "
                                "dist missing", item=str(path))
        cands.append(Candidate(**c))
    return Harness(metric, folder, tuple(data["scores"]), tuple(data.get("measures", MEASURES)),
                   float(data["tolerance"]), float(data.get("timeout", 600)),
                   data["reference"], tuple(data.get("sensitivity", [])), tuple(cands),
                   folder / data.get("adapters", "adapters.py"))


# --- the reference

def reference_venv(h: Harness, cache: Path) -> venvs.Venv:
    return venvs.ensure(cache, lock=h.reference["lock"])


class ReferenceFailed(Exception):
    """The reference did not score every pair: nothing can be compared with it."""


@dataclass
class ReferenceRun:
    options: Any
    per_pair: list[Scores]


def run_reference(h: Harness, venv: venvs.Venv, pairs: Sequence[Pair], options: Any,
                  splitting: str = "explicit") -> ReferenceRun:
    """The reference on every pair, through its adapter in its venv; `options` are its adapter's
    (a table) or its command-line flags (a list, passed as `args`: ROUGE-1.5.5's)."""
    sides = [Pair(p.id, tuple(split_for(p.reference, splitting)), tuple(split_for(p.hypothesis, splitting)))
             for p in pairs]
    opts = dict(options) if isinstance(options, dict) else {"args": list(options)}
    try:
        scores, errors = adapter_run(venv.python, h.adapters, h.reference["adapter"], opts, sides, h.timeout)
    except subprocess.TimeoutExpired as exc:
        raise ReferenceFailed(f"{h.reference['label']} timed out after {h.timeout:.0f}s") from exc
    except RuntimeError as exc:
        raise ReferenceFailed(f"{h.reference['label']}: {exc}") from exc
    if errors:
        i, e = next(iter(errors.items()))
        raise ReferenceFailed(f"{h.reference['label']} failed on {len(errors)} pair(s), first {pairs[i].id}: {e}")
    return ReferenceRun(options, scores)  # type: ignore[arg-type]


def reference_variants(h: Harness, venv: venvs.Venv, pairs: Sequence[Pair]) -> dict[str, list[Scores]]:
    """The reference's per-pair scores in every variant of the grid (plain, stemmed)."""
    base = h.reference.get("options", [])
    return {name: run_reference(h, venv, pairs, {**base, **extra} if isinstance(extra, dict) else list(base) + list(extra)).per_pair
            for name, extra in h.reference["variants"].items()}


# --- a candidate

@dataclass
class PackageRun:
    """One candidate's scores per variant, or why it has none; per-input errors kept."""

    candidate: Candidate
    version: str = "?"
    locked: bool = False
    reason: str = ""  # install failed / crashed / timed out: the whole package
    per_pair: dict[str, list[Scores | None]] = field(default_factory=dict)
    errors: dict[str, dict[int, str]] = field(default_factory=dict)  # variant -> pair index -> error


def adapter_run(python: Path, adapters: Path, adapter: str, options: dict[str, Any], pairs: Sequence[Pair],
                timeout: float) -> tuple[list[Scores | None], dict[int, str]]:
    """Run one adapter over every pair in the package's venv (JSONL in, JSONL out)."""
    lines = "".join(json.dumps({"i": i, "reference": list(p.reference), "hypothesis": list(p.hypothesis)}) + "\n"
                    for i, p in enumerate(pairs))
    done = subprocess.run([str(python), "-I", "-B", str(ADAPTER_MAIN), str(adapters), adapter, json.dumps(options)], input=lines,
                          capture_output=True, text=True, timeout=timeout)
    scores: list[Scores | None] = [None] * len(pairs)
    errors: dict[int, str] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if "error" in row:
            errors[row["i"]] = row["error"]
        else:
            scores[row["i"]] = row["scores"]
    if done.returncode != 0 and not any(s is not None for s in scores) and not errors:
        tail = [ln for ln in done.stderr.splitlines() if ln.strip()][-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"crashed: {tail[0][:300]}")
    for i in range(len(pairs)):
        if scores[i] is None and i not in errors:
            errors[i] = f"no output (the adapter stopped, exit {done.returncode})"
    return scores, errors


def run_candidate(h: Harness, c: Candidate, pairs: Sequence[Pair], cache: Path,
                  force: dict[str, Any] | None = None) -> PackageRun:
    """One package on every pair in every variant; failures become the run's reason."""
    run = PackageRun(c)
    try:
        venv = venvs.ensure(cache, lock=c.lock, spec=c.spec) if c.lock else venvs.ensure(cache, spec=c.spec)
    except (venvs.InstallFailed, OSError) as exc:
        run.reason = f"install failed: {exc}"
        return run
    run.version, run.locked = venvs.installed_version(venv, c.dist), venv.locked
    extra: dict[str, Any] = {}
    if c.wraps_reference:
        extra["reference_venv"] = str(reference_venv(h, cache).path)
    for variant in h.reference["variants"]:
        opts = {**c.options, **extra, "variant": variant, "stem": variant == "stem" and c.stem, **(force or {})}
        try:
            run.per_pair[variant], run.errors[variant] = adapter_run(venv.python, h.adapters, c.adapter, opts, pairs,
                                                                     h.timeout)
        except subprocess.TimeoutExpired:
            run.reason = f"timed out after {h.timeout:.0f}s ({variant})"
            return run
        except (RuntimeError, json.JSONDecodeError, KeyError) as exc:
            run.reason = f"{exc} ({variant})" if isinstance(exc, RuntimeError) else f"unreadable adapter output: {exc}"
            return run
    return run


# --- comparison

@dataclass
class Comparison:
    outputs: int = 0  # cells compared
    differing: int = 0
    failed: int = 0  # cells with no score (the input errored)
    not_computed: int = 0  # cells the package does not compute at all (MS/rouge: ROUGE-L F only)
    pairs_differing: int = 0
    cells: dict[str, list[bool]] = field(default_factory=dict)  # "variant/score/measure" -> per pair differs
    mean_diff: dict[str, float] = field(default_factory=dict)  # same key -> mean(candidate) - mean(reference), points

    @property
    def share(self) -> float:
        return self.differing / self.outputs if self.outputs else 0.0


def compare(h: Harness, ref: dict[str, list[Scores]], cand: dict[str, list[Scores | None]]) -> Comparison:
    """Where a package's outputs leave the reference's by more than the tolerance."""
    out = Comparison()
    any_pair: set[int] = set()
    for variant, ref_pairs in ref.items():
        got = cand.get(variant, [])
        for score in h.scores:
            for m in h.measures:
                key = f"{variant}/{score}/{m}"
                flags, diffs = [], []
                scored = [c for c in got if c is not None]
                if scored and not any(m in c.get(score, {}) for c in scored):
                    out.not_computed += len(ref_pairs)
                    continue
                for i, r in enumerate(ref_pairs):
                    c = got[i] if i < len(got) else None
                    if c is None:
                        out.failed += 1
                        flags.append(True)
                        continue
                    d = c[score][m] - r[score][m]
                    diffs.append(d)
                    flags.append(abs(d) > h.tolerance)
                out.cells[key] = flags
                out.outputs += len(flags)
                out.differing += sum(flags)
                any_pair.update(i for i, f in enumerate(flags) if f)
                out.mean_diff[key] = 100 * sum(diffs) / len(diffs) if diffs else float("nan")
    out.pairs_differing = len(any_pair)
    return out
