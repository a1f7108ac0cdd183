"""`review config`: every setting, its environment variable, default and value now."""

from __future__ import annotations

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, print_table
from review.settings import describe


def _effective(settings, key: str):  # type: ignore[no-untyped-def]
    value = settings
    for part in key.split("."):
        value = getattr(value, part)
    return value


@app.command()
def config(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """List every setting with its TOML key, environment variable, default and current value.

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
    typer.echo(f"config file: {settings.config_path or '(none: defaults and environment)'}")
    print_table(None, ["key", "environment variable", "default", "value", "meaning"],
                [(r["key"], r["env"], r["default"], r["value"], r["description"]) for r in rows])


def _safe(url: str) -> str:
    from sqlalchemy import make_url

    return make_url(url).render_as_string(hide_password=True)
