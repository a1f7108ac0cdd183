"""`review check`: the default rule file (the metric's `check_rules`), rule files by name
through the one resolver, folders, and the messages for files that are not PDFs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from review.errors import InputFileError
from review.metric import find_rule_file, load_metric
from review.settings import load_settings
from tests.conftest import DATA, shared_path
from tests.rules_support import pattern


def test_the_rouge_folder_names_the_precise_file_for_check() -> None:
    rouge, bleu = load_metric("rouge"), load_metric("bleu")
    assert rouge.check_rules == pattern("rouge-precise.toml").resolve()
    assert bleu.check_rules == bleu.rules  # no check_rules key: the rule file itself
    assert set(rouge.rule_files()) == {"rouge", "rouge-precise"}


def test_rule_files_by_name_path_or_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(None)
    assert find_rule_file("rouge-precise", settings) == pattern("rouge-precise.toml").resolve()
    assert find_rule_file("bleu", settings) == pattern("bleu.toml").resolve()  # another shipped folder's
    own = tmp_path / "mine.toml"
    shutil.copy(pattern("rouge.toml"), own)
    assert find_rule_file("mine.toml", settings) == own.resolve()
    with pytest.raises(InputFileError) as exc:
        find_rule_file("rouge-precis", settings)
    assert "bleu, rouge, rouge-precise" in (exc.value.hint or "")


def test_check_defaults_to_precise_and_takes_names(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    paper = tmp_path / "p.txt"
    # figure tick labels read as a package version by the faithful file (issue 31, item 5)
    paper.write_text("We report ROUGE-1, ROUGE-2 and ROUGE-L F1 of our summarizer. Figure 3: ROUGE-2 0.154 0.155 0.156. "
                     "The py-rouge package (pypi.org/project/py-rouge) computes them.")
    code, out, err = cli("check", str(paper), "--json")
    default = json.loads(out)
    assert default["rules"] == "rouge-precise" and "rouge-precise" in err
    assert default["packages"] == ["DI/pyrouge"]  # no ROUGE-1.5.5 from tick labels, no PT/rouge from py-rouge
    code_named, out_named, _ = cli("check", str(paper), "--rules", "rouge-precise", "--json")
    assert json.loads(out_named)["rules_sha256"] == default["rules_sha256"] and code_named == code
    _, out_faithful, _ = cli("check", str(paper), "--rules", "rouge", "--json")
    faithful = json.loads(out_faithful)
    assert faithful["rules"] == "rouge" and {"ROUGE-1.5.5", "PT/rouge"} <= set(faithful["packages"])
    code, out, err = cli("check", str(paper), "--rules", "rouge-precis")
    assert code == 5 and "rule file not found" in err and "rouge-precise" in err and "Traceback" not in out + err


def test_check_label_rules_setting_still_wins(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    paper = tmp_path / "p.txt"
    paper.write_text("We report ROUGE-L F1.")
    config = tmp_path / "review.toml"
    config.write_text('[label]\nrules = "rouge"\n')
    _, out, _ = cli("--config", str(config), "check", str(paper), "--json")
    assert json.loads(out)["rules"] == "rouge"


def test_d19_1620_is_irreproducible_by_default(cli) -> None:  # type: ignore[no-untyped-def]
    pdf = shared_path("pdfs", "emnlp2019-D19-1620-grenander-lead-bias.pdf")
    code, out, err = cli("check", str(pdf), "--json")
    data = json.loads(out)
    assert code == 1 and data["irreproducible"] and data["params"] == [], err
    code, out, _ = cli("check", str(pdf), "--rules", "rouge", "--json")
    assert code == 0 and json.loads(out)["r1"]  # the faithful file's false reassurance, still there by name


def test_not_a_pdf_and_empty_file_say_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = tmp_path / "paper.pdf"
    text.write_text("We report ROUGE-L.\n")
    code, out, err = cli("check", str(text))
    assert code == 8 and "not a PDF (it is plain text)" in err and "PDFium" not in err
    html = tmp_path / "page.pdf"
    html.write_text("<!DOCTYPE html><html><body>404</body></html>")
    code, _, err = cli("check", str(html))
    assert code == 8 and "HTML page" in err
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    code, out, err = cli("check", str(empty))
    assert code == 8 and "empty file" in err and "corrupt" not in err


def test_check_json_errors_are_json_on_stdout(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    code, out, _ = cli("check", str(empty), "--json")
    data = json.loads(out)
    assert code == 8 and data["exit_code"] == 8 and "empty file" in data["error"] and data["source"] == str(empty)
    code, out, _ = cli("check", str(tmp_path / "missing.pdf"), "--json")
    assert code == 8 and "file not found" in json.loads(out)["error"]
    code, out, _ = cli("check", str(empty), "--rules", "nope", "--json")
    assert code == 5 and json.loads(out)["exit_code"] == 5


def test_check_a_folder(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(DATA / "pdfs" / "rouge-paper.pdf", folder / "rouge-paper.pdf")
    shutil.copy(DATA / "pdfs" / "plain-paper.pdf", folder / "plain-paper.pdf")
    (folder / "broken.pdf").write_text("not a pdf")
    (folder / "notes.txt").write_text("ignored: not a PDF file name")
    code, out, err = cli("check", str(folder), "--json")
    data = json.loads(out)
    assert [Path(p["source"]).name for p in data["papers"]] == ["broken.pdf", "plain-paper.pdf", "rouge-paper.pdf"]
    assert data["counts"]["files"] == 3 and data["counts"]["unreadable"] == 1
    assert "not a PDF" in data["papers"][0]["error"] and data["papers"][2]["computes"] is True
    assert code == 8 and "3 PDF(s) checked" in err
    (folder / "broken.pdf").unlink()
    code, out, err = cli("check", str(folder))
    assert code in (0, 1) and "2 PDF(s)" in out and "0 unreadable" in err


def test_check_an_empty_folder_is_an_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    code, out, err = cli("check", str(tmp_path / "empty"))
    assert code == 8 and "no PDF files in the folder" in err and "Traceback" not in out + err


def test_every_rule_file_setting_goes_through_the_one_resolver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from review.labelstudio.tasks import label_config
    from review.rules.stage import resolve_rules

    monkeypatch.chdir(tmp_path)
    (tmp_path / "review.toml").write_text('[label]\nrules = "rouge-precise"\n')
    settings = load_settings(tmp_path / "review.toml")
    assert resolve_rules(settings).name == "rouge-precise"  # label, compute, queue, survey read it so
    assert resolve_rules(settings, "rouge").name == "rouge"  # --rules NAME wins over the setting
    assert label_config("papers", settings).questions  # the review form's choices come from the same file
