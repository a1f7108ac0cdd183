"""Logging for people: what happened to which item, on stderr, never secrets.

`SeverityTracker` remembers the worst level logged during a command, so a stage can
finish every item and then choose a nonzero exit code if any item failed.
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.console import Console
from rich.logging import RichHandler

LOGGER_NAME = "review"


class SeverityTracker(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.worst = logging.NOTSET
        self.errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.worst = max(self.worst, record.levelno)
        if record.levelno >= logging.ERROR:
            self.errors += 1


tracker = SeverityTracker()


def get_logger(name: str | None = None) -> logging.Logger:
    return logging.getLogger(f"{LOGGER_NAME}.{name}" if name else LOGGER_NAME)


def setup_logging(verbose: bool = False, quiet: bool = False) -> None:
    root = logging.getLogger(LOGGER_NAME)
    root.handlers.clear()
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    handler = RichHandler(console=Console(stderr=True), show_time=False, show_path=False, markup=False,
                          rich_tracebacks=False)
    handler.setLevel(level)
    root.addHandler(handler)
    root.addHandler(tracker)
    root.setLevel(logging.DEBUG)
    root.propagate = False
    for noisy in ("alembic", "pdfminer", "urllib3", "github"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
