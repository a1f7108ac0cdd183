"""Logging for people: what happened to which item, on stderr, never secrets.

`SeverityTracker` remembers the worst level logged during a command, so a stage can
finish every item and then choose a nonzero exit code if any item failed.

Secrets: every log record made in this process, by `review` or by a library (urllib3,
PyGithub, the Label Studio SDK), has its message and traceback text passed through
`review.redact` when it is created. The record factory is installed when this module is
imported, so a script using `review` without the CLI is covered as well.
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.logging import RichHandler

from review.redact import redact

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


def _redact_record(record: logging.LogRecord) -> None:
    """Mask secrets in the record's message and exception text, in place."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed call; logging reports it when the record is emitted
        return
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def install_redaction() -> None:
    """Make every log record of the process pass `_redact_record` (idempotent)."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "redacts_secrets", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:  # type: ignore[no-untyped-def]
        record = previous(*args, **kwargs)
        _redact_record(record)
        return record

    factory.redacts_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


install_redaction()


def get_logger(name: str | None = None) -> logging.Logger:
    return logging.getLogger(f"{LOGGER_NAME}.{name}" if name else LOGGER_NAME)


def setup_logging(verbose: bool = False, quiet: bool = False) -> None:
    install_redaction()
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
