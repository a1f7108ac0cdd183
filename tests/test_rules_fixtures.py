"""The rules on the real fixture PDFs (../shared/fixtures/pdfs), compared with spec §8.

Text comes from the extraction stage (pypdfium2, the one normalization). Skips cleanly
on a fresh clone without ../shared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import shared_path
from tests.rules_support import labels, rules

# fixture name prefix -> (computes, packages, params) as §8 gives them
SPEC8 = {
    "newsum2019-antognini": (True, {"ROUGE-1.5.5"}, [" -n 2 -m -u -c 95 -x -r 1000 -f A -p 0.5 -t 0"]),
    "acl2020-2020.acl-main.121-zhu": (True, {"PT/files2rouge", "github rouge"}, [" -r 1000 -n 2 -a"]),
    "emnlp2019-D19-1298-xiao-carenini": (True, {"DI/pyrouge", "KZ/rougepapier", "PT/rouge", "ROUGE-1.5.5", "github rouge"},
                                         [" -e data -a -n 2 -r 1000 -f A -z SPL"]),
    "emnlp2019-D19-1620-grenander": (True, {"BZ/pyrouge", "DI/pyrouge", "github rouge", "unknown pyrouge"}, None),
    "acl2020-mao": (True, {"KG/rouge2"}, []),
    "emnlp2019-D19-1051-kryscinski": (True, {"GL/rougescore", "KG/rouge2"}, []),
    "acl2019-P19-1330-hardy": (True, set(), []),
    "acl2020-papalampidi": (False, set(), []),
    "inlg2024-koyama": (False, set(), []),
}

_texts: dict[str, str] = {}


def fixture_text(prefix: str) -> str:
    folder = shared_path("pdfs")
    if prefix not in _texts:
        from review.extract import extract_file

        (path,) = [p for p in folder.glob("*.pdf") if p.name.startswith(prefix)]
        result = extract_file(path, isolate=False)
        assert result.outcome == "ok", (path, result.reason, result.detail)
        _texts[prefix] = result.text or ""
    return _texts[prefix]


@pytest.mark.parametrize("prefix", sorted(SPEC8))
def test_faithful_rules_give_what_spec_section_8_reports(prefix: str) -> None:
    computes, pkgs, params = SPEC8[prefix]
    got = labels(fixture_text(prefix))  # also asserts the fast and naive engines agree
    assert got.computes is computes
    assert set(got.packages) == pkgs
    if params is None:  # grenander: four false captures like ' -2 and -L F1'
        assert got.params and all(" and -L" in p for p in got.params)
    else:
        assert list(got.params) == params


def test_hrouge_counts_as_a_mention_in_the_faithful_prelim() -> None:
    text = fixture_text("acl2019-P19-1330-hardy")
    assert text.lower().count("hrouge") >= 10
    assert labels(text).prelim


def test_precise_file_drops_the_known_false_positives() -> None:
    precise = rules("rouge-precise.toml")
    assert labels(fixture_text("emnlp2019-D19-1620-grenander"), precise).params == ()
    assert "GL/rougescore" not in labels(fixture_text("emnlp2019-D19-1051-kryscinski"), precise).packages
    # "ROUGE 2.0 (Ganesan, 2018)" is cited in related work, outside the bibliography: no option removes it
    assert "KG/rouge2" in labels(fixture_text("acl2020-mao"), precise).packages
    anto = labels(fixture_text("newsum2019-antognini"), precise)
    assert anto.packages == ("ROUGE-1.5.5",) and anto.params == ("-n 2 -m -u -c 95 -x -r 1000 -f A -p 0.5 -t 0",)  # whole, no leading space (params-whole)


def test_check_command_on_a_real_pdf_and_on_a_truncated_one(cli) -> None:  # type: ignore[no-untyped-def]
    import json

    folder = shared_path("pdfs")
    good = next(folder.glob("newsum2019-antognini*.pdf"))
    code, out, err = cli("check", str(good), "--json")
    data = json.loads(out)
    assert code == 0 and data["r1"] and data["computes"], err
    assert data["packages"] == ["ROUGE-1.5.5"]
    truncated = next(folder.glob("truncated-*.pdf"))
    code, out, err = cli("check", str(truncated))
    assert code == 8 and "cannot extract text" in err and "Traceback" not in out + err


def test_check_exits_nonzero_for_a_real_irreproducible_paper(cli) -> None:  # type: ignore[no-untyped-def]
    pdf = next(shared_path("pdfs").glob("acl2020-mao*.pdf"))
    code, out, err = cli("check", str(pdf))
    assert code == 1 and "irreproducible" in err
    assert "missing: parameters" in out and "R1 (package + parameters): no" in out
