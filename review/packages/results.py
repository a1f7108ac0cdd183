"""Measured results as data: every row carries its signature, written to JSON and CSV.

A signature names what made the number: the package and the version pip installed, its
adapter, whether it came from a lock, the reference and its version, the specimen's
sha256 and size, and the options. `review packages check` reads the newest results back
and compares them with the catalog's `software_error`.
"""

from __future__ import annotations

import csv
import json
import tomllib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from review import __version__
from review.packages.harness import Comparison, Harness, PackageRun
from review.signature import Signature

RESULTS = "packages-{metric}.json"


def signature(h: Harness, ref_version: str, specimen: str, n: int, run: PackageRun | None = None) -> Signature:
    fields: dict[str, Any] = {"metric": h.metric}
    if run is not None:
        c = run.candidate
        fields.update(package=c.name, package_version=run.version, adapter=c.adapter, locked=run.locked)
    fields.update(reference=h.reference["label"], reference_version=ref_version, specimen=specimen[:12], pairs=n,
                  options=_options(h.reference.get("options", [])), tolerance=h.tolerance)
    return Signature(fields)


def _options(options: Any) -> str:
    if isinstance(options, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(options.items()))
    return " ".join(options)


def package_row(h: Harness, run: PackageRun, cmp: Comparison | None, sig: Signature) -> dict[str, Any]:
    """One line of Table 2: how often and by how much a package leaves the reference."""
    row: dict[str, Any] = {"package": run.candidate.name, "label": run.candidate.label, "version": run.version,
                           "status": "failed" if run.reason else "measured", "reason": run.reason}
    if cmp is not None and not run.reason:
        row.update(outputs=cmp.outputs, differing=cmp.differing, not_computed=cmp.not_computed, share_differing=round(cmp.share, 6),
                   pairs_differing=cmp.pairs_differing, inputs_failed=sum(len(e) for e in run.errors.values()),
                   max_mean_diff=round(max((abs(v) for v in cmp.mean_diff.values()), default=0.0), 4),
                   mean_diff={k: round(v, 4) for k, v in cmp.mean_diff.items()},
                   share_by_cell={k: round(sum(f) / len(f), 6) if f else 0.0 for k, f in cmp.cells.items()},
                   first_errors={v: dict(list(e.items())[:3]) for v, e in run.errors.items() if e})
        row["software_error"] = cmp.differing > 0
    row["signature"] = sig.format()
    return row


def write(folder: Path, metric: str, kind: str, rows: list[dict[str, Any]], extra: dict[str, Any]) -> tuple[Path, Path]:
    """`packages-<metric>.json` (one section per kind: test, sensitivity) and `packages-<metric>-<kind>.csv`;
    test rows of the same specimen are merged per package, the newest winning."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RESULTS.format(metric=metric)
    data = json.loads(path.read_text()) if path.is_file() else {}
    old = data.get(kind) or {}
    if extra.get("specimen") and old.get("specimen") == extra["specimen"]:
        # Same specimen: packages measured earlier (another --package run) stay beside the new rows.
        new = {r["package"] for r in rows}
        rows = [r for r in old.get("rows", []) if r["package"] not in new] + rows
    data[kind] = {"measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "tool_version": __version__,
                  **extra, "rows": rows}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    flat = [{k: (json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v) for k, v in r.items()} for r in rows]
    csv_path = folder / f"packages-{metric}-{kind}.csv"
    keys = list(dict.fromkeys(k for r in flat for k in r))
    with csv_path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(flat)
    return path, csv_path


def check(catalog: Path, results: Path) -> list[dict[str, Any]]:
    """Per measured package: the catalog's `software_error` beside the measured one, and whether they agree."""
    entries = {p["label"]: p for p in tomllib.loads(catalog.read_text())["package"]}
    if not results.is_file():
        return []
    rows = json.loads(results.read_text()).get("test", {}).get("rows", [])
    # A label measured in several modes (a wrapper and a reimplementation in one package) is
    # wrong when any mode is: that is what the catalog's one verdict per label says.
    by_label: dict[str, bool] = {}
    for r in rows:
        if isinstance(r.get("software_error"), bool):
            by_label[r["label"]] = by_label.get(r["label"], False) or r["software_error"]
    out = []
    for r in rows:
        entry = entries.get(r["label"])
        cat = entry.get("software_error") if entry else None
        measured = r.get("software_error")
        label_measured = by_label.get(r["label"])
        agree = None if label_measured is None or not isinstance(cat, bool) else cat == label_measured
        out.append({"package": r["package"], "label": r["label"], "version": r["version"],
                    "catalog": "absent" if entry is None else cat, "catalog_result": (entry or {}).get("result", ""),
                    "measured": "failed: " + r["reason"] if measured is None else measured,
                    "share_differing": r.get("share_differing"), "agree": agree, "signature": r["signature"]})
    return out


def latest(folders: list[Path], metric: str) -> tuple[Path | None, dict[str, Any]]:
    """The newest stored results of a metric (`packages-<metric>.json`) in the first folder holding
    them, and their sections (`test`, `sensitivity`); (None, {}) when nothing was measured."""
    for folder in folders:
        path = folder / RESULTS.format(metric=metric)
        if path.is_file():
            return path, json.loads(path.read_text())
    return None, {}


def _wrong_in(row: dict[str, Any], variant: str | None) -> bool | None:
    """Whether a measured row differs anywhere (variant None) or in one variant of the grid."""
    if not isinstance(row.get("software_error"), bool):
        return None
    if variant is None:
        return row["software_error"]
    cells = {k: v for k, v in row.get("share_by_cell", {}).items() if k.split("/")[0] == variant}
    return any(v > 0 for v in cells.values()) if cells else None


def disagreements(catalog: Path, results: Path) -> list[dict[str, Any]]:
    """Every place the catalog and the newest measurement part: a label's `software_error`; each of
    its `claims` (one mode, i.e. a harness candidate, optionally in one variant: "wrong with
    stemming" is `{mode = ..., variant = "stem", software_error = true}`), which the label's one
    verdict would hide when another mode is wrong; and each `measured` citation whose verdict
    the newest result no longer gives, or that cites another measurement (signature)."""
    entries = tomllib.loads(catalog.read_text())["package"]
    rows = {r["package"]: r for r in json.loads(results.read_text()).get("test", {}).get("rows", [])} \
        if results.is_file() else {}
    out: list[dict[str, Any]] = []
    for r in check(catalog, results):
        if r["agree"] is False:
            out.append({"label": r["label"], "package": r["package"], "kind": "software_error",
                        "text": f"{r['label']}: catalog software_error = {str(r['catalog']).lower()}, measured "
                                f"{str(not r['catalog']).lower()} ({r['package']} {r['version']})"})
    for e in entries:
        for c in e.get("claims", []):
            row = rows.get(c["mode"])
            got = None if row is None else _wrong_in(row, c.get("variant"))
            where = c["mode"] + (f" ({c['variant']})" if c.get("variant") else "")
            if got is not None and got != c["software_error"]:
                out.append({"label": e["label"], "package": c["mode"], "kind": "claim",
                            "text": f"{e['label']}: catalog says {where} is {'wrong' if c['software_error'] else 'right'}"
                                    f" ({e.get('result', '')}); measured {'wrong' if got else 'right'} "
                                    f"({row['package']} {row['version']})"})
        for m in e.get("measured", []):
            row = rows.get(m["package"])
            if row is None:
                continue
            if _wrong_in(row, None) is not None and _wrong_in(row, None) != m["software_error"]:
                out.append({"label": e["label"], "package": m["package"], "kind": "citation",
                            "text": f"{e['label']}: cites {m['package']} as {'wrong' if m['software_error'] else 'right'}"
                                    f" (measured {m.get('date', '?')}); the newest measurement says otherwise"})
            elif m.get("signature") and m["signature"] != row["signature"]:
                out.append({"label": e["label"], "package": m["package"], "kind": "citation",
                            "text": f"{e['label']}: cites a measurement of {m['package']} ({m.get('date', '?')}) "
                                    f"that is not the newest (signature {row['signature']})"})
    return out
