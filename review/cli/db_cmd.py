"""`review db ...`: schema management."""

from __future__ import annotations

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, summary
from review.db import migrate
from review.runs import record_run

db_app = typer.Typer(help="Create or upgrade the survey database schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade(ctx: typer.Context, revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Bring a new or older database to the current schema, keeping all data.

    Example:

    \b
        review db upgrade
    """
    db = context.get(ctx).database(check_schema=False)
    before, after = migrate.upgrade(db, revision)
    with record_run(db, "db upgrade", {"revision": revision}) as run:
        run.summary = f"{before or 'empty'} -> {after}"
        run.signature.update({"schema": after})
    where = db.url.render_as_string(hide_password=True)
    if before == after:
        summary(f"database already at {after} ({where})")
    else:
        summary(f"database upgraded {before or 'empty'} -> {after} ({where})")


@db_app.command("current")
def current(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Show the database's schema revision and this release's.

    Example:

    \b
        review db current --json
    """
    db = context.get(ctx).database(check_schema=False)
    info = {"database": db.url.render_as_string(hide_password=True), "current": migrate.current_revision(db),
            "head": migrate.head_revision()}
    info["up_to_date"] = info["current"] == info["head"]
    if json_:
        print_json(info)
    else:
        typer.echo(f"database  {info['database']}\ncurrent   {info['current']}\nhead      {info['head']}")
