"""`review code link`: find each paper's codebases (C0) from three sources, with provenance.

Sources, each kept as its own `CodebaseLink` row (source, official, raw record):
  anthology_pwccode  the ACL Anthology's <pwccode> elements, stored by the harvest in
                     `Paper.pwc_code` as [{url, official, ...}]
  pwc_dump           a Papers With Code links dump file (see `pwc.py`)
  paper_text         repository URLs written in the paper's extracted text
                     (`PaperText.content`; the rule engine's `PaperLabel.code_urls` is not
                     used, so linking does not depend on the label stage having run)
A paper may have several codebases; one repository found by several sources is one
codebase with several links. `Codebase.official` is True when any source says official,
False when sources only say unofficial, None when none says. Reruns add what is new and
never delete or overwrite a codebase (human decisions may point at it).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.codebases.catalog import Catalog, load_catalog
from review.codebases.pwc import DumpStats, PaperFacts, read_dump, read_paper_facts
from review.codebases.pwc_match import MATCH_KEYS, PaperIndex, PaperKeys
from review.codebases.urls import RepoRef, find_repo_urls, parse_repo_url, repo_key
from review.db.models import Codebase, CodebaseLink, Paper, PaperText, SourceRecord
from review.db.session import Database
from review.log import get_logger
from review.progress import progress
from review.runs import record_run
from review.settings import Settings

log = get_logger("codebases.link")

SOURCES = ("anthology_pwccode", "pwc_dump", "paper_text")
PWC_ARCHIVE = "https://huggingface.co/datasets/pwc-archive/links-between-paper-and-code"
# Words near a URL that say the code is the authors' own (then the link counts as official).
OWN_CODE = re.compile(r"\b(?:our|the)\s+(?:code|implementation|source code|models?|system|toolkit)\b|"
                      r"\bcode\s+(?:is|are|will be)\s+(?:publicly\s+)?(?:available|released)|"
                      r"\b(?:we|are)\s+(?:release|make|made|publish)\b|\bavailable\s+at\b|\b(?:code|implementation)\s*:\s*$", re.I)


@dataclass
class Candidate:
    paper_id: int
    ref: RepoRef
    source: str
    official: bool | None
    raw: dict[str, Any]


@dataclass
class LinkResult:
    counts: Counter[str] = field(default_factory=Counter)
    run_id: int | None = None
    dry_run: bool = False
    unmatched_titles: list[str] = field(default_factory=list)  # pwc dump records matched to no paper

    def summary(self) -> str:
        c = self.counts
        verb = "would link" if self.dry_run else "linked"
        text = (f"{verb} {c['codebases_new']} new codebases ({c['links_new']} new links) for "
                f"{c['papers_with_new_code']} papers; pwc dump: {self.pwc_summary()}; text URLs: {c['text_links']} "
                f"({c['text_links_ignored']} tool repositories ignored)")
        if c["anthology_source_empty"]:
            text += "; the anthology source is empty on this checkout (no <pwccode> links)"
        return text

    def pwc_summary(self) -> str:
        """How many dump records matched, by which key, and how many did not."""
        c = self.counts
        keys = ", ".join(f"{how} {c[f'pwc_matched_by_{how}']}" for how in MATCH_KEYS if c[f"pwc_matched_by_{how}"])
        return (f"{c['pwc_matched']} of {c['pwc_records']} records matched" + (f" ({keys})" if keys else "")
                + f", {c['pwc_unmatched']} unmatched, {c['pwc_ambiguous_title']} ambiguous titles")


def run_link(db: Database, settings: Settings, *, pwc_path: str | Path | None = None,
             sources: Iterable[str] = SOURCES, dry_run: bool = False, catalog: Catalog | None = None,
             pwc_papers_path: str | Path | None = None) -> LinkResult:
    """Merge the link sources into codebases and record a run. Callable without the CLI.

    `pwc_papers_path`, a papers-with-abstracts dump, gives the links dump's records a
    year and a first author for the title match (see `pwc_match`).
    """
    sources = [s for s in sources if s in SOURCES]
    catalog = catalog or load_catalog(settings.code.catalog or None, settings)
    dump = pwc_path if pwc_path is not None else (settings.resolve(settings.code.pwc_links) if settings.code.pwc_links else None)
    if "pwc_dump" in sources and dump is None:
        sources = [s for s in sources if s != "pwc_dump"]
        log.info("no Papers With Code dump given (--pwc FILE or code.pwc_links): that source is skipped")
    result = LinkResult(dry_run=dry_run)
    args = {"pwc": str(dump) if dump else None, "sources": ",".join(sources), "dry_run": dry_run,
            "pwc_papers": str(pwc_papers_path) if pwc_papers_path else None}
    with record_run(db, "code link", args) as run:
        result.run_id = run.id
        run.signature.update(catalog.signature())
        candidates: list[Candidate] = []
        if "anthology_pwccode" in sources:
            candidates.extend(_from_anthology(db, result.counts))
            _warn_if_anthology_source_empty(db, result.counts, dump)
        if "pwc_dump" in sources and dump is not None:
            candidates.extend(_from_dump(db, Path(dump), result, pwc_papers_path))
        if "paper_text" in sources:
            candidates.extend(_from_text(db, catalog, result.counts))
        _merge(db, candidates, result, run.id)
        run.counts.update(result.counts)
        run.summary = result.summary()
        if dry_run:
            run.count("dry_run")
    return result


def _warn_if_anthology_source_empty(db: Database, counts: Counter[str], dump: str | Path | None) -> None:
    """The Anthology removed every <pwccode> in August 2025: on a current checkout this source
    finds nothing, which must not pass for "these papers have no code"."""
    if counts["anthology_links"] or counts["anthology_not_repo"]:
        return
    with db.session() as s:
        acl = s.scalar(select(func.count()).select_from(SourceRecord).where(SourceRecord.source == "acl")) or 0
    if not acl:
        return
    counts["anthology_source_empty"] = 1
    remedy = ("links come from the Papers With Code dump given and the paper texts only" if dump else
              f"give the archived Papers With Code links dump ({PWC_ARCHIVE}) with --pwc FILE or code.pwc_links")
    log.warning("the anthology source is empty on this checkout: none of the %d ACL Anthology records carries a "
                "<pwccode> link (the Anthology removed them all in August 2025); %s, or harvest the anthology as it "
                "was before (review harvest acl --as-of 2025-08-01)", acl, remedy)


def _from_anthology(db: Database, counts: Counter[str]) -> list[Candidate]:
    out: list[Candidate] = []
    with db.session() as s:
        rows = s.execute(select(Paper.id, Paper.pwc_code).where(Paper.removed.is_(False))).yield_per(2000)
        for pid, pwc in rows:
            for entry in pwc or []:
                url = entry.get("url") if isinstance(entry, dict) else entry if isinstance(entry, str) else None
                if not (url or "").strip():  # <pwccode url=""> (stored by earlier releases) is no link
                    counts["anthology_empty_url"] += 1
                    continue
                ref = parse_repo_url(url)
                if ref is None:
                    counts["anthology_not_repo"] += 1
                    continue
                official = entry.get("official") if isinstance(entry, dict) else None
                counts["anthology_links"] += 1
                out.append(Candidate(pid, ref, "anthology_pwccode",
                                     official if isinstance(official, bool) else None,
                                     entry if isinstance(entry, dict) else {"url": url}))
    return out


def _paper_keys(db: Database) -> list[PaperKeys]:
    """Our papers with every key a dump record may match: ids, title, year, URLs, DBLP links."""
    with db.session() as s:
        links: dict[int, list[str]] = {}
        for pid, raw in s.execute(select(SourceRecord.paper_id, SourceRecord.raw).where(SourceRecord.source == "dblp")):
            ee = (raw or {}).get("ee") if isinstance(raw, dict) else None
            links.setdefault(pid, []).extend(str(u) for u in (ee or []) if u)
        rows = s.execute(select(Paper.id, Paper.ident, Paper.title, Paper.doi, Paper.arxiv_id, Paper.year,
                                Paper.authors, Paper.url, Paper.pdf_url).where(Paper.removed.is_(False)))
        return [PaperKeys(pid, ident, title, doi, arxiv, year, (authors or [None])[0],
                          tuple(u for u in (url, pdf, *links.get(pid, [])) if u), pdf)
                for pid, ident, title, doi, arxiv, year, authors, url, pdf in rows]


def _from_dump(db: Database, path: Path, result: LinkResult, papers_path: str | Path | None) -> list[Candidate]:
    counts = result.counts
    index = PaperIndex.build(_paper_keys(db))
    facts: dict[str, PaperFacts] = {}
    if papers_path is not None:  # a first pass for the paper_urls, so the dumps stream
        facts = read_paper_facts(papers_path, {str(r["paper_url"]) for r in read_dump(path) if r.get("paper_url")})
    stats = DumpStats()
    out: list[Candidate] = []
    unmatched: dict[str, None] = {}
    for rec in read_dump(path, stats):
        pid, how = index.match(rec, facts.get(str(rec.get("paper_url") or "")))
        if pid is None:
            counts[f"pwc_{how}"] += 1
            if how == "unmatched" and rec.get("paper_title"):
                unmatched.setdefault(str(rec["paper_title"]), None)
            continue
        ref = parse_repo_url(rec.get("repo_url"))
        if ref is None:
            counts["pwc_not_repo"] += 1
            continue
        counts["pwc_matched"] += 1
        counts[f"pwc_matched_by_{how}"] += 1
        official = rec.get("is_official")
        out.append(Candidate(pid, ref, "pwc_dump", bool(official) if official is not None else None,
                             {**rec, "matched_by": how}))
    counts["pwc_records"] += stats.records
    counts["pwc_malformed"] += stats.malformed
    result.unmatched_titles = list(unmatched)
    return out


def _from_text(db: Database, catalog: Catalog, counts: Counter[str]) -> list[Candidate]:
    ignored = catalog.all_ignored_repos
    out: list[Candidate] = []
    with db.session() as s:
        total = s.query(PaperText).filter(PaperText.outcome == "ok").count()
        rows = s.execute(select(PaperText.paper_id, PaperText.content)
                         .join(Paper, Paper.id == PaperText.paper_id)
                         .where(PaperText.outcome == "ok", Paper.removed.is_(False))).yield_per(500)
        with progress(total, "code link: paper texts") as bar:
            for pid, content in rows:
                bar.advance()
                for link in find_repo_urls(content or ""):
                    if link.ref.full_name.lower() in ignored:
                        counts["text_links_ignored"] += 1
                        continue
                    before = (content or "")[max(0, link.start - 200): link.start]
                    own = bool(OWN_CODE.search(before))
                    counts["text_links"] += 1
                    out.append(Candidate(pid, link.ref, "paper_text", True if own else None,
                                         {"url": link.match, "offset": link.start, "context": link.context,
                                          "own_code_cue": own}))
    return out


def _merge(db: Database, candidates: list[Candidate], result: LinkResult, run_id: int) -> None:
    counts = result.counts
    with db.session() as s:
        existing: dict[tuple[int, str], Codebase] = {}
        for cb in s.scalars(select(Codebase)):
            existing.setdefault((cb.paper_id, repo_key(cb.url)), cb)
        links: dict[tuple[int, str], CodebaseLink] = {
            (lk.codebase_id, lk.source): lk for lk in s.scalars(select(CodebaseLink))}
        new_papers: set[int] = set()
        for c in candidates:
            key = (c.paper_id, c.ref.key)  # GitHub owner/name compared case-insensitively
            cb = existing.get(key)
            if cb is None:
                cb = Codebase(paper_id=c.paper_id, url=c.ref.url, host=c.ref.host, owner=c.ref.owner,
                              name=c.ref.name, official=c.official)
                existing[key] = cb
                counts["codebases_new"] += 1
                new_papers.add(c.paper_id)
                if not result.dry_run:
                    s.add(cb)
                    s.flush()
            else:
                cb.official = _merge_official(cb.official, c.official) if not result.dry_run else cb.official
            cb_id = cb.id if cb.id is not None else -id(cb)
            link = links.get((cb_id, c.source))
            if link is None:
                counts["links_new"] += 1
                link = CodebaseLink(codebase_id=cb_id, source=c.source, official=c.official, raw=_jsonable(c.raw),
                                    run_id=run_id)
                links[(cb_id, c.source)] = link
                if not result.dry_run:
                    s.add(link)
            elif link.official is None and c.official is not None and not result.dry_run:
                link.official = c.official
                counts["links_updated"] += 1
            else:
                counts["links_unchanged"] += 1
        counts["papers_with_new_code"] = len(new_papers)
        if result.dry_run:
            s.rollback()


def _merge_official(current: bool | None, new: bool | None) -> bool | None:
    if current is True or new is True:
        return True
    if current is False or new is False:
        return False
    return None


def _jsonable(raw: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in raw.items():
        out[k] = v if isinstance(v, (str, int, float, bool, type(None), list, dict)) else str(v)
    return out


def codebases_of(session: Session, paper_id: int) -> list[Codebase]:
    return list(session.scalars(select(Codebase).where(Codebase.paper_id == paper_id).order_by(Codebase.id)))
