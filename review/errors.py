"""Typed errors, caught once at the CLI edge.

Each class carries the item it is about and maps to its own exit code, so scripts can
tell a bad config from a bad rule file from a network failure without parsing text.
Exit code 2 stays reserved for command-line usage errors (click's convention).
"""

from __future__ import annotations


class ReviewError(Exception):
    """Base of every error the tool reports to a person."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, item: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.item = item

    def __str__(self) -> str:
        prefix = f"{self.item}: " if self.item else ""
        return f"{prefix}{self.message}"


class ConfigError(ReviewError, ValueError):
    """The settings file or an environment variable holds something unusable."""

    exit_code = 3


class DatabaseError(ReviewError):
    """The database cannot be reached or used."""

    exit_code = 4


class SchemaMismatchError(DatabaseError):
    """The database schema revision differs from what this release expects."""

    exit_code = 4


class RuleFileError(ReviewError, ValueError):
    """A rule file is malformed: bad TOML, unknown key or an invalid pattern."""

    exit_code = 5


class FetchError(ReviewError):
    """A network fetch failed for good (after retries).

    `reason` is a short machine word stored per item (timeout, gave_up_after_retries,
    connection_error, too_many_redirects, ...), so callers record it without parsing text.
    """

    exit_code = 6

    def __init__(self, message: str, *, hint: str | None = None, item: str | None = None,
                 reason: str | None = None):
        super().__init__(message, hint=hint, item=item)
        self.reason = reason


class ServiceError(ReviewError):
    """An outside service (Label Studio, GitHub) refused or could not be reached."""

    exit_code = 7


class InputFileError(ReviewError, ValueError):
    """A file given by the user cannot be read (missing, corrupt, wrong type)."""

    exit_code = 8


class ItemsFailed(ReviewError):
    """The run finished but some items failed; their reasons are recorded per item."""

    exit_code = 1
