"""The offline human pass end to end (issue 31 item 6): `queue --offline` writes the
rendered labeling configuration next to the tasks; tasks of imported papers link the
local PDF; a spreadsheet goes out and its answers come back with `pull --from-file x.csv`,
bad rows named by row and reason; the documented `--from-file` example imports as shown."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from sqlalchemy import select

from review.db import migrate
from review.db.models import HumanDecision, Paper, PaperLabel, RuleSet
from review.db.session import Database
from review.errors import InputFileError
from review.importer.pdfs import run_import_pdfs
from review.labelstudio.offline import import_annotations
from review.labelstudio.queue import run_queue
from review.labelstudio.tasks import label_config, parse_config
from review.settings import DownloadSettings, Settings
from tests.labelstudio_support import choices, seed_papers, text

ROOT = Path(__file__).resolve().parent.parent
PDFS = Path(__file__).parent / "data" / "pdfs"


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", exports_dir=tmp_path / "exports",
                    download=DownloadSettings(max_bytes=50_000_000))


def _live(db) -> list[HumanDecision]:
    with db.session() as s:
        return list(s.scalars(select(HumanDecision).where(HumanDecision.deleted.is_(False))
                              .order_by(HumanDecision.paper_id, HumanDecision.question)))


def test_offline_queue_writes_the_rendered_config_next_to_the_tasks(db, settings, tmp_path):
    seed_papers(db, 2)
    out = tmp_path / "out" / "tasks.json"
    result = run_queue(db, settings, "papers", offline=out)
    config = tmp_path / "out" / "tasks.label-config.xml"
    assert result.config_file == str(config) and config.is_file()
    xml = config.read_text(encoding="utf-8")
    assert xml == label_config("papers", settings).xml
    questions = parse_config(xml).questions
    assert set(questions) == {"P0", "P1", "P2", "P3", "P4", "C0", "note"}
    # every prediction in the tasks file names only questions and choices that config has
    for task in json.loads(out.read_text()):
        for r in task["predictions"][0]["result"]:
            spec = questions[r["from_name"]]
            assert set(r["value"].get("choices", [])) <= set(spec.choices)


def test_tasks_of_imported_papers_link_the_local_pdf(db, settings, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "rouge-paper.pdf").write_bytes((PDFS / "rouge-paper.pdf").read_bytes())
    run_import_pdfs(db, settings, folder, create=True)
    with db.session() as s:
        paper = s.scalar(select(Paper))
        assert paper.pdf_url is None and paper.url is None  # an imported paper has no link of its own
        rs = RuleSet(name="rouge", metric="rouge", version="1", sha256="c" * 64, content="#")
        s.add(rs)
        s.flush()
        s.add(PaperLabel(paper_id=paper.id, rule_set_id=rs.id, prelim=True, computes=True, params=[], protocol=[],
                         variants=[], packages=[]))
    out = tmp_path / "tasks.json"
    run_queue(db, settings, "papers", offline=out)
    data = json.loads(out.read_text())[0]["data"]
    assert data["links"] != "no link"
    href = re.search(r'href="(file://[^"]+)"', data["links"]).group(1)
    local = Path(unquote(urlparse(href).path))
    assert local == Path(data["pdf_path"]) and str(local) in data["links"]
    digest = hashlib.sha256((PDFS / "rouge-paper.pdf").read_bytes()).hexdigest()
    assert hashlib.sha256(local.read_bytes()).hexdigest() == digest  # the very file that was imported


def _fill(path: Path, answers: dict[str, dict[str, str]]) -> None:
    """What a reviewer does in a spreadsheet: type into the answer columns of some rows."""
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    for row in rows:
        row.update(answers.get(row["ident"], {}))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerows(rows)


def test_spreadsheet_round_trip_gives_the_decisions_of_the_json_path(db, settings, tmp_path):
    ids = seed_papers(db, 3)
    sheet = tmp_path / "tasks-ada.csv"
    run_queue(db, settings, "papers", offline=sheet)
    with sheet.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["ident"] for r in rows] == ["2020.test-0", "2020.test-1", "2020.test-2"]
    assert (tmp_path / "tasks-ada.label-config.xml").is_file()
    assert all(r[q] == "" for r in rows for q in ("annotator", "P0", "P1", "P4"))  # nothing pre-answered
    assert "P4=ROUGE-1.5.5" in rows[0]["proposed"] and "ROUGE-1.5.5" in rows[0]["evidence"]
    _fill(sheet, {
        "2020.test-0": {"annotator": "ada@example.org", "answered_at": "2026-12-01T10:00:00Z", "P0": "Yes",
                        "P1": "-n 2 -m; -c 95", "P2": "recall; f-score", "P4": "ROUGE-1.5.5"},
        "2020.test-1": {"annotator": "ada@example.org", "answered_at": "2026-12-01T10:05:00Z", "P0": "no"},
    })
    first = import_annotations(db, settings, sheet)
    got = {(d.paper_id, d.question): d.answer for d in _live(db)}
    assert {d.origin for d in _live(db)} == {"file:tasks-ada"} and {d.annotator for d in _live(db)} == {"ada@example.org"}
    # the same answers through the Label Studio JSON path, for comparison
    other = Database(f"sqlite:///{tmp_path / 'other.sqlite'}")
    migrate.upgrade(other)
    seed_papers(other, 3)
    export = tmp_path / "export.json"
    export.write_text(json.dumps([
        {"id": 1, "data": {"ref": f"paper:{ids[0]}"}, "annotations": [
            {"id": 11, "completed_by": 1, "updated_at": "2026-12-01T10:00:00Z",
             "result": [choices("P0", "yes"), text("P1", "-n 2 -m", "-c 95"), choices("P2", "recall", "f-score"),
                        choices("P4", "ROUGE-1.5.5")]}]},
        {"id": 2, "data": {"ref": f"paper:{ids[1]}"}, "annotations": [
            {"id": 12, "completed_by": 1, "updated_at": "2026-12-01T10:05:00Z", "result": [choices("P0", "no")]}]}]))
    import_annotations(other, settings, export)
    assert got == {(d.paper_id, d.question): d.answer for d in _live(other)}
    other.dispose()
    assert first.new == len(got) and ids[2] not in {p for p, _ in got}  # the untouched row counts for nothing
    again = import_annotations(db, settings, sheet)
    assert (again.new, again.updated, again.unchanged) == (0, 0, len(got))
    _fill(sheet, {"2020.test-1": {"P0": "yes", "answered_at": "2026-12-02T09:00:00Z"}})  # a corrected answer
    third = import_annotations(db, settings, sheet)
    assert third.updated == 1 and third.new == 1  # P0 changed; the P1 a "yes" shows is now answered (empty)


def test_bad_spreadsheet_rows_are_named_and_nothing_is_imported(db, settings, tmp_path):
    seed_papers(db, 3)
    sheet = tmp_path / "tasks.csv"
    run_queue(db, settings, "papers", offline=sheet)
    _fill(sheet, {
        "2020.test-0": {"annotator": "ada", "P0": "maybe"},
        "2020.test-1": {"P0": "yes"},
        "2020.test-2": {"annotator": "ada", "P0": "yes", "P4": "ROUGE-1.5.5; not-a-package",
                        "answered_at": "yesterday"},
    })
    with pytest.raises(InputFileError) as exc:
        import_annotations(db, settings, sheet)
    msg = str(exc.value)
    assert "3 row(s) cannot be imported, nothing was" in msg
    assert re.search(r"row 2 \(2020\.test-0\): P0: 'maybe' is not a choice of the form \(yes, no, can't tell\)", msg)
    assert re.search(r"row 3 \(2020\.test-1\): answers without an annotator", msg)
    assert "row 4 (2020.test-2): P4: 'not-a-package' is not a choice" in msg and "answered_at 'yesterday'" in msg
    assert exc.value.exit_code == 8 and _live(db) == []
    # rows naming items this database does not hold, and a second answer by the same reviewer
    with sheet.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    for row in rows:
        row.update({"annotator": "ada", "P0": "no", "P4": "", "answered_at": ""})
    rows[1]["ref"], rows[2]["ident"] = "paper:9999", "2099.elsewhere-1"
    rows.append(dict(rows[0]))
    rows.append({**rows[0], "ref": "row:1"})
    _write_sheet(sheet, header, rows)
    with pytest.raises(InputFileError) as exc:
        import_annotations(db, settings, sheet)
    assert "row 5 (2020.test-0): a second answer by ada to paper:1 (the first is row 2)" in str(exc.value)
    assert "row 6 (2020.test-0): ref 'row:1' is not a task reference" in str(exc.value)
    rows = rows[:3]
    _write_sheet(sheet, header, rows)
    with pytest.raises(InputFileError) as exc:
        import_annotations(db, settings, sheet)
    assert "row 3: paper:9999 is not in this database" in str(exc.value)
    assert "row 4: paper:3 is paper 2020.test-2, not 2099.elsewhere-1" in str(exc.value)
    assert _live(db) == []
    (tmp_path / "plain.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputFileError, match="not a task spreadsheet: no column ref, annotator"):
        import_annotations(db, settings, tmp_path / "plain.csv")


def test_the_documented_from_file_example_imports_as_documented(db, settings, tmp_path):
    doc = (ROOT / "docs" / "human-pass.md").read_text(encoding="utf-8")
    section = doc[doc.index("### The file `pull --from-file` reads"):]
    example = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    with db.session() as s:
        s.add(Paper(id=1, ident="2019.sample-1.2", source="acl", title="Summaries Scored with pyrouge", authors=[]))
    path = tmp_path / "project-3-at-2026-12-01.json"
    path.write_text(json.dumps(example))
    result = import_annotations(db, settings, path)
    got = {(d.question, json.dumps(d.answer)) for d in _live(db)}
    stated = re.search(r"gives these decisions: (.*?)\.\n", section, re.S).group(1)
    expected = {(q, json.dumps(json.loads(a))) for q, a in re.findall(r"`(P\d|note) = (.+?)`", stated)}
    assert got == expected and result.tasks == 1


def _write_sheet(sheet, header, rows):  # type: ignore[no-untyped-def]
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.slow
def test_sigkill_mid_spreadsheet_pull_then_rerun_keeps_each_answer_once(db, db_url, settings, tmp_path):
    """A `pull --from-file x.csv` killed at any point, then run again at once, ends with every
    answer of the sheet stored once: nothing half-imported, nothing doubled."""
    from review.db.models import Run

    seed_papers(db, 1200)
    sheet = tmp_path / "tasks-ada.csv"
    run_queue(db, settings, "papers", offline=sheet)
    with sheet.open(encoding="utf-8") as fh:
        idents = [r["ident"] for r in csv.DictReader(fh)]
    _fill(sheet, {i: {"annotator": "ada@example.org", "answered_at": "2026-12-01T10:00:00Z", "P0": "no"}
                  for i in idents})
    from tests.procs import clean_env, sigkill_when, start_review

    def started() -> bool:
        with db.session() as s:
            return s.scalar(select(Run.id).where(Run.command == "pull --from-file")) is not None

    env = clean_env(REVIEW_DATABASE_URL=db_url, REVIEW_DATA_DIR=str(settings.data_dir))
    proc = start_review("--silent", "pull", "--from-file", str(sheet), cwd=tmp_path, env=env)
    sigkill_when(proc, started, "pull")
    with db.session() as s:
        assert s.scalar(select(Run.status).where(Run.command == "pull --from-file")) == "running", \
            "the kill landed before the pull finished"
    before = len(_live(db))

    result = import_annotations(db, settings, sheet)

    live = _live(db)
    assert len(live) == len(idents) == 1200
    assert len({(d.paper_id, d.question) for d in live}) == len(live), "no answer stored twice"
    assert {d.answer for d in live} == {"no"} and {d.origin for d in live} == {"file:tasks-ada"}
    assert (result.new, result.unchanged) == (len(idents) - before, before)
