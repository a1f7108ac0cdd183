"""What every command gets: settings, the database, and the output flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import typer

from review.db.migrate import ensure_current
from review.db.session import Database
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

    def database(self, *, check_schema: bool = True) -> Database:
        """The database, checked against this release's schema (created if brand new)."""
        if self._db is None:
            self._db = Database(self.settings.database)
        if check_schema:
            ensure_current(self._db)
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.dispose()


def get(ctx: typer.Context) -> AppContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, AppContext):
        obj = AppContext()
        ctx.find_root().obj = obj
    return obj
