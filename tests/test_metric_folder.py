"""A metric is a folder of data files: loading, checking, old paths and settings, the forms,
and a third metric (METEOR, tests/data/metrics/meteor) run end to end without any code."""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import logging
from pathlib import Path

import pytest

from review.errors import ConfigError, RuleFileError
from review.labelstudio.configs import render
from review.labelstudio.tasks import parse_config
from review.metric import default_metric, find_data_file, load_metric, metric_of, shipped_metrics
from review.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
METEOR = ROOT / "tests" / "data" / "metrics" / "meteor"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_shipped_metrics_are_folders_and_table5_kept_its_bytes():
    assert {"rouge", "bleu"} <= set(shipped_metrics())
    rouge, bleu = load_metric("rouge"), load_metric("bleu")
    assert default_metric().id == "rouge" and (rouge.name, rouge.column) == ("ROUGE", "rouge")
    assert (bleu.name, bleu.column) == ("BLEU", "bleu") and bleu.published == ()
    assert rouge.rules == ROOT / "patterns" / "rouge" / "rouge.toml"
    # the sha256 every export carries: the move changed no byte of Table 5; the catalog's pin moved
    # with issue 33 (torchmetrics entry, per-mode claims, measured citations), on purpose
    assert _sha(rouge.rules).startswith("0a7eb417a8ad")
    assert _sha(rouge.packages).startswith("b94918259d96")
    assert rouge.files["precise"].name == "rouge-precise.toml" and rouge.sample is not None
    assert {p.statistic for p in rouge.published} >= {"rouge_papers", "code_with_rouge", "package:MS/rouge"}
    assert rouge.term == "rouge" and bleu.term == "bleu"
    assert rouge.column_name("paper_metric_prelim") == "paper_rouge_prelim"
    assert bleu.stat_name("code_with_metric") == "code_with_bleu" and bleu.column_name("packages") == "packages"


def test_a_metric_is_chosen_by_name_or_path_and_a_wrong_one_is_named(tmp_path):
    assert load_metric(str(METEOR)).id == "meteor"
    assert load_metric(str(METEOR / "metric.toml")).name == "METEOR"
    s = Settings()
    s.label.metric = "bleu"
    assert metric_of(s).id == "bleu"
    with pytest.raises(ConfigError, match="no metric folder 'chrf'") as exc:
        load_metric("chrf")
    assert "rouge" in (exc.value.hint or "") and "bleu" in (exc.value.hint or "")


@pytest.mark.parametrize("change, message", [
    ({"name": None}, "`name`"),
    ({"colour": "red"}, "unknown key"),
    ({"column": "Meteor Score"}, "lower-case word"),
    ({"rules": "missing.toml"}, "not a file in the metric folder"),
    ({"packages": None}, "`packages`"),
    ({"wording": {"P0": "Does it use {metirc}?"}}, "unknown placeholder"),
    ({"wording": {"figure9_title": "x"}}, "unknown key 'figure9_title'"),
    ({"published": [{"statistic": "reproducible", "wording": "r", "value": 1.5, "unit": "share"}]},
     "between 0 and 1"),
])
def test_a_bad_metric_folder_is_refused_naming_the_file_and_the_key(tmp_path, change, message):
    import shutil
    import tomllib

    folder = tmp_path / "bad"
    shutil.copytree(METEOR, folder)
    data = tomllib.loads((folder / "metric.toml").read_text())
    for key, value in change.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    (folder / "metric.toml").write_text(_toml(data))
    with pytest.raises(RuleFileError, match=message) as exc:
        load_metric(str(folder))
    assert "metric.toml" in str(exc.value)


def _toml(data: dict) -> str:
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append(f"[{key}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in value.items()))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for entry in value:
                tables.append(f"[[{key}]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items()))
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n" + "\n".join(tables)


def test_paths_of_the_flat_layout_still_work_with_a_warning_naming_the_new_path(tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.WARNING, logger="review")
    monkeypatch.chdir(ROOT)
    import review.metric as metric_module

    monkeypatch.setattr(metric_module, "_warned", set())
    assert find_data_file("patterns/rouge-precise.toml") == ROOT / "patterns" / "rouge" / "rouge-precise.toml"
    assert find_data_file("patterns/bleu.toml") == ROOT / "patterns" / "bleu" / "bleu.toml"
    warned = [r.getMessage() for r in caplog.records]
    assert any("patterns/rouge/rouge-precise.toml" in w for w in warned), warned
    # a user's config of the old shape: rules, catalog and code catalog are all found
    config = tmp_path / "review.toml"
    config.write_text('[label]\nrules = "patterns/rouge.toml"\n[compute]\npackages = "patterns/packages.toml"\n'
                      '[code]\ncatalog = "patterns/code_packages.toml"\n')
    settings = load_settings(config)
    from review.codebases.catalog import load_catalog as load_code_catalog
    from review.compute import load_catalog
    from review.rules.stage import resolve_rules

    assert resolve_rules(settings).sha256.startswith("0a7eb417a8ad")
    assert load_catalog(settings.compute.packages, settings).sha256.startswith("b94918259d96")
    assert load_code_catalog(settings.code.catalog, settings).prelim == "rouge"
    # a name two metric folders share is not guessed
    with pytest.raises(Exception, match="metric folders hold a file of that name"):
        find_data_file("patterns/packages.toml")


def test_settings_renamed_for_metric_folders_keep_working(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="review")
    config = tmp_path / "review.toml"
    config.write_text("[compute]\nunknown_pyrouge_counts = false\nautomated_code_rouge = false\n")
    settings = load_settings(config)
    assert settings.compute.counts_as_package == {"unknown pyrouge": False}
    assert settings.compute.automated_code_metric is False
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert 'counts_as_package = {"unknown pyrouge" = false}' in warned and "automated_code_metric = false" in warned
    config.write_text("[compute]\nno_such_thing = 1\n")  # a key that is no renamed one stays an error
    with pytest.raises(ConfigError, match="unknown key 'compute.no_such_thing'"):
        load_settings(config)


def test_the_forms_are_the_metric_s_with_the_same_structure():
    rouge = parse_config(render("papers", load_metric("rouge")))
    bleu = parse_config(render("papers", load_metric("bleu")))
    meteor = parse_config(render("papers", load_metric(str(METEOR))))
    for form in (rouge, bleu, meteor):
        assert list(form.questions) == ["P0", "P1", "P2", "P3", "P4", "C0", "note"]
        assert form.questions["P0"].choices == ("yes", "no", "can't tell")
        assert all(form.questions[q].shown_when == ("P0", ("yes",)) for q in ("P1", "P2", "P3", "P4"))
    assert bleu.questions["P3"].choices == ("NONE", "tokenization", "detokenized", "casing", "smoothing",
                                            "bootstrapping")
    assert bleu.questions["P4"].choices[:3] == ("NONE", "SacreBLEU", "mteval-v13a")
    assert "multi-bleu.perl" in bleu.questions["P4"].choices and "ROUGE-1.5.5" not in bleu.questions["P4"].choices
    assert "P0 Does the paper compute BLEU" in bleu.xml and "SacreBLEU signature" in bleu.xml
    assert rouge.questions["P2"].choices == ("NONE", "precision", "recall", "f-score")
    assert meteor.questions["P4"].choices == ("NONE", "METEOR-1.5", "NLTK")
    assert "P4 Which METEOR software is cited?" in meteor.xml  # the default wording
    code = parse_config(render("code", load_metric("bleu")))
    assert code.questions["C1"].choices[0] == "NONE" and code.questions["C1"].choices[-1] == "can't tell"
    assert code.questions["C2"].choices == ("yes", "no", "can't tell")


def test_no_python_names_a_metric():
    """Knowledge about a metric is data: in review/, a metric's name may appear in comments and
    docstrings, in the database's column names (the released dataset's) and as the default
    of `label.metric`, nowhere else."""
    allowed = {("review/settings.py", "rouge"),  # label.metric's default
               ("review/db/models/compute.py", "paper_rouge"), ("review/db/models/compute.py", "paper_rouge_prelim"),
               ("review/db/models/compute.py", "code_rouge"), ("review/db/models/compute.py", "code_rouge_prelim"),
               ("review/db/models/codebases.py", "code_rouge_prelim"),
               ("review/db/models/codebases.py", "scan_rouge_prelim")}
    found = []
    for path in sorted((ROOT / "review").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                text = node.value
            elif isinstance(node, ast.Name):
                text = node.id
            elif isinstance(node, ast.Attribute):
                text = node.attr
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg)):
                text = getattr(node, "name", None) or getattr(node, "arg", "")
            else:
                continue
            low = text.lower()
            if any(word in low for word in ("rouge", "bleu", "meteor")) and (rel, text) not in allowed:
                found.append(f"{rel}:{getattr(node, 'lineno', '?')}: {text[:80]!r}")
    assert found == []


@pytest.mark.slow
def test_a_third_metric_runs_the_sample_survey_from_its_folder_alone(cli, tmp_path):
    code, out, err = cli("--silent", "survey", "--sample", "--metric", str(METEOR), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert {s["stage"]: s["status"] for s in result["stages"]}["export"] == "ok"
    exports = tmp_path / "exports" / "sample-meteor"  # its own folders, beside the default metric's
    assert (tmp_path / "db" / "sample-meteor" / "review.sqlite").is_file()
    with (exports / "dataset.csv").open() as fh:
        rows = {r["paper_ident"]: r for r in csv.DictReader(fh)}
    assert list(next(iter(rows.values())))[11:14] == ["paper_meteor", "paper_meteor_prelim", "paper_params"]
    got = {ident: (r["paper_meteor"], r["paper_meteor_prelim"], json.loads(r["paper_packages"]),
                   json.loads(r["paper_param_strings"]), json.loads(r["code_packages"]), r["r1"], r["r3"],
                   r["reproducible"], r["software_error"]) for ident, r in rows.items()}
    assert got == {
        "2019.sample-1.1": ("true", "true", ["METEOR-1.5"], ["-l en -norm"], ["METEOR-1.5"], "true", "true", "true",
                            "false"),
        "2020.sample-1.2": ("true", "true", ["NLTK"], [], [], "false", "false", "false", ""),
        "2021.sample-1.3": ("false", "false", [], [], [], "", "", "", ""),
        "2021.sample-1.4": ("false", "true", [], [], [], "", "", "", ""),
        "2022.sample-1.5": ("", "", [], [], [], "", "", "", ""),
    }
    assert rows["2022.sample-1.5"]["error_download"] == "http_404"
    assert json.loads(rows["2019.sample-1.1"]["paper_protocol"]) == ["paraphrase"]
    with (exports / "statistics.csv").open() as fh:
        stats = {r["name"]: (int(r["count"]), r["denominator"], r["description"]) for r in csv.DictReader(fh)}
    assert stats["meteor_papers"] == (2, "", "papers that compute METEOR (P0)")
    assert {k: v[:2] for k, v in stats.items() if k in ("reproducible", "code_with_meteor", "list_parameters", "r1",
                                                          "r2", "r3", "cite_package")} == {
        "reproducible": (1, "2"), "code_with_meteor": (1, "2"), "list_parameters": (1, "2"), "r1": (1, "2"),
        "r2": (0, "2"), "r3": (1, "2"), "cite_package": (2, "2")}
    with (exports / "prisma.csv").open() as fh:
        flow = {r["box"]: int(r["count"]) for r in csv.DictReader(fh)}
    assert (flow["records identified"], flow["no PDF retrieved"], flow["excluded by the preliminary search"],
            flow["excluded by screening"], flow["papers that compute METEOR"]) == (5, 1, 1, 1, 2)
    assert (exports / "comparison.csv").read_text().strip() == "statistic,paper_wording,unit,published,this_run"
    report = (exports / "report.html").read_text()
    assert "<h1>METEOR reporting review</h1>" in report and "published figures" not in report
    manifest = json.loads((exports / "manifest.json").read_text())
    assert manifest["metric"]["name"] == "meteor"
    tasks = json.loads((exports / "human" / "papers.json").read_text())
    first = next(t for t in tasks if t["data"]["ident"] == "2019.sample-1.1")
    proposed = {r["from_name"]: r["value"] for r in first["predictions"][0]["result"]}
    assert proposed["P4"] == {"choices": ["METEOR-1.5"]} and proposed["P1"] == {"text": ["-l en -norm"]}
