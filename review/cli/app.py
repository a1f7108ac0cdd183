"""The typer application object that every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="review",
    help="Systematic reviews of how papers report an evaluation metric (rerunning 'Rogue Scores').",
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # errors are printed once at the edge; tokens never in locals
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=None,
)
