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


def test_import_pdfs_with_nothing_matched_hints_create(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from tests.conftest import DATA

    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(DATA / "pdfs" / "rouge-paper.pdf", folder / "a.pdf")
    code, out, err = cli("import", "pdfs", str(folder))
    assert code == 0 and "0 matched, 1 unmatched" in err
    assert f"hint: 1 file(s) match no harvested paper (none matched); `review import pdfs {folder} --create`" in err
    code, out, err = cli("import", "pdfs", str(folder), "--create")
    assert code == 0 and "1 created" in err and "hint:" not in err


def test_import_pdfs_from_an_empty_folder_is_an_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no PDFs here")
    code, out, err = cli("import", "pdfs", str(tmp_path / "empty"))
    assert code == 8 and "no PDF files found (1 file(s) that are not PDFs)" in err and "hint: give a folder of .pdf files" in err
    (tmp_path / "empty" / "notes.txt").unlink()
    code, out, err = cli("import", "pdfs", str(tmp_path / "empty"))
    assert code == 8 and "no PDF files found" in err


def test_sample_survey_says_its_failures_are_on_purpose_and_names_public_ids(cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = cli("survey", "--sample")
    assert code == 0, err
    flat = " ".join(err.split())  # rich wraps long log lines
    assert "2022.sample-1.9: extract failed: corrupt" in flat and "paper 9:" not in flat  # the public id, not the row
    assert "(expected: the sample serves this PDF corrupt on purpose" in flat
    assert "2022.sample-1.12: http_404" in flat and "(expected: the sample's server has no PDF for this paper" in flat
    assert "WARNING" not in err and "ERROR" not in err
    assert "2022.sample-1.12, 2022.sample-1.9 fail on purpose" in flat


def test_log_lines_name_papers_and_codebases_by_public_id(db) -> None:  # type: ignore[no-untyped-def]
    from review.db.models import Codebase, Paper
    from review.names import codebase_name, paper_name

    with db.session() as s:
        p = Paper(ident="D19-1620", source="acl", title="t")
        s.add(p)
        s.flush()
        cb = Codebase(paper_id=p.id, url="https://github.com/a/b")
        s.add(cb)
        s.flush()
        assert paper_name(s, p.id) == "D19-1620"
        assert codebase_name(s, cb.id) == "https://github.com/a/b (of D19-1620)"
        assert paper_name(s, p.id + 100) == f"paper row {p.id + 100} (deleted)"
