"""`review config`: every setting, its environment variable, default and value now."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json
from review.settings import describe

MAX_WIDTH = 100  # past this, descriptions are harder to read, not easier


def _effective(settings, key: str):  # type: ignore[no-untyped-def]
    value = settings
    for part in key.split("."):
        value = getattr(value, part)
    return value


@app.command()
def config(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """List every setting with its TOML key, environment variable, default and current value.

    The listing is laid out like a review.toml (sections, `key = value`), so a line can
    be copied into one; a value that differs from the default says so.

    Example:

    \b
        review config
        REVIEW_HTTP__TIMEOUT=60 review config --json
    """
    settings = context.get(ctx).settings
    rows = describe()
    for row in rows:
        row["value"] = _effective(settings, row["key"])
    if json_:
        print_json({"config_file": settings.config_path, "database": _safe(settings.database), "settings": rows})
        return
    width = min(shutil.get_terminal_size((80, 24)).columns, MAX_WIDTH)
    typer.echo(f"config file: {settings.config_path or '(none: defaults and environment)'}")
    typer.echo("\n".join(render(rows, width)))


def render(rows: list[dict[str, Any]], width: int) -> list[str]:
    """One block per setting, grouped by TOML section; nothing is cut mid-word.

    A table of five columns cannot fit 80 columns without folding keys and variable
    names ("download.max_" / "bytes"); here a key, a value and a variable name are each
    whole on their line, and only the descriptions are wrapped, between words.
    """
    lines: list[str] = []
    section = None
    wrap = textwrap.TextWrapper(width=max(40, width), initial_indent="    ", subsequent_indent="    ",
                                break_long_words=False, break_on_hyphens=False)
    for row in rows:
        head, _, name = row["key"].rpartition(".")
        if head != section:
            section = head
            lines += ["", f"[{head}]"] if head else [""]
        lines.append(f"{name} = {_toml(row['value'])}")
        if _toml(row["value"]) != _toml(row["default"]):
            lines.append(f"    (default: {_toml(row['default'])})")
        lines += wrap.wrap(row["description"])
        lines.append(f"    env {row['env']}" + (" (set)" if row["env"] in os.environ else ""))
    return lines


def _toml(value: Any) -> str:
    """A value as it is written in review.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. compute.counts_as_package
        return "{" + ", ".join(f"{_toml(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Path):
        value = value.as_posix()
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _safe(url: str) -> str:
    from sqlalchemy import make_url

    return make_url(url).render_as_string(hide_password=True)
