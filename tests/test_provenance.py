"""One source of truth for provenance (issue 31, item 1): every export names what made its rows.

The scenario of the issue: label with the faithful rule file, then `label --rules
rouge-precise --diff --against ...` (which stores the precise rule set, the newest one),
compute (which reads the faithful labels) and export: every file must name the faithful
rule set, because that is what the rows were computed from.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from sqlalchemy import select, update

from review.db.models import Codebase, CodeFinding, Paper, PaperText, Run
from review.db.session import Database
from review.provenance import Provenance, RowProvenance
from tests.rules_support import pattern

TEXTS = {
    "p-r1": "We report ROUGE-1 scores from ROUGE-1.5.5 with -c 95 -r 1000 -n 2 -m, and Porter stemming. "
            "Code: https://github.com/us/ours.",
    "p-pyrouge": "We report ROUGE-2 F1 scores computed via pltrdy/pyrouge.",
    "p-r2": "We report ROUGE-L computed with nlg-eval (Maluuba). Recall and precision are given.",
}


def _papers(db: Database) -> None:
    with db.session() as s:
        for ident, text in TEXTS.items():
            p = Paper(ident=ident, source="local", title=ident)
            s.add(p)
            s.flush()
            s.add(PaperText(paper_id=p.id, content=text, chars=len(text), outcome="ok", extractor="pdfium",
                            extractor_version="4.30", normalizer_version="2"))
        # the scan of p-r1's codebase: its findings point at the scan run
        pid = s.scalar(select(Paper.id).where(Paper.ident == "p-r1"))
        run = Run(command="code scan", tool_version="0.1.0", status="ok", signature={"scanner": "review-code-scan-2"})
        cb = Codebase(paper_id=pid, url="https://github.com/us/ours", host="github.com", owner="us", name="ours",
                      scan_outcome="ok", scan_commit="abc", packages=["ROUGE-1.5.5"], anti_features=[])
        s.add_all([run, cb])
        s.flush()
        s.add(CodeFinding(codebase_id=cb.id, kind="condition", label="C2.1 runs", file="", text="holds",
                          role="holds", rules_sha256="c" * 64, run_id=run.id))


def _dataset(out: Path) -> dict[str, dict[str, str]]:
    with (out / "dataset.csv").open() as fh:
        return {r["paper_ident"]: r for r in csv.DictReader(fh)}


def _header(out: Path) -> str:
    report = (out / "report.html").read_text()
    return re.search(r'<p class="small" id="provenance">(.*?)</p>', report).group(1)


def test_export_names_the_rule_set_compute_used_not_the_newest(cli, tmp_path: Path) -> None:
    code, _, err = cli("db", "upgrade")
    assert code == 0, err
    db = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    _papers(db)
    db.dispose()
    code, out, err = cli("label", "--json")
    assert code == 0, err
    faithful = json.loads(out)
    assert faithful["rule_set"] == "rouge"
    code, out, err = cli("label", "--rules", str(pattern("rouge-precise.toml")), "--diff", "--against",
                         faithful["sha256"][:10], "--json")
    assert code == 0, err
    precise = json.loads(out)["sha256"]
    assert precise != faithful["sha256"]
    code, out, err = cli("compute", "--json")
    assert code == 0, err
    assert json.loads(out)["rule_set"] == f"rouge@{faithful['sha256'][:12]}"
    code, _, err = cli("export", "--out", "out")
    assert code == 0, err
    out_dir = tmp_path / "out"

    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert f"rules:rouge|rules_sha256:{faithful['sha256'][:12]}|" in manifest["signature"]
    assert "rouge-precise" not in manifest["signature"] and precise[:12] not in manifest["signature"]
    assert "extractor:pdfium 4.30, normalizer 2" in manifest["signature"]
    assert "code_scan:review-code-scan-2 (review 0.1.0), catalog cccccccccccc" in manifest["signature"]
    assert manifest["provenance"]["rule_set"] == {"rouge": 3} and manifest["provenance"]["mixed"] == []
    assert {r["name"]: r["rows"] for r in manifest["rule_sets"]} == {"rouge": 3, "rouge-precise": 0}

    rows = _dataset(out_dir)
    assert {r["rule_set"] for r in rows.values()} == {"rouge"}
    assert {r["rule_set_sha256"] for r in rows.values()} == {faithful["sha256"]}
    assert {r["extractor"] for r in rows.values()} == {"pdfium 4.30, normalizer 2"}
    assert rows["p-r1"]["code_scan"].startswith("review-code-scan-2") and rows["p-r2"]["code_scan"] == ""

    header = _header(out_dir)
    assert "rule set <code>rouge</code>" in header and faithful["sha256"] in header and precise not in header
    with (out_dir / "statistics.csv").open() as fh:
        stats = {r["name"]: r for r in csv.DictReader(fh)}
    assert stats["reproducible"]["provenance"].startswith(f"rules:rouge|rules_sha256:{faithful['sha256'][:12]}")

    # one paper re-extracted by another extractor version: the rows disagree, and the files say so
    db = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    with db.session() as s:
        pid = s.scalar(select(Paper.id).where(Paper.ident == "p-r2"))
        s.execute(update(PaperText).where(PaperText.paper_id == pid).values(extractor_version="4.31"))
    db.dispose()
    code, _, err = cli("export", "--out", "mixed")
    assert code == 0, err
    manifest = json.loads((tmp_path / "mixed" / "manifest.json").read_text())
    assert "|extractor:mixed|" in manifest["signature"] and manifest["provenance"]["mixed"] == ["extractor"]
    assert manifest["provenance"]["extractor"] == {"pdfium 4.30, normalizer 2": 2, "pdfium 4.31, normalizer 2": 1}
    header = _header(tmp_path / "mixed")
    assert "text extractor <strong>mixed</strong>" in header and "pdfium 4.31, normalizer 2</code> (1)" in header
    assert _dataset(tmp_path / "mixed")["p-r2"]["extractor"] == "pdfium 4.31, normalizer 2"


def test_a_summary_says_mixed_when_rows_disagree_and_counts_each_value() -> None:
    made = Provenance.of([RowProvenance("rouge", "a" * 64, "1", "pdfium 4.30", None),
                          RowProvenance("rouge", "a" * 64, "1", "pdfium 4.30", "scan-2"),
                          RowProvenance("rouge-precise", "b" * 64, "1", "pdfium 4.30", None)])
    assert made.header("rule_set") == "mixed" and made.header("extractor") == "pdfium 4.30"
    assert made.single("rule_set") is None and made.single("code_scan") == "scan-2"
    assert made.describe("rule_set") == "rouge (2); rouge-precise (1)"
    assert made.signature() == {"rules": "mixed", "rules_sha256": "mixed", "extractor": "pdfium 4.30",
                                "code_scan": "scan-2"}
    assert made.note().startswith("rules:mixed(rouge (2); rouge-precise (1))|rules_sha256:mixed(")
    assert Provenance.of([]).signature() == {"rules": None, "rules_sha256": None, "extractor": None,
                                             "code_scan": None}
