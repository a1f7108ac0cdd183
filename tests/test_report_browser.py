"""The report as a reader sees it (issue 31 item 4): a banner saying how much people
checked, intervals that say what they assume, one number per count, a per-paper table
with evidence and pages, and a PRISMA diagram whose arrows reach their boxes, measured
in a real headless Chromium (tests/browser_support.py), not by matching strings alone."""

from __future__ import annotations

import csv
import json

import pytest
from PIL import Image
from sqlalchemy import select

from review.compute import run_compute
from review.db.models import Finding, Paper, PaperText, RuleSet
from review.export import run_export
from review.export.stats import bootstrap_ci
from review.settings import ExportSettings, Settings
from tests.browser_support import probe, screenshot
from tests.compute_support import known_corpus

PAGES = ["Title page. Abstract.", "Related work on summarization.",
         "3 Experimental Setup We evaluate with ROUGE-1.5.5 and report ROUGE-1 F1."]


@pytest.fixture
def exported(db, tmp_path):
    """The hand-worked corpus, p01 with a three-page text and the rule match on page 3."""
    ids = known_corpus(db)
    text = "\f".join(PAGES)
    start = text.index("ROUGE-1.5.5")
    with db.session() as s:
        s.scalar(select(PaperText).where(PaperText.paper_id == ids["p01"])).content = text
        rs = s.scalar(select(RuleSet))
        s.add(Finding(paper_id=ids["p01"], rule_set_id=rs.id, rule_id="package.rouge155", kind="package",
                      label="ROUGE-1.5.5", start=start, end=start + 11, match="ROUGE-1.5.5",
                      snippet="We evaluate with ROUGE-1.5.5 and report"))
        s.add(Finding(paper_id=ids["p01"], rule_set_id=rs.id, rule_id="flag.verbatim", kind="flag",
                      label="verbatim", start=0, end=5, match="ROUGE", snippet="Title page"))
    run_compute(db, Settings())
    out = tmp_path / "out"
    run_export(db, Settings(), out_dir=out)
    return db, out


def _dataset(out):
    with (out / "dataset.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_one_count_over_one_denominator_gets_one_interval():
    settings = ExportSettings()
    assert bootstrap_ci(3, 7, settings) == bootstrap_ci(3, 7, settings)
    assert bootstrap_ci(3, 7, settings) != bootstrap_ci(4, 7, settings)


def test_statistics_with_equal_counts_have_equal_intervals(exported):
    _, out = exported
    rows = json.loads((out / "statistics.json").read_text())
    by_fraction: dict[tuple[int, int], set[tuple[float, float]]] = {}
    for r in rows:
        if r["denominator"]:
            by_fraction.setdefault((r["count"], r["denominator"]), set()).add((r["ci_low"], r["ci_high"]))
    assert any(len([r for r in rows if (r["count"], r["denominator"]) == k]) > 1 for k in by_fraction)
    assert all(len(v) == 1 for v in by_fraction.values()), by_fraction


def test_citation_share_is_one_number_in_comparison_and_packages(exported):
    _, out = exported
    with (out / "packages.csv").open(encoding="utf-8") as fh:
        packages = list(csv.DictReader(fh))
    total = sum(int(p["papers"]) for p in packages)
    wrong = sum(int(p["papers"]) for p in packages if p["software_error"] == "true")
    with (out / "comparison.csv").open(encoding="utf-8") as fh:
        compare = {r["statistic"]: r for r in csv.DictReader(fh)}
    assert float(compare["software_error_citations"]["this_run"]) == pytest.approx(wrong / total, abs=1e-6)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"{wrong} of them ({100 * wrong / total:.1f}%)" in html


def test_linked_codebases_count_distinct_codebases_of_metric_papers(exported):
    _, out = exported
    rows = _dataset(out)
    linked = {u for r in rows if r["paper_rouge"] == "true" for u in json.loads(r["code_urls"])}
    with (out / "comparison.csv").open(encoding="utf-8") as fh:
        compare = {r["statistic"]: r for r in csv.DictReader(fh)}
    assert int(compare["codebases"]["this_run"]) == len(linked)


def test_banner_table_and_intervals_in_the_browser(exported, tmp_path):
    _, out = exported
    rows = _dataset(out)
    got = probe(out / "report.html", """
        const banner = document.getElementById('verification');
        const r = banner.getBoundingClientRect();
        const papers = [...document.querySelectorAll('#papers tbody tr')].map(tr => ({
            id: tr.dataset.paper, cells: [...tr.children].map(td => td.textContent)}));
        const heads = [...document.querySelectorAll('th')].map(th => th.textContent);
        const assumes = [...document.querySelectorAll('p.assumes')].map(p => p.textContent);
        return {banner: banner.textContent, verified: +banner.dataset.verified, total: +banner.dataset.papers,
                top: r.top, height: r.height, visible: getComputedStyle(banner).display !== 'none',
                before_figures: banner.compareDocumentPosition(document.querySelector('figure')) & 4,
                papers, heads, assumes, viewport: window.innerHeight,
                not_measured: [...document.querySelectorAll('p.not-measured')].map(p => p.textContent)};
    """, tmp_path)
    human = sum(1 for r in rows if r["label_source"] == "human")
    assert (got["verified"], got["total"]) == (human, len(rows))
    assert f"{human} of {len(rows)} papers verified by people" in got["banner"]
    assert got["visible"] and 0 <= got["top"] < got["viewport"] and got["height"] > 10
    assert got["before_figures"]  # the banner comes before every figure
    # every bootstrap interval column says what it assumes
    ci_heads = [h for h in got["heads"] if "CI" in h]
    assert ci_heads and all("labels taken as right" in h for h in ci_heads)
    assert any("treat every label as right" in a for a in got["assumes"])
    # one row per paper, with its label source, and p01's evidence on page 3 (the package first)
    assert [p["id"] for p in got["papers"]] == [r["paper_ident"] for r in rows]
    by_id = {p["id"]: p["cells"] for p in got["papers"]}
    source = {r["paper_ident"]: r["label_source"] or "none" for r in rows}
    assert all(by_id[i][2] == source[i] for i in by_id)
    p01 = by_id["p01"]
    assert p01[3].startswith("[package] ROUGE-1.5.5") and "We evaluate with ROUGE-1.5.5" in p01[3]
    assert p01[4] == "3, 1"
    # no `review packages` results yet: both package sections say so (tests/test_packages.py fills them)
    assert [n.split(" (")[0] for n in got["not_measured"]] == [
        "not measured yet: run review packages test", "not measured yet: run review packages sensitivity"]


def test_banner_is_on_screen_in_a_screenshot(exported, tmp_path):
    _, out = exported
    shot = screenshot(out / "report.html", tmp_path / "report.png", 1000, 700)
    with Image.open(shot) as img:
        assert img.size == (1000, 700)
        rgb = img.convert("RGB")
        banner = (0xFF, 0xF3, 0xBF)  # .banner background
        hits = sum(n for n, px in rgb.getcolors(maxcolors=1 << 24) if all(abs(a - b) <= 3 for a, b in zip(px, banner)))
    assert hits > 1000  # a visible band of the banner colour in the first screen


def test_prisma_arrows_reach_their_boxes(exported, tmp_path):
    _, out = exported
    got = probe(out / "report.html", """
        const rect = id => { const e = document.getElementById(id); if (!e) return null;
            const r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
        const out = {down: [], side: []};
        for (let i = 0; i < 4; i++) {
            out.down.push({arrow: rect('prisma-arrow-down-' + i), upper: rect('prisma-box-' + i),
                           lower: rect('prisma-box-' + (i + 1))});
            out.side.push({arrow: rect('prisma-arrow-out-' + i), box: rect('prisma-side-' + i)});
        }
        return out;
    """, tmp_path)
    tol = 3  # px: stroke widths and the arrow head's line caps
    for d in got["down"]:
        assert d["arrow"] and d["upper"] and d["lower"]
        assert abs(d["arrow"]["t"] - d["upper"]["b"]) <= tol, d
        assert abs(d["arrow"]["b"] - d["lower"]["t"]) <= tol, d
    for s in got["side"]:
        assert s["arrow"] and s["box"]
        assert abs(s["arrow"]["r"] - s["box"]["l"]) <= tol, s
        assert s["box"]["t"] <= (s["arrow"]["t"] + s["arrow"]["b"]) / 2 <= s["box"]["b"], s


def _record(source: str, sources: dict[str, str] | None):
    from review.export.dataset import Record

    return Record({"label_source": source, "label_sources": sources}, True, True, True, True)


def test_banner_counts_fully_and_partly_verified_papers():
    from review.export.report import verification_banner

    mixed = [_record("human", {"P0": "human"}), _record("mixed", {"P0": "human", "P4": "automated"}),
             _record("automated", {"P0": "automated"})]
    text = verification_banner(mixed)
    assert "Automated proposals:</strong> 1 of 3 papers verified by people (1 more partly)" in text
    done = verification_banner([_record("human", {"P0": "human"})] * 2)
    assert 'class="banner verified"' in done and "all 2 papers" in done
