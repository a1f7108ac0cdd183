"""Command-line entry point: a thin layer over the library.

Every command module registers itself on `review.cli.app.app`; `main()` runs the app and
turns `ReviewError`s into one line plus a hint and a per-class exit code.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Optional

import typer

from review import __version__
from review.cli import context
from review.cli.app import app
from review.cli.output import err_console
from review.errors import ReviewError
from review.log import setup_logging
from review.progress import set_silent
from review.redact import redact



def _register_commands() -> None:
    """Import every `review/cli/*_cmd.py`; importing a module registers its commands."""
    import importlib
    import pkgutil

    import review.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.endswith("_cmd"):
            importlib.import_module(f"review.cli.{info.name}")


_register_commands()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"review {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(None, "--config", envvar="REVIEW_CONFIG", help="Settings file (default: ./review.toml if present)."),
    db: Optional[str] = typer.Option(None, "--db", help="Database URL; overrides settings and REVIEW_DATABASE_URL."),
    silent: bool = typer.Option(False, "--silent", help="No progress bars."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every item."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    ctx.obj = context.AppContext(config=config, db_url=db, debug=debug, silent=silent)
    ctx.call_on_close(ctx.obj.close)
    set_silent(silent)
    setup_logging(verbose=verbose or debug)


INTERRUPTED_EXIT = 130


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; exit 0 on success, the error's own code otherwise.

    Usage errors and --help are handled by typer itself (exit 2 and 0); Ctrl-C exits 130
    with how far the stage got and that a rerun resumes.
    """
    debug = "--debug" in (argv if argv is not None else sys.argv)
    from review.progress import forget_interrupt

    forget_interrupt()  # a test or script may call main() many times in one process
    try:
        app(args=argv, prog_name="review")
    except SystemExit as exc:
        if exc.code == INTERRUPTED_EXIT:  # typer turns Ctrl-C into exit 130, silently
            from review.progress import interrupted_line

            args = argv if argv is not None else sys.argv[1:]
            err_console().print(redact(interrupted_line(" ".join(["review", *args]))), markup=False)
        raise
    except ReviewError as exc:
        if debug:
            print_traceback(exc)
        err_console().print(redact(f"error: {exc}"), markup=False)
        if exc.hint:
            err_console().print(redact(f"hint: {exc.hint}"), markup=False)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug or an unforeseen answer: the traceback, but never a secret in it
        print_traceback(exc)
        if not debug:
            err_console().print(redact(f"error: unexpected {type(exc).__name__}: {exc}"), markup=False)
        sys.exit(1)


def print_traceback(exc: BaseException) -> None:
    """The traceback of `exc` on stderr, through the one redactor.

    Why not a bare `raise`: Python would print the exception's text as it is, and a
    service that echoes the request (an Authorization header in a 400 body) puts the key
    right there. Chained exceptions are printed too, each line redacted.
    """
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(redact(text))
    sys.stderr.flush()
