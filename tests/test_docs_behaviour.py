"""The reference docs against what the code does (issue 31, item 8): the JSON keys they
list, the figures their examples quote from the sample survey, the commands they show.
Each test fails when a doc and the behaviour drift apart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _paragraph(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def _keys(text: str) -> set[str]:
    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", text))


def test_label_md_lists_exactly_the_check_json_keys() -> None:
    from review.check import CheckResult, Evidence

    label = (DOCS / "label.md").read_text()
    listed = _keys(_paragraph(label, "`--json` prints one object with the keys", "The\ntable output"))
    result = CheckResult(metric="ROUGE", prelim=True, computes=True, packages=[], params=[], protocol=[], variants=[],
                         code_urls=[], r1=False, r2=False, missing=[])
    real = set(result.as_dict())
    evidence = set(Evidence("l", "r", "k", 0, 1, "m", "s", attached="a", reason="x").as_dict())
    assert real <= listed, f"docs/label.md misses {sorted(real - listed)}"
    assert listed <= real | evidence, f"docs/label.md names keys check never prints: {sorted(listed - real - evidence)}"
    assert "rouge_prelim" not in label and "computes_rouge" not in label


def test_status_md_lists_the_show_json_keys() -> None:
    from review.show import PaperView

    doc = (DOCS / "status-and-database.md").read_text()
    listed = _keys(_paragraph(doc, "`--json` keys: `paper`", "```"))
    assert set(PaperView(paper={}).as_dict()) <= listed


def test_compute_export_md_quotes_the_sample_survey(cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = cli("--silent", "survey", "--sample", "--json")
    assert code == 0, err
    stages = {s["stage"]: s["summary"] for s in json.loads(out)["stages"]}
    doc = (DOCS / "compute-export.md").read_text()
    quoted = re.findall(r"^computed \d+ papers: .*$", doc, flags=re.M)
    assert quoted, "docs/compute-export.md quotes no compute summary"
    assert quoted == [stages["compute"]], f"docs say {quoted}, the sample survey says {stages['compute']!r}"


def test_evaluate_md_offline_fetch_uses_real_options() -> None:
    doc = (DOCS / "evaluate.md").read_text()
    lines = [ln for ln in doc.splitlines() if "gold/papers/fetch.py" in ln and ln.startswith("$ ")]
    assert any("--offline" in ln and "--git-dir" in ln for ln in lines), "evaluate.md gives no offline fetch"
    helptext = subprocess.run([sys.executable, str(ROOT / "gold" / "papers" / "fetch.py"), "--help"],
                              capture_output=True, text=True, timeout=60).stdout
    for ln in lines:
        for flag in re.findall(r"(--[a-z][a-z-]+)", ln.split("#")[0]):
            assert flag in helptext, f"evaluate.md: fetch.py has no {flag}"


def test_readme_tour_names_the_commands_a_newcomer_needs() -> None:
    readme = (ROOT / "README.md").read_text()
    tour = _paragraph(readme, "## A short tour", "## Documentation")
    for command in ("review import pdfs", "review plan", "review evaluate", "review show", "review check"):
        assert command in tour, f"README's tour omits {command}"
    assert "docs/estimates.md" in readme and "docs/evaluate.md" in readme and "docs/import.md" in readme
