from pathlib import Path

import pytest

from review.errors import ConfigError
from review.settings import describe, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    import os

    for key in list(os.environ):
        if key.startswith("REVIEW_") and key != "REVIEW_TEST_POSTGRES_URL":
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_defaults_put_sqlite_under_db(tmp_path):
    s = load_settings()
    assert s.database == f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}"
    assert s.http.timeout == 30.0
    assert s.config_path is None


def test_review_toml_in_cwd_is_read_and_paths_are_relative_to_it(tmp_path):
    (tmp_path / "review.toml").write_text('data_dir = "store"\n[http]\ntimeout = 7\n')
    s = load_settings()
    assert s.http.timeout == 7
    assert s.data_dir == tmp_path / "store"
    assert s.database.endswith(str(tmp_path / "store" / "review.sqlite"))


def test_config_elsewhere_anchors_paths_to_its_folder(tmp_path):
    cfg = tmp_path / "conf" / "survey.toml"
    cfg.parent.mkdir()
    cfg.write_text('data_dir = "data"\n')
    assert load_settings(cfg).data_dir == tmp_path / "conf" / "data"


def test_environment_beats_file_and_merges_sections(tmp_path, monkeypatch):
    (tmp_path / "review.toml").write_text('[http]\ntimeout = 7\nretries = 2\n')
    monkeypatch.setenv("REVIEW_HTTP__TIMEOUT", "60")
    monkeypatch.setenv("REVIEW_DATABASE_URL", "postgresql://u@h/db")
    s = load_settings()
    assert s.http.timeout == 60
    assert s.http.retries == 2  # the file's other keys in the same section survive
    assert s.database == "postgresql://u@h/db"


def test_override_wins_over_environment(monkeypatch):
    monkeypatch.setenv("REVIEW_DATABASE_URL", "postgresql://u@h/db")
    assert load_settings(database_url="sqlite:///x.sqlite").database == "sqlite:///x.sqlite"


def test_unknown_key_is_named(tmp_path):
    (tmp_path / "review.toml").write_text('[http]\ntimeot = 7\n')
    with pytest.raises(ConfigError, match=r"unknown key 'http.timeot'"):
        load_settings()


def test_bad_value_and_bad_toml_name_the_file(tmp_path):
    (tmp_path / "review.toml").write_text('[http]\ntimeout = "soon"\n')
    with pytest.raises(ConfigError, match=r"review.toml.*http.timeout"):
        load_settings()
    (tmp_path / "review.toml").write_text('[http\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings()


def test_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml")


def test_describe_lists_every_section_key_with_env_name():
    rows = {r["key"]: r for r in describe()}
    assert rows["http.timeout"]["env"] == "REVIEW_HTTP__TIMEOUT"
    assert rows["database_url"]["env"] == "REVIEW_DATABASE_URL"
    assert all(r["description"] for r in rows.values()), "every setting is documented"
