"""`review config` reads well in an 80-column terminal and can be pasted into a review.toml."""

from __future__ import annotations

import json
import tomllib

from review.settings import describe


def test_config_at_80_columns_keeps_every_key_and_variable_whole(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("config")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    words = {w for line in lines for w in line.replace("=", " ").split()}
    section = ""
    seen_keys = set()
    for line in lines:
        if line.startswith("["):
            section = line.strip("[]")
        elif line and not line.startswith(" "):
            seen_keys.add(f"{section}.{line.split(' = ')[0]}" if section else line.split(" = ")[0])
    for row in describe():
        assert row["env"] in words, f"{row['env']} is not whole on a line"
        assert row["key"] in seen_keys, f"{row['key']} is missing or cut"
    for row in describe():  # descriptions are wrapped between words only
        assert " ".join(row["description"].split()) in " ".join(out.split())


def test_config_listing_is_toml_and_says_what_differs(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("REVIEW_HTTP__TIMEOUT", "61")
    code, out, err = cli("config")
    assert code == 0, err
    body = "\n".join(line for line in out.splitlines()[1:] if not line.startswith("    "))
    parsed = tomllib.loads(body)
    assert parsed["http"]["timeout"] == 61.0 and parsed["harvest"]["venues_include"] == []
    assert "    (default: 30.0)" in out and "env REVIEW_HTTP__TIMEOUT (set)" in out
    code, out, err = cli("config", "--json")
    rows = {r["key"]: r for r in json.loads(out)["settings"]}
    assert rows["http.timeout"]["value"] == 61.0
