"""Helpers for the extraction and search tests: papers with PDFs in a data dir."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from pathlib import Path

from review.db.models import Document, Paper
from review.db.session import Database
from review.pdfgen import write_raw_pdf

PDFS = Path(__file__).resolve().parent / "data" / "pdfs"


def add_paper_with_pdf(db: Database, data_dir: Path, pdf: Path | None, ident: str, *, title: str = "",
                       year: int = 2020) -> int:
    """A paper whose Document row points at a copy of `pdf` in the content-addressed store.

    The download stage normally writes these rows; tests write them directly so the
    extraction stage is tested on its own. `pdf=None` makes a Document whose file is gone.
    """
    if pdf is not None:
        data = pdf.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        rel = Path("pdfs") / sha[:2] / sha[2:4] / f"{sha}.pdf"
        (data_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, data_dir / rel)
        size = len(data)
    else:
        sha, rel, size = "0" * 64, Path("pdfs/00/00/gone.pdf"), 0
    with db.session() as s:
        paper = Paper(ident=ident, source="local", title=title or ident, authors=["Test"], year=year)
        s.add(paper)
        s.flush()
        s.add(Document(paper_id=paper.id, url=f"https://example.org/{ident}.pdf", path=rel.as_posix(), sha256=sha,
                       size=size, content_type="application/pdf", http_status=200, outcome="ok"))
        s.flush()
        return paper.id


def write_config(directory: Path, db_url: str, data_dir: Path, **extract: object) -> Path:
    """A review.toml pointing the CLI at the test database and data dir."""
    lines = [f'database_url = "{db_url}"', f'data_dir = "{data_dir.as_posix()}"', "", "[extract]"]
    for k, v in extract.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    path = directory / "review.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def tokens(text: str) -> list[str]:
    return text.split()


def similarity(a: str, b: str) -> float:
    """Token-level similarity of two texts (1.0: the same words in the same order)."""
    return difflib.SequenceMatcher(None, tokens(a), tokens(b), autojunk=False).ratio()


def write_flate_bomb(path: Path, mib: int) -> int:
    """A one-page PDF whose content stream inflates to `mib` MiB of spaces (about 1000:1).

    Every MiB compresses to the same bytes after a full flush, so a bomb of any size is
    written in milliseconds: the first block, the repeated block, the end block, and the
    Adler-32 of the whole inflated stream. Returns the compressed stream's length.
    """
    import zlib

    chunk = b" " * (1 << 20)
    co = zlib.compressobj(9)
    first = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)
    again = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)
    end = co.flush()[:-4]  # the final empty block, without the two-chunk checksum
    adler = 1
    for _ in range(mib):
        adler = zlib.adler32(chunk, adler)
    data = first + again * (mib - 1) + end + adler.to_bytes(4, "big")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"]
    write_raw_pdf(path, objects)
    return len(data)
