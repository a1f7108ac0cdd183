"""Estimates from a recorded human sample, end to end: queue a sample (design recorded),
reviewers answer it (the offline `review pull --from-file` path), compute, export."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from review.compute import run_compute
from review.db.models import Paper, PaperLabel, Run, RuleSet, SamplingDesign
from review.estimate.ppi import Stratum, classical_ratio, ppi_ratio
from review.export import run_export
from review.labelstudio.offline import import_annotations
from review.labelstudio.queue import run_queue
from review.settings import Settings
from tests.labelstudio_support import choices, text

SHA = "e" * 64


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(exports_dir=tmp_path / "exports", data_dir=tmp_path / "db")


def corpus(db, n: int, seed: int = 0, year=lambda i: 2019 + i % 3) -> dict[int, dict]:  # type: ignore[no-untyped-def]
    """`n` papers whose true answers are known; the rules miss 40% of listed parameters,
    invent 5%, and get P0 wrong for 12% of papers. Returns paper id -> truth."""
    rng = np.random.default_rng(seed)
    truth = {}
    with db.session() as s:
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256=SHA, path="patterns/rouge/rouge.toml", content="#")
        s.add(rs)
        s.flush()
        for i in range(n):
            metric = bool(rng.random() < 0.8)
            params = metric and bool(rng.random() < 0.5)
            said_metric = metric != bool(rng.random() < 0.12)
            said_params = (rng.random() >= 0.4) if params else bool(rng.random() < 0.05)
            p = Paper(ident=f"2021.est-{i:04d}", source="acl", title=f"Paper {i}", year=year(i), venue="acl")
            s.add(p)
            s.flush()
            s.add(PaperLabel(paper_id=p.id, rule_set_id=rs.id, prelim=True, computes=said_metric,
                             params=["-n 2 -m"] if said_params else [], protocol=[], variants=[],
                             packages=["ROUGE-1.5.5"]))
            truth[p.id] = {"ident": p.ident, "metric": metric, "params": params, "said_metric": said_metric, "said_params": said_params}
    return truth


def review_file(path, truth: dict[int, dict], ids: list[int]) -> None:
    """A Label Studio JSON export in which one reviewer answered each paper truthfully."""
    tasks = []
    for n, pid in enumerate(ids):
        t = truth[pid]
        result = [choices("P0", "yes" if t["metric"] else "no")]
        if t["metric"]:
            result += [text("P1", "-n 2 -m") if t["params"] else text("P1"), choices("P2", "NONE"),
                       choices("P3", "NONE"), choices("P4", "ROUGE-1.5.5")]
        tasks.append({"id": 1000 + n, "data": {"ref": f"paper:{pid}", "ident": t["ident"]},
                      "annotations": [{"id": 5000 + n, "completed_by": 1, "result": result,
                                       "updated_at": "2026-11-20T10:00:00Z", "was_cancelled": False}]})
    path.write_text(json.dumps(tasks))


def stats_of(out) -> dict[str, dict[str, str]]:
    with (out / "statistics.csv").open() as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def test_a_recorded_sample_gives_the_prediction_powered_estimate(db, settings, tmp_path):
    truth = corpus(db, 240)
    q = run_queue(db, settings, "papers", select_="sample", n=80, seed=5, offline=tmp_path / "tasks.json",
                  rule_set=SHA)
    with db.session() as s:
        design = s.get(SamplingDesign, q.design)
        assert (design.method, design.seed, len(design.frame), len(design.items), design.random) == ("sample", 5, 240, 80, True)
        sampled = list(design.items)
    assert sorted(json.loads((tmp_path / "tasks.json").read_text()), key=str) and len(sampled) == 80
    again = run_queue(db, settings, "papers", select_="sample", n=80, seed=5, offline=tmp_path / "tasks.json",
                      rule_set=SHA)
    assert again.design == q.design  # the same draw is one design
    review_file(tmp_path / "export.json", truth, sampled)
    import_annotations(db, settings, tmp_path / "export.json")
    run_compute(db, settings)
    result = run_export(db, settings, out_dir=tmp_path / "out")
    row = stats_of(tmp_path / "out")["list_parameters"]
    assert row["method"] == "ppi" and int(row["n_human"]) == 80

    # the same estimate from the known truth, by hand: y = lists parameters among papers computing ROUGE
    ids = sorted(truth)
    f = lambda key, among: np.array([truth[p][key] for p in among], dtype=float)  # noqa: E731
    d, dhat = f("metric", sampled), f("said_metric", sampled)
    s = Stratum(f("params", sampled) * d, f("said_params", sampled) * dhat, f("said_params", ids) * f("said_metric", ids),
                d, dhat, f("said_metric", ids))
    ppi, human = ppi_ratio([s]), classical_ratio([s])
    assert float(row["estimate"]) == pytest.approx(float(ppi.estimate), abs=1e-6)
    assert (float(row["estimate_low"]), float(row["estimate_high"])) == pytest.approx(
        (float(ppi.low), float(ppi.high)), abs=1e-6)
    assert float(row["human_only"]) == pytest.approx(float(human.estimate), abs=1e-6)
    auto = sum(truth[p]["said_params"] and truth[p]["said_metric"] for p in ids) / sum(truth[p]["said_metric"] for p in ids)
    assert float(row["automated_only"]) == pytest.approx(auto, abs=1e-6)
    missed = [p for p in sampled if truth[p]["metric"] and truth[p]["params"]]
    assert float(row["rule_false_negative"]) == pytest.approx(
        sum(not (truth[p]["said_params"] and truth[p]["said_metric"]) for p in missed) / len(missed), abs=1e-6)
    stats_json = {r["name"]: r for r in json.loads((tmp_path / "out" / "statistics.json").read_text())}
    assert stats_json["list_parameters"]["method"] == "ppi" and stats_json["rouge_papers"]["method"] is None
    report = (tmp_path / "out" / "report.html").read_text()
    assert "Estimates from the human sample" in report and "simple random sample of 80 papers" in report
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["sample"]["design"] == q.design and not result.warnings


def test_too_few_answers_a_cut_draw_and_an_undesigned_sample_are_reported(db, settings, tmp_path):
    truth = corpus(db, 120, seed=1)
    q = run_queue(db, settings, "papers", select_="sample", n=40, seed=2, offline=tmp_path / "t.json", rule_set=SHA,
                  order_="least-certain")  # asked for: not the default of a drawn sample
    with db.session() as s:
        sampled = list(s.get(SamplingDesign, q.design).items)
    tasks = [int(t["data"]["ref"].split(":")[1]) for t in json.loads((tmp_path / "t.json").read_text())]
    review_file(tmp_path / "first.json", truth, tasks[:12])  # the first 12 of 40, least certain first
    import_annotations(db, settings, tmp_path / "first.json")
    run_compute(db, settings)
    result = run_export(db, settings, out_dir=tmp_path / "out")
    assert any("12 of 40 sampled papers reviewed so far, queued in least-certain order" in w for w in result.warnings)
    assert all(r["method"] == "" and r["estimate"] == "" for r in stats_of(tmp_path / "out").values())
    # the file itself says why, not only the log
    notes = {r["name"]: r["estimate_note"] for r in stats_of(tmp_path / "out").values()}
    assert all("queued in least-certain order: the reviewed part is not a random sample" in n for n in notes.values())
    assert all("not a random sample" in r["estimate_note"]
               for r in json.loads((tmp_path / "out" / "statistics.json").read_text()))

    # the same sample queued in random order: the 12 reviewed are a random sample, but too few
    run_queue(db, settings, "papers", select_="sample", n=40, seed=2, order_="random", offline=tmp_path / "t.json",
              rule_set=SHA)
    result = run_export(db, settings, out_dir=tmp_path / "out1")
    assert any("queued in random order" in w for w in result.warnings)
    row = stats_of(tmp_path / "out1")["list_parameters"]
    assert row["method"] == "" and row["estimate"] == "" and "at least 30 needed" in row["estimate_note"]
    assert row["n_human"] == "12" and sorted(sampled) == sampled

    # a draw cut to --limit in least-certain order is not random: recorded so, and refused
    cut = run_queue(db, settings, "papers", select_="sample", n=40, seed=9, limit=10, offline=tmp_path / "c.json",
                    rule_set=SHA, order_="least-certain")
    with db.session() as s:
        assert s.get(SamplingDesign, cut.design).random is False
        # a sample queued by a release that recorded no design
        s.add(Run(command="queue papers", arguments={"select": "sample", "n": 50, "seed": 1}, tool_version="0.1",
                  status="ok", counts={"imported": 50}))
    result = run_export(db, settings, out_dir=tmp_path / "out2")
    assert any("not a random sample" in w and "--limit 10" in w for w in result.warnings)
    assert any("recorded no sampling design" in w for w in result.warnings)
    assert all(r["method"] == "" for r in stats_of(tmp_path / "out2").values())


def test_no_sample_no_new_columns(db, settings, tmp_path):
    corpus(db, 30, seed=2)
    run_compute(db, settings)
    run_export(db, settings, out_dir=tmp_path / "out")
    with (tmp_path / "out" / "statistics.csv").open() as fh:
        # no estimate columns without a sample; `provenance` (what made the rows) is always there
        assert next(csv.reader(fh)) == ["name", "description", "count", "denominator", "share", "ci_low", "ci_high",
                                        "provenance"]
    assert "Estimates from the human sample" not in (tmp_path / "out" / "report.html").read_text()


def test_a_stratified_sample_gets_the_stratified_estimator(db, settings, tmp_path):
    """15 papers from each of three unequal years: each year weighted by its share of the frame."""
    truth = corpus(db, 150, seed=4, year=lambda i: 2019 if i < 90 else (2020 if i < 130 else 2021))
    q = run_queue(db, settings, "papers", select_="stratified", by="year", n=15, seed=1,
                  offline=tmp_path / "t.json", rule_set=SHA)
    with db.session() as s:
        design = s.get(SamplingDesign, q.design)
        assert design.strata == {"2019": [90, 15], "2020": [40, 15], "2021": [20, 15]}
        years = {pid: year for pid, year in design.frame}
        sampled = list(design.items)
    review_file(tmp_path / "answers.json", truth, sampled)
    import_annotations(db, settings, tmp_path / "answers.json")
    run_compute(db, settings)
    run_export(db, settings, out_dir=tmp_path / "out")
    row = stats_of(tmp_path / "out")["list_parameters"]
    assert row["method"] == "ppi-stratified" and row["n_human"] == "45"
    strata = []
    f = lambda key, ids: np.array([truth[p][key] for p in ids], dtype=float)  # noqa: E731
    for year in ("2019", "2020", "2021"):
        frame = [p for p in sorted(truth) if years[p] == year]
        drawn = [p for p in sampled if years[p] == year]
        d, dhat = f("metric", drawn), f("said_metric", drawn)
        strata.append(Stratum(f("params", drawn) * d, f("said_params", drawn) * dhat,
                              f("said_params", frame) * f("said_metric", frame), d, dhat, f("said_metric", frame)))
    weighted = ppi_ratio(strata)
    assert float(row["estimate"]) == pytest.approx(float(weighted.estimate), abs=1e-6)
    assert float(row["estimate_low"]) == pytest.approx(float(weighted.low), abs=1e-6)
    pooled = ppi_ratio([Stratum(*(np.concatenate([getattr(s, k) for s in strata])
                                  for k in ("y", "yhat", "yhat_all", "d", "dhat", "dhat_all")))])
    assert float(pooled.estimate) != pytest.approx(float(weighted.estimate), abs=1e-4)  # the weights matter here
