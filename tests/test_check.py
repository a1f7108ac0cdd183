"""`review check` on .txt/.md files: findings with evidence, R1/R2, exit codes, JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from review.check import check_text
from tests.rules_support import pattern, rules

R1_TEXT = ("We evaluate with ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m, reporting ROUGE-L F1 with Porter stemming; "
           "code at https://github.com/us/ours.")
IRREPRODUCIBLE = "Our model improves ROUGE-2 by 1.3 points over the baseline."
JSON_KEYS = {"prelim", "computes", "packages", "params", "protocol", "variants", "code_urls", "r1", "r2",
             "evidence"}


def test_check_text_reports_labels_evidence_and_r1() -> None:
    r = check_text(R1_TEXT, rules())
    assert r.computes and r.r1 and not r.r2 and not r.irreproducible
    assert r.packages == ["ROUGE-1.5.5"] and r.params == [" -c 95 -r 1000 -n 2 -m"]
    assert r.protocol == ["stemming"] and r.variants == ["f-score"] and r.missing == []
    ev = {e.label: e for e in r.evidence}
    assert R1_TEXT[ev["ROUGE-1.5.5"].start:ev["ROUGE-1.5.5"].end].strip() == "ROUGE-1.5.5"
    assert "ROUGE-1.5.5" in ev["ROUGE-1.5.5"].snippet and ev["params"].rule == "params"


def test_check_text_r2_and_missing() -> None:
    r2 = check_text("ROUGE-L from pycocoevalcap.", rules())
    assert r2.r2 and not r2.r1 and not r2.irreproducible
    bad = check_text(IRREPRODUCIBLE, rules())
    assert bad.irreproducible and bad.missing == ["package", "parameters", "measures", "protocol", "code link"]


def test_cli_check_txt_ok_and_md_irreproducible(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "paper.txt"
    good.write_text(R1_TEXT)
    code, out, err = cli("check", str(good), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert JSON_KEYS <= set(data) and data["r1"] is True and data["computes"] is True
    assert {"label", "rule", "start", "end", "snippet"} <= set(data["evidence"][0])
    md = tmp_path / "paper.md"
    md.write_text("# Results\n\n" + IRREPRODUCIBLE + "\n")
    code, out, err = cli("check", str(md))
    assert code == 1 and "irreproducible" in err
    assert "missing: package, parameters, measures, protocol, code link" in out


def test_cli_check_paper_without_the_metric_passes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bleu.txt"
    p.write_text("We report BLEU.")
    code, out, err = cli("check", str(p), "--json")
    assert code == 0 and json.loads(out)["prelim"] is False and "does not compute" in err


def test_cli_check_with_another_rule_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "mt.txt"
    p.write_text("BLEU scores with SacreBLEU (nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0), detokenized.")
    code, out, err = cli("check", str(p), "--rules", str(pattern("bleu.toml")), "--json")
    data = json.loads(out)
    assert code == 0, err
    assert data["packages"] == ["SacreBLEU"] and data["r1"] and data["protocol"] == ["casing", "detokenized", "smoothing", "tokenization"]
    assert data["params"] == ["nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"]


def test_cli_check_bad_inputs_have_clear_messages_and_codes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n\n")
    code, out, err = cli("check", str(empty))
    assert code == 8 and "no text to check" in err and "Traceback" not in out + err
    code, _, err = cli("check", str(tmp_path / "missing.txt"))
    assert code == 8 and "file not found" in err
    other = tmp_path / "paper.docx"
    other.write_bytes(b"PK\x03\x04")
    code, _, err = cli("check", str(other))
    assert code == 8 and "unsupported file type '.docx'" in err
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\n")  # no xref, no pages: not a readable PDF
    code, out, err = cli("check", str(broken))
    assert code == 8 and "cannot extract text from the PDF" in err and "Traceback" not in out + err
    rules_file = tmp_path / "r.toml"
    rules_file.write_text("schema = 1\nname = 'x'\n[prelim]\npattern = '('\n")
    good = tmp_path / "ok.txt"
    good.write_text(R1_TEXT)
    code, _, err = cli("check", str(good), "--rules", str(rules_file))
    assert code == 5 and "[prelim]: invalid regex '('" in err


def test_bleu_rule_file_labels_through_the_same_engine() -> None:
    from tests.rules_support import labels

    bleu = rules("bleu.toml")
    got = labels("BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.4.14 from sacreBLEU; "
                 "also multi-bleu.perl on lowercased text. BLEU-4 is 27.3.", bleu)
    assert got.computes and got.packages == ("SacreBLEU", "multi-bleu.perl")
    assert got.params == ("BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.4.14",)
    assert "casing" in got.protocol
    assert not labels("We report ROUGE-L with pyrouge.", bleu).prelim
    assert not labels("The bleu cheese was served.", bleu).computes
