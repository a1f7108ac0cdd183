"""Rule files: errors name the file, the rule and the reason before any text is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from review.errors import RuleFileError
from review.rules import load_ruleset
from review.rules.expr import parse_expression
from tests.rules_support import labels, pattern, rules

MINIMAL = """
schema = 1
name = "toy"
[prelim]
pattern = 'toy'
[flag]
expression = "word"
[[rules]]
id = "flag.word"
kind = "flag"
label = "word"
pattern = '\\btoy\\b'
"""


def write(tmp_path: Path, text: str, name: str = "toy.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(RuleFileError) as info:
        load_ruleset(path)
    message = str(info.value)
    assert str(path) in message, message  # every error names the file
    return message


def test_minimal_file_loads_and_hashes_its_bytes(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, MINIMAL)
    rs = load_ruleset(path)
    assert rs.name == "toy" and rs.metric == "toy" and rs.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert labels("a toy here", rs).computes


def test_shipped_files_load() -> None:
    for name in ("rouge.toml", "rouge-precise.toml", "bleu.toml"):
        assert rules(name).rules


def test_unknown_key_names_key_and_place(tmp_path: Path) -> None:
    msg = error(tmp_path, "colour = 'red'\n" + MINIMAL)
    assert "unknown key 'colour'" in msg and "top level" in msg
    msg = error(tmp_path, MINIMAL + "paterns = ['x']\n")  # inside the last [[rules]] table
    assert "unknown key 'paterns'" in msg and "rule 'flag.word'" in msg


def test_invalid_regex_names_the_rule(tmp_path: Path) -> None:
    bad = MINIMAL + "[[rules]]\nid = \"pkg.broken\"\nkind = \"package\"\nlabel = \"X\"\npatterns = ['ok', 'a(b']\n"
    msg = error(tmp_path, bad)
    assert "rule 'pkg.broken'" in msg and "invalid regex 'a(b'" in msg


def test_pattern_matching_the_empty_string_is_rejected(tmp_path: Path) -> None:
    bad = MINIMAL + "[[rules]]\nid = \"p\"\nkind = \"package\"\nlabel = \"X\"\npatterns = ['x?']\n"
    assert "matches the empty string" in error(tmp_path, bad)


def test_toml_syntax_error(tmp_path: Path) -> None:
    assert "not valid TOML" in error(tmp_path, MINIMAL + "[[rules]\n")


@pytest.mark.parametrize("schema,needle", [("", "missing `schema"), ("schema = 2\n", "schema 2 is not readable"),
                                           ("schema = 'one'\n", "not readable")])
def test_schema_version_is_checked(tmp_path: Path, schema: str, needle: str) -> None:
    text = schema + MINIMAL.replace("schema = 1\n", "")
    assert needle in error(tmp_path, text)


def test_unknown_kind_anchor_region_and_flag_name(tmp_path: Path) -> None:
    assert "kind 'pkg'" in error(tmp_path, MINIMAL.replace('kind = "flag"', 'kind = "pkg"'))
    near = MINIMAL + "near = 'nowhere'\nwindow = 5\n"
    assert "anchor 'nowhere'" in error(tmp_path, near)
    assert "region 'refs'" in error(tmp_path, MINIMAL + "exclude_regions = ['refs']\n")
    assert "names nothing_here" in error(tmp_path, MINIMAL.replace('expression = "word"', 'expression = "word || nothing_here"'))
    assert "[flag] expression" in error(tmp_path, MINIMAL.replace('expression = "word"', 'expression = "word ||"'))
    assert "`window` needs `near`" in error(tmp_path, MINIMAL + "window = 5\n")


def test_duplicate_rule_ids_and_missing_capture_group(tmp_path: Path) -> None:
    dup = MINIMAL + "[[rules]]\nid = \"flag.word\"\nkind = \"flag\"\nlabel = \"word\"\npattern = 'x'\n"
    assert "defined twice" in error(tmp_path, dup)
    grp = MINIMAL + "[[rules]]\nid = \"params\"\nkind = \"params\"\ngroup = 1\npattern = ' -[a-z] -[a-z]'\n"
    assert "no capture group 1" in error(tmp_path, grp)


def test_overlaps_and_reproducibility_must_name_package_labels(tmp_path: Path) -> None:
    pkg = MINIMAL + "[[rules]]\nid = \"pkg.a\"\nkind = \"package\"\nlabel = \"A\"\npattern = 'aaa'\n"
    bad = pkg + "[[overlaps]]\ngeneric = 'A'\nspecific = ['B']\nresolve = 'specific_wins'\n"
    assert "'B' is not the label of any package rule" in error(tmp_path, bad)
    bad = pkg + "[[overlaps]]\ngeneric = 'A'\nspecific = ['A']\nresolve = 'whatever'\n"
    assert "`resolve` must be" in error(tmp_path, bad)
    bad = pkg + "[reproducibility]\nr2_packages = ['Z']\n"
    assert "names 'Z'" in error(tmp_path, bad)


def test_unknown_option_is_rejected_listing_the_declared_ones() -> None:
    with pytest.raises(RuleFileError) as info:
        load_ruleset(pattern("rouge.toml"), ["ignore-everything"])
    assert "unknown option 'ignore-everything'" in str(info.value) and "no-hrouge" in str(info.value)


def test_options_change_the_content_hash_and_the_signature() -> None:
    plain, opt = rules(), rules("rouge.toml", "no-hrouge")
    assert plain.sha256 != opt.sha256 and opt.options == ("no-hrouge",)
    assert opt.signature()["rules_options"] == "no-hrouge" and plain.signature()["rules_options"] is None


def test_extends_keeps_base_rules_and_records_both_files_in_the_content() -> None:
    precise, base = rules("rouge-precise.toml"), rules()
    assert precise.name == "rouge-precise" and set(base.available_options) <= set(precise.options)
    assert set(precise.options) == set(precise.available_options)  # every option on, the base's and its own
    assert "extends rouge.toml" in precise.content and base.content in precise.content


def test_expression_parser() -> None:
    e = parse_expression("a or not b and (c || !d)")
    assert e.names() == {"a", "b", "c", "d"}
    assert e.evaluate({"a"}) and e.evaluate({"c"}) and not e.evaluate({"b", "c"}) and e.evaluate(set())  # not b and !d
    for bad in ("", "a ||", "(a", "a b", "a + b"):
        with pytest.raises(ValueError):
            parse_expression(bad)


def test_a_rule_file_for_another_metric_needs_no_code(tmp_path: Path) -> None:
    """The README's example format: a tiny METEOR file works through the same engine."""
    text = """
schema = 1
name = "meteor"
metric = "METEOR"
[prelim]
pattern = 'meteor'
[anchors.meteor]
pattern = 'meteor'
[flag]
expression = "named"
[[rules]]
id = "flag.named"
kind = "flag"
label = "named"
pattern = '\\bmeteor\\b'
[[rules]]
id = "pkg.coco"
kind = "package"
label = "coco-caption"
patterns = ['pycocoevalcap', 'coco-caption']
[[rules]]
id = "protocol.paraphrase"
kind = "protocol"
label = "paraphrase"
pattern = '\\bparaphrase\\b'
near = "meteor"
window = 100
[[rules]]
id = "params"
kind = "params"
group = 1
pattern = '(-l \\w+ -norm)'
[reproducibility]
r1_packages = ["coco-caption"]
"""
    rs = load_ruleset(write(tmp_path, text, "meteor.toml"))
    got = labels("METEOR 1.5 with paraphrase tables via pycocoevalcap, run as -l en -norm", rs)
    assert got.computes and got.packages == ("coco-caption",) and got.protocol == ("paraphrase",)
    assert got.params == ("-l en -norm",)


def test_names_that_would_not_fit_the_database_are_rejected(tmp_path: Path) -> None:
    assert "at most 128 characters" in error(tmp_path, MINIMAL.replace('id = "flag.word"', f'id = "{"x" * 129}"'))
    assert "`version` has at most 64" in error(tmp_path, f'version = "{"v" * 65}"\n' + MINIMAL)
