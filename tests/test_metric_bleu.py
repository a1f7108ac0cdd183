"""BLEU, shipped complete: signatures as parameter strings, the catalog of Post (2018), the
code signatures, and the sample survey with every label, R1-R3 and statistic known."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from review.check import check_text
from review.codebases.catalog import load_catalog as load_code_catalog
from review.codebases.scan import scan_tree
from review.compute import load_catalog
from review.metric import load_metric
from review.rules.model import load_ruleset
from tests.code_support import make_repo

BLEU = load_metric("bleu")
RULES = load_ruleset(BLEU.rules)
CATALOG = load_catalog(BLEU.packages)
CODE = load_code_catalog(BLEU.code_packages)


@pytest.mark.parametrize("text, params", [
    ("Scores come from SacreBLEU; signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0 .",
     ["nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"]),
    ("We report BLEU (BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.4.14) on newstest2019.",
     ["BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.4.14"]),
    ("BLEU+case.lc+lang.de-en+numrefs.1+smooth.exp+test.wmt17+tok.intl+version.1.2.11 = 32.97",
     ["BLEU+case.lc+lang.de-en+numrefs.1+smooth.exp+test.wmt17+tok.intl+version.1.2.11"]),
])
def test_a_sacrebleu_signature_is_the_parameter_string_and_names_sacrebleu(text, params):
    result = check_text(text, RULES)
    assert result.computes and result.params == params
    assert "SacreBLEU" in result.packages and result.r1 and not result.r2
    assert {"casing", "smoothing", "tokenization"} <= set(result.protocol)


def test_bleu_packages_are_told_apart():
    def packages(text: str) -> list[str]:
        return check_text(text, RULES).packages

    assert packages("BLEU is computed with multi-bleu.perl on tokenized text.") == ["multi-bleu.perl"]
    assert packages("BLEU is computed with multi-bleu-detok.perl.") == ["multi-bleu-detok.perl"]
    assert packages("BLEU scores from mteval-v13a.pl") == ["mteval-v13a"]
    assert packages("BLEU scores from mteval-v14.pl with international tokenization") == ["mteval-v14"]
    assert packages("BLEU scores from NIST's mteval script") == ["mteval"]
    assert packages('BLEU via evaluate.load("sacrebleu") on detokenized output') == ["HF sacrebleu"]
    assert packages('BLEU via evaluate.load("bleu")') == ["HF bleu"]
    assert packages("BLEU-4 with NLTK's sentence_bleu") == ["NLTK"]
    assert packages("we call sacrebleu.corpus_bleu for BLEU") == ["SacreBLEU"]  # not NLTK's corpus_bleu
    assert packages("BLEU from torchtext's bleu_score") == ["torchtext"]


def test_the_catalog_holds_post_2018_and_names_its_sources():
    p = CATALOG.packages
    assert CATALOG.error("SacreBLEU") is False and CATALOG.error("mteval-v13a") is False
    assert CATALOG.error("multi-bleu-detok.perl") is False  # tokenizes like mteval-v13a
    assert CATALOG.error("multi-bleu.perl") is True and CATALOG.error("NLTK") is True  # user-supplied tokenization
    assert CATALOG.error("torchtext") is True and CATALOG.error("fairseq-score") is True
    assert CATALOG.error("Moses") is None and CATALOG.error("mteval") is None  # unidentified: unknown, never correct
    assert CATALOG.no_config_labels == []  # every BLEU package has score-changing options: no R2
    assert RULES.r2_packages == frozenset() and RULES.r1_packages == frozenset(RULES.package_labels)  # rules agree
    for label, pkg in p.items():
        assert "[" in pkg.result or "not compared" in pkg.result, f"{label}: a fact without its source"
    for alias, label in (("sacrebleu", "SacreBLEU"), ("multi-bleu.pl", "multi-bleu.perl"),
                         ("mteval-v13a.pl", "mteval-v13a"), ("nltk.translate.bleu_score", "NLTK")):
        assert CATALOG.canonical(alias) == label
    # rules, code signatures and catalog speak the same labels
    assert set(RULES.package_labels) <= set(p) and set(CODE.labels) <= set(p)
    header = BLEU.packages.read_text()
    assert "W18-6319" in header and "mteval-v13a" in header and "EdinburghNLP/nematus" in header


@pytest.mark.parametrize("files, packages, anti", [
    ({"requirements.txt": "sacrebleu==2.0.0\n", "score.py": "import sacrebleu\n\nsacrebleu.corpus_bleu(h, [r])\n"},
     ["SacreBLEU"], []),
    ({"eval.py": "from sacrebleu.metrics import BLEU\n\nprint(BLEU().corpus_score(h, [r]))\n"}, ["SacreBLEU"], []),
    ({"eval.sh": "#!/bin/sh\nsacrebleu ref.detok -i out.detok -m bleu -b -w 2\n"}, ["SacreBLEU"], []),
    ({"eval.sh": "perl mosesdecoder/scripts/generic/multi-bleu.perl ref.tok < out.tok\n"}, ["multi-bleu.perl"], []),
    ({"eval.sh": "perl multi-bleu-detok.perl ref < out.detok\n"}, ["multi-bleu-detok.perl"], []),
    ({"eval.sh": "perl mteval-v13a.pl -r ref.sgm -s src.sgm -t out.sgm -c\n"}, ["mteval-v13a"], []),
    ({"bleu.py": "from nltk.translate.bleu_score import corpus_bleu, SmoothingFunction\n\nprint(corpus_bleu(refs, hyps))\n"}, ["NLTK"], []),
    ({"bleu.py": "from torchtext.data.metrics import bleu_score\n\nprint(bleu_score(candidates, references))\n"}, ["torchtext"], []),
    ({"m.py": "import evaluate\nbleu = evaluate.load(\"sacrebleu\")\nprint(bleu.compute(predictions=p, references=r))\n",
      "requirements.txt": "sacrebleu\nevaluate\n"},
     ["HF sacrebleu"], []),
    ({"run.sh": "fairseq-generate data --path ckpt.pt --remove-bpe > gen.out\nfairseq-score --sys h --ref r\n"},
     ["fairseq-score"], []),
    ({"eval.sh": "perl multi-bleu.perl ref < out\n", "score.py": "import sacrebleu\n\nprint(sacrebleu.corpus_bleu(h, [r]))\n"},
     ["SacreBLEU", "multi-bleu.perl"], ["several_packages"]),
])
def test_the_code_scan_knows_bleu_packages(tmp_path, files, packages, anti):
    report = scan_tree(make_repo(tmp_path / "repo", files), CODE)
    assert report.packages == packages and report.anti_feature_names == anti
    assert report.prelim == any("bleu" in f"{k} {v}".lower() for k, v in files.items())  # the code names the metric


def test_check_takes_the_metric_from_the_command_line(cli, tmp_path):
    paper = tmp_path / "paper.txt"
    paper.write_text("We report BLEU with SacreBLEU (nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0).")
    code, out, err = cli("check", str(paper), "--metric", "bleu", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["metric"] == "BLEU" and data["rules"] == "bleu" and data["r1"] and data["packages"] == ["SacreBLEU"]
    code, out, err = cli("check", str(paper), "--metric", "nosuchmetric")
    assert code == 3 and "no metric folder 'nosuchmetric'" in err


# The sample's expected rows: (computes, prelim, params, packages, param strings, code packages,
# R1, R3, reproducible, software_error, Figure 3 series); "" = unknown / not applicable.
EXPECTED = {
    "2018.sample-1.1": ("true", "true", "true", ["SacreBLEU"],
                        ["nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"], ["SacreBLEU"],
                        "true", "true", "true", "false", "reproducible"),
    "2019.sample-1.2": ("true", "true", "true", ["SacreBLEU"],
                        ["BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.4.14"], [],
                        "true", "false", "true", "false", "reproducible"),
    "2020.sample-1.3": ("true", "true", "false", ["multi-bleu.perl"], [], ["SacreBLEU", "multi-bleu.perl"],
                        "false", "false", "false", "true", "incorrect package"),
    "2020.sample-1.4": ("true", "true", "false", ["NLTK"], [], ["NLTK"],
                        "false", "true", "true", "true", "reproducible"),
    "2021.sample-1.5": ("true", "true", "false", [], [], ["SacreBLEU"], "false", "true", "true", "false", "reproducible"),
    "2021.sample-1.6": ("false", "false", "false", [], [], [], "", "", "", "", ""),
    "2021.sample-1.7": ("false", "true", "false", [], [], [], "", "", "", "", ""),
    "2022.sample-1.8": ("", "", "", [], [], [], "", "", "", "", ""),
    "2022.sample-1.9": ("true", "true", "false", ["mteval-v13a"], [], [], "false", "false", "false", "false",
                        "correct package, not reproducible"),
    "2022.sample-1.10": ("", "", "", [], [], [], "", "", "", "", ""),
    "2022.sample-1.11": ("true", "true", "false", ["multi-bleu-detok.perl"], [], [], "false", "false", "false", "false",
                         "correct package, not reproducible"),
    "2018.sample-1.12": ("true", "true", "false", ["coco-caption"], [], [], "false", "false", "false", "",
                         "unknown package"),
}
EXPECTED_STATS = {  # name: (count, denominator), over the 8 papers that compute BLEU
    "bleu_papers": (8, ""), "reproducible": (4, "8"), "release_code": (4, "8"), "code_with_bleu": (4, "8"),
    "bootstrapping": (1, "8"), "list_parameters": (2, "8"), "cite_package": (7, "8"),
    "software_error_share": (2, "8"), "incorrect_software": (2, "8"), "r1": (2, "8"), "r2": (0, "8"),
    "r3": (3, "8"), "human_reviewed": (0, "8"),
}


@pytest.mark.slow
def test_the_bleu_sample_survey_gives_the_known_labels_and_statistics(tmp_path):
    from review.db.models import Run
    from review.db.session import Database
    from review.settings import Settings
    from review.survey import run_sample_survey

    settings = Settings(data_dir=tmp_path / "db", exports_dir=tmp_path / "exports")
    settings.label.metric = "bleu"
    result = run_sample_survey(settings)
    assert result.failed == [] and result.out_dir == tmp_path / "exports" / "sample-bleu"
    out = result.out_dir
    with (out / "dataset.csv").open() as fh:
        rows = {r["paper_ident"]: r for r in csv.DictReader(fh)}
    got = {ident: (r["paper_bleu"], r["paper_bleu_prelim"], r["paper_params"], json.loads(r["paper_packages"]),
                   json.loads(r["paper_param_strings"]), json.loads(r["code_packages"]), r["r1"], r["r3"],
                   r["reproducible"], r["software_error"], r["figure3_category"]) for ident, r in rows.items()}
    assert got == EXPECTED
    assert all(r["r2"] in ("false", "") for r in rows.values())
    assert json.loads(rows["2018.sample-1.1"]["paper_protocol"]) == ["casing", "detokenized", "smoothing",
                                                                      "tokenization"]
    assert json.loads(rows["2022.sample-1.9"]["paper_protocol"]) == ["bootstrapping", "detokenized"]
    assert rows["2022.sample-1.10"]["error_download"] == "http_404" and rows["2022.sample-1.8"]["error_extract"]
    with (out / "statistics.csv").open() as fh:
        stats = {r["name"]: (int(r["count"]), r["denominator"]) for r in csv.DictReader(fh)}
    assert stats == EXPECTED_STATS
    with (out / "packages.csv").open() as fh:
        table = {r["package"]: (r["software_error"], int(r["papers"])) for r in csv.DictReader(fh)}
    assert table == {"SacreBLEU": ("false", 4), "NLTK": ("true", 1), "coco-caption": ("unknown", 1),
                     "mteval-v13a": ("false", 1), "multi-bleu-detok.perl": ("false", 1), "multi-bleu.perl": ("true", 1)}
    with (out / "prisma.csv").open() as fh:
        flow = {r["box"]: int(r["count"]) for r in csv.DictReader(fh)}
    assert (flow["records identified"], flow["no PDF retrieved"], flow["no text extracted"],
            flow["excluded by the preliminary search"], flow["excluded by screening"],
            flow["papers that compute BLEU"]) == (12, 1, 1, 1, 1, 8)
    report = (out / "report.html").read_text()
    assert "<h1>BLEU reporting review</h1>" in report and "ROUGE" not in report
    assert "Figure 3: BLEU papers per year" in (out / "figure3.svg").read_text() or (out / "figure3.svg").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["metric"]["name"] == "bleu" and manifest["packages_catalog"]["sha256"] == CATALOG.sha256
    db = Database(result.database)
    try:
        with db.session() as s:
            signed = {r.command: r.signature for r in s.scalars(select(Run).where(Run.status == "ok"))}
    finally:
        db.dispose()
    for command in ("label", "code scan", "compute", "export"):
        assert (signed[command] or {}).get("metric") == "bleu", command
