"""What every command gets: settings, the database, and the output flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import typer

from review.db.migrate import ensure_current
from review.db.session import Database
from review.errors import DatabaseError
from review.settings import Settings, load_settings


@dataclass
class AppContext:
    config: Path | None = None
    db_url: str | None = None
    debug: bool = False
    silent: bool = False
    _settings: Settings | None = field(default=None, repr=False)
    _db: Database | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, database_url=self.db_url)
        return self._settings

    def use_metric(self, metric: str | None) -> None:
        """`--metric`: review this metric folder (its rules and catalogs, unless set explicitly)."""
        if metric:
            from review.metric import load_metric

            local = Path(metric).expanduser()
            self.settings.label.metric = str(local.resolve()) if local.exists() else metric  # a path is the cwd's
            load_metric(metric, self.settings.config_dir)  # a wrong name fails here, naming the shipped ones

    def database(self, *, check_schema: bool = True, read_only: bool = False) -> Database:
        """The database, checked against this release's schema (created if brand new).

        `read_only` is for commands that only report (status, export, show): a database
        that does not exist is an error naming the path, never a new empty file, so a
        mistyped `--db` cannot pass for a survey with nothing in it."""
        if read_only:
            from review.db.session import require_existing

            require_existing(self.settings.database)
        if self._db is None:
            self._db = Database(self.settings.database)
        if read_only:
            from review.db.migrate import current_revision, is_empty

            if current_revision(self._db) is None and is_empty(self._db):
                raise DatabaseError("the database is empty (no stage has run on it)", item=_shown(self._db),
                                    hint="run a stage first, e.g. `review survey --sample` or `review import pdfs DIR --create`")
            ensure_current(self._db, auto_create=False)
        elif check_schema:
            ensure_current(self._db)
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.dispose()


def _shown(db: Database) -> str:
    return db.url.render_as_string(hide_password=True)


def get(ctx: typer.Context) -> AppContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, AppContext):
        obj = AppContext()
        ctx.find_root().obj = obj
    return obj
