"""One settings object for the whole tool.

Sources, later ones winning: built-in defaults, the TOML config file (`review.toml` in the
working directory, or `--config PATH`, or `REVIEW_CONFIG`), then environment variables
(`REVIEW_DATABASE_URL`, `REVIEW_DATA_DIR`, and `REVIEW_<SECTION>__<KEY>` for keys inside a
section, e.g. `REVIEW_HTTP__TIMEOUT=60`). Relative paths in a config file are relative to
that file's folder; relative paths from the environment or defaults to the working
directory. Secrets (tokens, API keys) are never settings: only the *name* of the
environment variable that holds them is.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from review.errors import ConfigError
from review.log import get_logger
from review.redact import watch_env

log = get_logger("settings")

CONFIG_ENV = "REVIEW_CONFIG"
DEFAULT_CONFIG_NAME = "review.toml"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        """Keys renamed when metrics became data keep working, with a warning naming the new key.

        A key is read as the current key that has `metric` where it has another word
        (`automated_code_<word>` is `automated_code_metric`), so the rule names no metric.
        """
        if not isinstance(data, dict):
            return data
        fields = set(cls.model_fields)
        out = dict(data)
        for key in [k for k in data if isinstance(k, str) and k not in fields]:
            parts = key.split("_")
            for i in range(len(parts)):
                new = "_".join(parts[:i] + ["metric"] + parts[i + 1:])
                if new in fields and new not in data:
                    out[new] = out.pop(key)
                    _deprecated(cls, key, f"{new} = {_toml(out[new])}")
                    break
        return out


class HttpSettings(Section):
    """The one HTTP layer: every harvester and downloader goes through these limits."""

    timeout: float = Field(30.0, description="seconds to wait for a connection or a read")
    retries: int = Field(5, description="attempts after the first, for 429/5xx/timeouts")
    backoff: float = Field(1.0, description="first backoff in seconds, doubled per retry, with jitter")
    max_backoff: float = Field(300.0, description="longest single wait, Retry-After included")
    per_host_concurrency: int = Field(2, description="requests in flight per host")
    per_host_rate: float = Field(1.0, description="requests per second per host (0 = no limit)")
    host_rates: dict[str, float] = Field(default_factory=dict, description="per_host_rate for named hosts ('host' or 'host:port'), e.g. a local mirror at 0 (no limit)")
    user_agent: str = Field("", description="extra contact text appended to the User-Agent")
    allow_internal_redirects: bool = Field(False, description="follow a redirect from a public address to a loopback, private or link-local one (for a local mirror)")
    max_response_bytes: int = Field(200_000_000, description="largest API answer read (DBLP, GitHub, Label Studio; inflated bytes); a longer body fails with an error naming its URL (0 = no cap)")
    max_json_depth: int = Field(100, description="deepest nesting of lists and objects accepted in a JSON answer or file; deeper ones are refused as malformed (0 = no limit beyond the parser's own)")


class HarvestSettings(Section):
    acl_data_dir: str = Field("", description="local checkout of the ACL Anthology data repository")
    acl_repo_url: str = Field("https://github.com/acl-org/acl-anthology.git", description="what --update clones")
    acl_as_of: str = Field("", description="harvest the data repository as it was at its last commit before this "
                                           "date, YYYY-MM-DD ('' = the files on disk); e.g. 2022-12-29 for the paper's corpus")
    from_year: int = Field(2002, description="first publication year kept")
    cutoff: str = Field("2023-01-01", description="records newer than this date are left out")
    venues_include: list[str] = Field(default_factory=list, description="venue ids to keep (empty = all)")
    venues_exclude: list[str] = Field(default_factory=list, description="venue ids to drop")
    dblp_api_url: str = Field("https://dblp.org", description="DBLP base URL (search API)")
    dblp_dump: str = Field("", description="path of dblp.xml.gz for dump mode")
    dblp_venues: str = Field("", description="venue table TOML (empty = the bundled one)")
    dblp_mode: str = Field("api", description="where DBLP records come from: api (search API) or dump (dblp.xml.gz)")
    dblp_dtd: str = Field("", description="dblp.dtd for dump mode (empty = dblp.dtd next to the dump)")
    dblp_page_size: int = Field(1000, description="hits per DBLP search API page (the API allows at most 1000)")
    dblp_delay: float = Field(1.0, description="extra seconds between DBLP API pages, on top of the http rate limit")


class DownloadSettings(Section):
    max_bytes: int = Field(50_000_000, description="larger PDFs are refused")
    workers: int = Field(8, description="download threads in total (per-host limits still apply)")
    max_seconds: float = Field(600.0, description="longest time one PDF may take to arrive (slow trickles fail as timeout)")
    anthology_pdf_base: str = Field("", description="fetch ACL Anthology PDFs from here instead: replaces the https://aclanthology.org/ prefix of PDF URLs at download time (a mirror; empty = the Anthology)")


class ExtractSettings(Section):
    backend: str = Field("pypdfium2", description="pypdfium2 (fast) or pdfplumber")
    workers: int = Field(0, description="worker processes (0 = one per core)")
    timeout: float = Field(120.0, description="seconds one PDF may take")
    memory_mb: int = Field(2048, description="memory one worker process may add to its start size (address-space cap)")


class LabelSettings(Section):
    metric: str = Field("rouge", description="the metric reviewed: the name of a metric folder under patterns/ or the "
                                             "path of one; the rule file and both package catalogs default to its files")
    rules: str = Field("", description="rule file used by `review label` and `review check`: a path or a rule file's name (empty = the metric's: `rules` for label, `check_rules` for check)")
    options: list[str] = Field(default_factory=list, description="named options of the rule file to switch on")
    batch: int = Field(200, ge=1, description="texts labeled per database transaction")
    max_findings_per_rule: int = Field(20, ge=1, description="findings stored per rule and paper (labels use all matches)")
    regex_timeout: float = Field(1.0, gt=0, description="CPU seconds one rule's patterns may take on one paper; past it the rule is recorded as timed out for that paper")
    text_source: str = Field("prefer-pdf", description="which text labels use when a paper has several: 'prefer-pdf' (the PDF's, else an imported one), a source such as 'pdf' or 'acl-ocl-grobid' (only that), 'prefer-<source>', or a comma list in order of preference ('*' = any other)")


class ImportSettings(Section):
    """`review import pdfs|texts`: PDFs and full texts the user already has."""

    workers: int = Field(0, description="processes normalizing imported texts (0 = one per core)")
    text_batch: int = Field(500, ge=1, description="imported texts written per database transaction")
    pdf_batch: int = Field(50, ge=1, description="imported PDFs recorded per database transaction")
    meta_timeout: float = Field(30.0, description="seconds reading one PDF's metadata and first page may take (--create)")


class CodeSettings(Section):
    pwc_links: str = Field("", description="Papers With Code links dump (json, json.gz or parquet)")
    github_api_url: str = Field("https://api.github.com", description="GitHub REST base URL")
    github_token_env: str = Field("GITHUB_TOKEN", description="environment variable holding the token")
    max_repo_mb: int = Field(500, description="repositories larger than this are not scanned")
    max_files: int = Field(20_000, description="files scanned per repository at most")
    clone_timeout: float = Field(300.0, description="seconds a clone may take")
    max_file_kb: int = Field(2048, description="files larger than this are skipped when scanning")
    catalog: str = Field("", description="code package catalog TOML (empty = the metric's code_packages file)")
    git_base_url: str = Field("https://github.com", description="where repositories are cloned from: GitHub itself (other hosts then from themselves) or a mirror serving every host, GitHub at BASE/owner/name.git and others at BASE/host/owner/name.git")
    search_query: str = Field("", description="term searched in each repository for the code prelim label (empty = the code catalog's `prelim` term)")
    cache_days: int = Field(30, description="GitHub look-ups younger than this are reused, not repeated")
    max_wait: float = Field(3900.0, description="longest single rate-limit sleep in seconds; longer waits stop the run (resumable)")


class LabelStudioSettings(Section):
    url: str = Field("http://127.0.0.1:8080", description="Label Studio base URL (LABEL_STUDIO_URL wins)")
    api_key_env: str = Field("LABEL_STUDIO_API_KEY", description="environment variable holding the API key")
    overlap: int = Field(1, description="how many reviewers see each task")
    timeout: float = Field(120.0, description="seconds to wait for one Label Studio request (imports and exports are large)")
    page_size: int = Field(100, description="tasks read per request by `review pull` (each page is committed)")


class ComputeSettings(Section):
    """Choices the Rogue Scores paper leaves open, made explicit for `review compute`."""

    counts_as_package: dict[str, bool] = Field(default_factory=dict, description="per package label: whether citing it counts as citing a package (R1, Figure 1); labels not listed count")
    packages: str = Field("", description="package catalog: aliases and software errors (empty = the metric's packages file)")
    rule_set: str = Field("", description="rule set whose automated labels are used: name or sha256 prefix (empty = newest)")
    automated_code_metric: bool = Field(True, description="without a human C2, the code scan's verdict (eval_reproducible) is the C2 answer; off: C2 stays unknown")

    @model_validator(mode="before")
    @classmethod
    def _counts_keys(cls, data: Any) -> Any:
        """`<label>_counts = false` (one key per unidentified package, before metrics were data)
        is `counts_as_package = {"<label>" = false}`, the label's spaces written as `_`."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in [k for k in data if isinstance(k, str) and k.endswith("_counts") and k not in cls.model_fields]:
            label = key[: -len("_counts")].replace("_", " ")
            merged = dict(out.get("counts_as_package") or {})
            merged.setdefault(label, out.pop(key))
            out["counts_as_package"] = merged
            _deprecated(cls, key, f"counts_as_package = {{{_toml(label)} = {_toml(merged[label])}}}")
        return out


class ExportSettings(Section):
    """What `review export` writes and how its confidence intervals are drawn."""

    format: str = Field("csv", description="dataset format: csv, jsonl or parquet")
    bootstrap_samples: int = Field(1000, description="bootstrap resamples per statistic")
    seed: int = Field(2023, description="bootstrap seed (same data and seed = same intervals)")
    confidence: float = Field(0.95, description="confidence level of the bootstrap intervals")
    time: str = Field("", description="time written in the manifest (empty = end of the newest data-changing run)")


class PackagesSettings(Section):
    """`review packages`: where the reference's and the candidates' venvs are kept."""

    venv_dir: str = Field("", description="cached venvs of the metric reference and candidate packages (empty = ~/.cache/review-ci/packages, where .ci/run builds them)")
    text_source: str = Field("pdf", description="which text of each paper the default specimen reads (abstract vs Lead-3 of the body)")


class Settings(BaseSettings):
    """Everything configurable. `describe()` lists every key with its default."""

    model_config = SettingsConfigDict(
        env_prefix="REVIEW_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    database_url: str = Field("", description="SQLAlchemy URL (empty = SQLite file <data_dir>/review.sqlite)")
    data_dir: Path = Field(Path("db"), description="PDF store, clone cache and the default SQLite file")
    exports_dir: Path = Field(Path("exports"), description="where `review export` writes")
    http: HttpSettings = Field(default_factory=HttpSettings)
    harvest: HarvestSettings = Field(default_factory=HarvestSettings)
    download: DownloadSettings = Field(default_factory=DownloadSettings)
    imports: ImportSettings = Field(default_factory=ImportSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    label: LabelSettings = Field(default_factory=LabelSettings)
    code: CodeSettings = Field(default_factory=CodeSettings)
    label_studio: LabelStudioSettings = Field(default_factory=LabelStudioSettings)
    compute: ComputeSettings = Field(default_factory=ComputeSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)
    packages: PackagesSettings = Field(default_factory=PackagesSettings)

    config_path: Path | None = Field(None, exclude=True, description="the config file read, if any")

    @property
    def config_dir(self) -> Path | None:
        """The folder relative paths of the config file are read against (None: the working directory)."""
        return self.config_path.parent if self.config_path else None

    def model_post_init(self, _context: Any) -> None:
        # The variables named as secret holders are masked wherever text is stored or logged.
        watch_env(*self.secret_envs())

    def secret_envs(self) -> list[str]:
        """Names of the environment variables holding secrets: every `*_env` key's value."""
        names = []
        for section in self.__dict__.values():
            if isinstance(section, Section):
                names += [v for k, v in section.__dict__.items() if k.endswith("_env") and isinstance(v, str) and v]
        return names

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment beats the file (passed in as init values); no .env, no secrets dir.
        return (env_settings, init_settings)

    @property
    def database(self) -> str:
        """The effective SQLAlchemy URL."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'review.sqlite').resolve()}"

    def resolve(self, path: str | Path) -> Path:
        """A path setting made absolute against the config file's folder (or cwd)."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        base = self.config_path.parent if self.config_path else Path.cwd()
        return (base / p).resolve()


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


_SECTION_NAMES: dict[type, str] = {}


def _deprecated(section: type, old: str, new: str) -> None:
    name = _SECTION_NAMES.get(section, section.__name__)
    log.warning("setting %s.%s is deprecated: write %s.%s", name, old, name, new)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError("config file not found", item=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", item=str(path)) from None


def _anchor_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Make the file's own relative paths relative to the file, not to cwd."""
    for key in ("data_dir", "exports_dir"):
        if key in data and not Path(str(data[key])).expanduser().is_absolute():
            data[key] = str((base / str(data[key])).resolve())
    return data


def _explain(exc: ValidationError, source: str) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key '{where}'")
        else:
            parts.append(f"'{where}': {err['msg']}")
    return f"{source}: " + "; ".join(parts)


def load_settings(config: Path | str | None = None, **overrides: Any) -> Settings:
    """Build the settings from defaults, the config file, the environment and overrides.

    `overrides` (from command-line flags such as `--db`) win over everything else.
    """
    path: Path | None = None
    if config is not None:
        path = Path(config).expanduser().resolve()
    elif os.environ.get(CONFIG_ENV):
        path = Path(os.environ[CONFIG_ENV]).expanduser().resolve()
    elif Path(DEFAULT_CONFIG_NAME).is_file():
        path = Path(DEFAULT_CONFIG_NAME).resolve()
    data = _anchor_paths(_read_toml(path), path.parent) if path else {}
    source = str(path) if path else "settings"
    try:
        settings = Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source), hint="see `review config` for every key") from None
    settings.config_path = path
    for key, value in overrides.items():
        if value is not None:
            setattr(settings, key, value)
    return settings


_SECTION_NAMES.update({f.annotation: name for name, f in Settings.model_fields.items()
                       if isinstance(f.annotation, type) and issubclass(f.annotation, Section)})


def describe() -> list[dict[str, Any]]:
    """Every setting with its TOML key, environment variable, default and meaning."""
    rows: list[dict[str, Any]] = []
    for name, field in Settings.model_fields.items():
        if name == "config_path":
            continue
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, Section):
            for sub, sfield in annotation.model_fields.items():
                default = sfield.default_factory() if sfield.default_factory else sfield.default
                rows.append({"key": f"{name}.{sub}", "env": f"REVIEW_{name.upper()}__{sub.upper()}",
                             "default": default, "description": sfield.description or ""})
        else:
            rows.append({"key": name, "env": f"REVIEW_{name.upper()}",
                         "default": str(field.default), "description": field.description or ""})
    return rows
