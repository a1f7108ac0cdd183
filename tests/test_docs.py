"""The documentation agrees with the program: generated reference, index, links, help texts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from review import docgen

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_MAX_BYTES = 8000  # the newcomer's page; the reference lives in docs/


def test_generated_reference_is_up_to_date():
    """docs/cli.md (every --help) and the settings table in docs/configuration.md."""
    stale = [str(p) for p in docgen.stale()]
    assert stale == [], f"{stale} disagree with the program: run `python -m review.docgen` and commit the result"


def test_the_check_notices_drift(tmp_path, monkeypatch):
    cli_md = tmp_path / "cli.md"
    cli_md.write_text(docgen.cli_reference().replace("Show this message and exit.", "Show help.", 1))
    config_md = tmp_path / "configuration.md"
    config_md.write_text(docgen.configuration_page(docgen.CONFIG_MD.read_text()).replace("`30.0`", "`31.0`", 1))
    monkeypatch.setattr(docgen, "CLI_MD", cli_md)
    monkeypatch.setattr(docgen, "CONFIG_MD", config_md)
    assert set(docgen.stale()) == {cli_md, config_md}
    assert docgen.main([]) == 0 and docgen.stale() == []


def test_every_command_is_in_the_reference_with_its_help():
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    found = list(docgen.commands())
    assert len(found) > 20
    for path, cmd in found:
        name = " ".join(path)
        assert f"\n## {name}\n" in text, f"{name} missing from docs/cli.md"
        assert (cmd.help or "").strip(), f"`{name}` has no help text"
        if not hasattr(cmd, "list_commands"):
            assert "Example:" in cmd.help, f"`{name}` --help has no Example block"


def _links(markdown: str) -> list[str]:
    """Link targets outside code blocks and code spans."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return re.findall(r"\]\(([^)\s]+)\)", prose)


def _anchors(markdown: str) -> set[str]:
    heads = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", markdown, flags=re.S), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in _links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), f"{page.name}: link to missing {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest.read_text(encoding="utf-8")), f"{page.name}: no #{anchor} in {file}"


def test_the_index_lists_every_page_and_the_readme_links_the_index():
    index = set(_links((DOCS / "README.md").read_text(encoding="utf-8")))
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert pages <= index, f"docs/README.md does not list {sorted(pages - index)}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/README.md" in _links(readme) and "docs/cli.md" in _links(readme)


def test_readme_stays_the_newcomers_page():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move reference material into docs/"
