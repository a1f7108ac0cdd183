"""Write the reference parts of docs/ that come from the code, so they never drift.

    python -m review.docgen          # rewrite docs/cli.md and the settings table
    python -m review.docgen --check  # exit 1 (naming the files) when they are stale

Two pieces: docs/cli.md, every command's `--help` exactly as the typer application
prints it at 80 columns, and the settings table in docs/configuration.md, between two
marker comments, from the settings object. tests/test_docs.py runs the check, the way
sqlite-utils keeps its CLI reference (cog over `--help`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"
CONFIG_MD = ROOT / "docs" / "configuration.md"
TABLE_BEGIN = "<!-- settings table: written by `python -m review.docgen`, do not edit by hand -->"
TABLE_END = "<!-- end of settings table -->"
WIDTH = 80


def commands() -> Iterator[tuple[list[str], Any]]:
    """Every visible command as (path, command), the root first, in the order --help lists them."""
    import typer.main

    from review.cli import app

    def walk(path: list[str], cmd: Any) -> Iterator[tuple[list[str], Any]]:
        yield path, cmd
        if hasattr(cmd, "list_commands"):  # a group (typer ships its own copy of click's classes)
            ctx = cmd.context_class(cmd, info_name=path[-1])
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield from walk([*path, name], sub)

    yield from walk(["review"], typer.main.get_command(app))


def help_text(path: list[str]) -> str:
    """What `review ... --help` prints at 80 columns, without colour."""
    from typer.testing import CliRunner

    from review.cli import app

    result = CliRunner().invoke(app, [*path[1:], "--help"], prog_name="review", terminal_width=WIDTH,
                                env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"})
    if result.exit_code != 0:
        raise RuntimeError(f"`{' '.join(path)} --help` failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def _anchor(path: list[str]) -> str:
    return "-".join(path)


def cli_reference() -> str:
    """The whole of docs/cli.md."""
    found = list(commands())
    out = ["# CLI reference", "",
           "Every command's `--help`, as the program prints it. Written by `python -m review.docgen`",
           "from the application itself (do not edit by hand: `tests/test_docs.py` fails when this",
           "page and the program disagree). What each stage does, with examples and output, is on",
           "its own page: see the [documentation index](README.md).", ""]
    out += [f"- [`{' '.join(path)}`](#{_anchor(path)})" for path, _ in found]
    for path, _ in found:
        out += ["", f"## {' '.join(path)}", "", "```text", help_text(path), "```"]
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    text = str(value).replace("|", "\\|")
    return text


def _default(value: Any) -> str:
    if value in ("", [], None):
        return "(empty)"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, list):
        return "`[" + ", ".join(map(str, value)) + "]`"
    return f"`{_cell(value)}`"


def settings_table() -> str:
    """The markdown table of every setting, between its markers."""
    from review.settings import describe

    rows = ["| key | environment variable | default | meaning |", "| --- | --- | --- | --- |"]
    rows += [f"| `{r['key']}` | `{r['env']}` | {_default(r['default'])} | {_cell(r['description'])} |"
             for r in describe()]
    return "\n".join([TABLE_BEGIN, *rows, TABLE_END])


def configuration_page(current: str) -> str:
    """docs/configuration.md with its settings table replaced by the generated one."""
    start, end = current.find(TABLE_BEGIN), current.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"{CONFIG_MD} has no settings table markers ({TABLE_BEGIN!r} ... {TABLE_END!r})")
    return current[:start] + settings_table() + current[end + len(TABLE_END):]


def expected() -> dict[Path, str]:
    """Each generated file and the text it should have."""
    return {CLI_MD: cli_reference(), CONFIG_MD: configuration_page(CONFIG_MD.read_text(encoding="utf-8"))}


def stale() -> list[Path]:
    return [path for path, text in expected().items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m review.docgen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which files are stale (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for path in old:
            print(f"stale: {_shown(path)} (run `python -m review.docgen`)")
        return 1 if old else 0
    for path, text in expected().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {_shown(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
