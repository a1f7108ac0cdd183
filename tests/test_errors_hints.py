"""Issue 31 item 7: every error a new user met says what is wrong and what to do, in one
line plus a hint, with no traceback and an exit code a script can test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.procs import clean_env


def test_postgres_url_without_psycopg_is_a_one_line_hint(tmp_path: Path) -> None:
    script = ("import sys; sys.modules['psycopg'] = None  # as after an install without the [postgres] extra\n"
              "from review.cli import main\n"
              "main(['--db', 'postgresql://review@127.0.0.1:9/review', 'status'])\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=clean_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr
    assert "error: --db: no driver installed for postgresql (psycopg is missing)" in proc.stderr
    assert "hint: install the PostgreSQL driver: pip install 'rogue-review[postgres]'" in proc.stderr
