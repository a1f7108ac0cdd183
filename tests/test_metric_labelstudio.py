"""The forms of each metric against a real Label Studio: accepted, one project per metric,
a reviewer's answers to a BLEU project pulled back into its labels."""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from review.db.models import HumanDecision, HumanProject
from review.db.session import Database
from review.labelstudio import run_pull, run_queue
from review.labelstudio.configs import render
from review.metric import load_metric
from review.settings import Settings
from tests.labelstudio_support import choices, ls_server, reviewers, text  # noqa: F401

METEOR = Path(__file__).resolve().parent / "data" / "metrics" / "meteor"


def test_every_metric_s_forms_are_accepted_by_label_studio(ls_server):
    client = ls_server.client()
    for ref in ("rouge", "bleu", str(METEOR)):
        metric = load_metric(ref)
        for kind in ("papers", "code"):
            pid = client.create_project(f"form {metric.id} {kind} {uuid.uuid4().hex[:6]}", render(kind, metric), 1)
            stored = client.get_project(pid)["label_config"]
            assert f"Which {metric.name}" in stored  # the server keeps the metric's own form


@pytest.mark.slow
def test_a_bleu_project_of_its_own_and_a_reviewer_s_answers_pull_back(ls_server, reviewers, tmp_path):
    from review.compute import run_compute
    from review.export import run_export
    from review.survey import run_sample_survey

    settings = Settings(data_dir=tmp_path / "db", exports_dir=tmp_path / "exports")
    settings.label.metric = "bleu"
    survey = run_sample_survey(settings)
    db = Database(survey.database)
    try:
        tag = uuid.uuid4().hex[:6]
        papers = run_queue(db, settings, "papers", project=f"BLEU papers {tag}", client=ls_server.client())
        code = run_queue(db, settings, "code", project=f"BLEU code {tag}", client=ls_server.client())
        assert (papers.imported, code.imported) == (9, 4)  # prelim papers; every linked codebase
        client = ls_server.client()
        form = client.get_project(papers.project_id)["label_config"]
        assert '<Choice value="SacreBLEU"/>' in form and "ROUGE-1.5.5" not in form
        assert "P0 Does the paper compute BLEU" in form
        tasks = {t.data["ident"]: t for t in client.all_tasks(papers.project_id)}
        (pred,) = tasks["2018.sample-1.1"].predictions
        proposed = {r["from_name"]: r["value"] for r in pred["result"]}
        assert proposed["P4"] == {"choices": ["SacreBLEU"]}
        assert proposed["P1"] == {"text": ["nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"]}
        assert proposed["P3"] == {"choices": ["casing", "detokenized", "smoothing", "tokenization"]}
        # a reviewer reads 2020.sample-1.3 and its code: the paper does give its parameters
        # (multi-bleu.perl has none but -lc), and the code's evaluation is complete after all
        r1 = reviewers[0]
        r1.client.create_annotation(tasks["2020.sample-1.3"].id, [
            choices("P0", "yes"), text("P1", "multi-bleu.perl -lc"), choices("P4", "multi-bleu.perl"),
            choices("P3", "tokenization", "casing")])
        code_tasks = {t.data["repository"]: t for t in client.all_tasks(code.project_id)}
        r1.client.create_annotation(code_tasks["sample-org/doc-mt"].id, [
            choices("C0", "yes"), choices("C1", "multi-bleu.perl"), choices("C2", "yes")])
        pulled = run_pull(db, settings, client=ls_server.client())
        assert pulled.new == 7
        with db.session() as s:
            answers = {d.question: d.answer for d in s.scalars(select(HumanDecision))}
            kinds = {p.title: p.kind for p in s.scalars(select(HumanProject))}
        assert answers["P1"] == ["multi-bleu.perl -lc"] and answers["C1"] == ["multi-bleu.perl"]
        assert kinds == {f"BLEU papers {tag}": "papers", f"BLEU code {tag}": "code"}
        run_compute(db, settings)
        out = run_export(db, settings, out_dir=tmp_path / "reviewed")
        with (out.out_dir / "dataset.csv").open() as fh:
            row = {r["paper_ident"]: r for r in csv.DictReader(fh)}["2020.sample-1.3"]
        assert (row["paper_params"], row["r1"], row["code_bleu"], row["r3"], row["reproducible"]) == (
            "true", "true", "true", "true", "true")
        assert json.loads(row["code_packages"]) == ["multi-bleu.perl"] and row["software_error"] == "true"
        sources = json.loads(row["label_sources"])
        assert sources["P1"] == "human" and sources["C2"] == "human" and row["label_source"] == "mixed"
    finally:
        db.dispose()
