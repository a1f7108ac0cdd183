"""Write the sample corpus to disk: an ACL Anthology checkout, PDFs and git repositories.

Generated at run time from a metric folder's sample file (nothing binary is committed):
`build_sample(dest, pdf_base_url, sample)` writes

    dest/acl-anthology/data/xml/2018.sample.xml ...   anthology-format records, one file per year
    dest/pdfs/<ident>.pdf                              typeset with review.pdfgen (one broken on purpose)
    dest/git/<owner>/<name>.git                        bare repositories the code scan clones (file://)

The PDFs are typeset with ReportLab's invariant mode, so the same sample gives the same
bytes on every machine; a second call reuses what is already there (a changed sample file
is rebuilt: the folder remembers the file's sha256).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from review.errors import InputFileError
from review.sample.papers import Sample, SamplePaper, SampleRepo

GIT_DATE = "2022-06-01T12:00:00+00:00"
BUILD = "2"  # bump when the way a corpus is built changes, so an old generated copy is rebuilt


@dataclass
class SampleCorpus:
    root: Path
    anthology: Path
    pdfs: Path
    git: Path

    def pdf_path(self, paper: SamplePaper) -> Path:
        return self.pdfs / f"{paper.ident}.pdf"


def _write_pdf(paper: SamplePaper, path: Path, sample: Sample) -> None:
    from reportlab import rl_config

    from review.pdfgen import Section, TableSpec, sample_spec, write_paper

    if paper.pdf == "broken":
        # A PDF header and the start of a page object, then nothing: what a cut-off upload looks like.
        path.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Ty")
        return
    spec = sample_spec(seed=paper.number, sections=3, paragraphs=2, report=False, text=sample.typeset)
    spec.title = paper.title
    spec.sections.insert(2, Section("Experimental Setup", list(paper.method)))
    if paper.table:
        res = sample.results
        spec.table = TableSpec(caption=res.caption, group=res.group, subheaders=list(res.columns),
                               rows=[list(r) for r in res.rows])
        spec.table_after = 2
    old = rl_config.invariant
    rl_config.invariant = 1
    try:
        write_paper(path, spec)
    finally:
        rl_config.invariant = old


def _git(args: list[str], cwd: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": GIT_DATE, "GIT_COMMITTER_DATE": GIT_DATE, "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(cwd)}
    proc = subprocess.run(["git", "-c", "user.name=Sample Author", "-c", "user.email=sample@example.org",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise InputFileError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}", item=str(cwd))


def _write_repo(repo: SampleRepo, dest: Path) -> None:
    if shutil.which("git") is None:
        raise InputFileError("git is not installed", item="sample codebases", hint="install git (apt-get install git)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / repo.name
        work.mkdir()
        for name, text in repo.files.items():
            f = work / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text, encoding="utf-8")
        _git(["init", "-q"], work)
        _git(["add", "-A"], work)
        _git(["commit", "-q", "-m", "Code release"], work)
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", "-q", "--bare", str(work), str(dest)], Path(tmp))


def _paper_xml(paper: SamplePaper, pdf_base_url: str, pdf_crc: str | None) -> str:
    authors = "".join(
        f"<author><first>{escape(a.split(' ', 1)[0])}</first><last>{escape(a.split(' ', 1)[-1])}</last></author>"
        for a in ("Ada Lovelace", "Alan Turing")[: 1 + paper.number % 2])
    hash_attr = f" hash={quoteattr(pdf_crc)}" if pdf_crc else ""
    code = ""
    if paper.repo is not None:
        url = f"https://github.com/{paper.repo.owner}/{paper.repo.name}"
        code = f'<pwccode url={quoteattr(url)} additional="false">{escape(paper.repo.owner + "/" + paper.repo.name)}</pwccode>'
    return (f'    <paper id="{paper.number}">\n      <title>{escape(paper.title)}</title>\n      {authors}\n'
            f"      <pages>{paper.number * 10}–{paper.number * 10 + 9}</pages>\n"
            f"      <url{hash_attr}>{escape(pdf_base_url.rstrip('/'))}/{paper.ident}.pdf</url>\n"
            f"      <bibkey>sample-{paper.year}-{paper.number}</bibkey>\n      {code}\n    </paper>\n")


def _collection_xml(year: int, papers: list[SamplePaper], pdf_base_url: str, crcs: dict[str, str | None],
                    booktitle: str) -> str:
    body = "".join(_paper_xml(p, pdf_base_url, crcs.get(p.ident)) for p in papers)
    return (f'<?xml version=\'1.0\' encoding=\'UTF-8\'?>\n<collection id="{year}.sample">\n'
            f'  <volume id="1" ingest-date="{year}-12-01" type="proceedings">\n    <meta>\n'
            f"      <booktitle>{escape(booktitle.replace('{year}', str(year)))}</booktitle>\n"
            f"      <publisher>Association for Computational Linguistics</publisher>\n"
            f"      <address>Online</address>\n      <month>December</month>\n      <year>{year}</year>\n"
            f"      <venue>sample</venue>\n    </meta>\n{body}  </volume>\n</collection>\n")


def build_sample(dest: Path, pdf_base_url: str, sample: Sample) -> SampleCorpus:
    """Write (or reuse) the sample corpus of `sample` under `dest`; the XML points PDFs at `pdf_base_url`."""
    corpus = SampleCorpus(root=dest, anthology=dest / "acl-anthology", pdfs=dest / "pdfs", git=dest / "git")
    papers = sample.papers
    stamp = dest / "VERSION"
    version = f"{BUILD} {sample.sha256}"
    if stamp.is_file() and stamp.read_text().strip() != version:
        for sub in (corpus.anthology, corpus.pdfs, corpus.git):
            shutil.rmtree(sub, ignore_errors=True)
    corpus.pdfs.mkdir(parents=True, exist_ok=True)
    crcs: dict[str, str | None] = {}
    for paper in papers:
        path = corpus.pdf_path(paper)
        if paper.pdf == "missing":
            crcs[paper.ident] = None
            continue
        if not path.is_file():
            tmp = path.with_suffix(".tmp")
            _write_pdf(paper, tmp, sample)
            tmp.replace(path)
        crcs[paper.ident] = f"{zlib.crc32(path.read_bytes()) & 0xFFFFFFFF:08x}"
    for paper in papers:
        if paper.repo is not None:
            bare = corpus.git / paper.repo.owner / f"{paper.repo.name}.git"
            if not (bare / "HEAD").is_file():
                _write_repo(paper.repo, bare)
    xml_dir = corpus.anthology / "data" / "xml"
    xml_dir.mkdir(parents=True, exist_ok=True)
    for year in sorted({p.year for p in papers}):
        text = _collection_xml(year, [p for p in papers if p.year == year], pdf_base_url, crcs, sample.booktitle)
        path = xml_dir / f"{year}.sample.xml"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    (corpus.root / "truth.json").write_text(json.dumps(
        {p.ident: {"pdf": p.pdf, "repo": f"{p.repo.owner}/{p.repo.name}" if p.repo else None, **p.truth}
         for p in papers}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    stamp.write_text(version + "\n")
    return corpus
