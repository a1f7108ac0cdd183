"""The specimen: (reference, hypothesis) pairs every implementation scores, sentences explicit.

Default: from the survey database, each paper's abstract as the reference and the first
three sentences of its body (Lead-3, as Rogue Scores used on CNN/Daily Mail) as the
hypothesis. `--specimen FILE.jsonl` brings one's own: one object per line with
`reference` and `hypothesis` (a string, split here, or a list of sentences) and an
optional `id`. Bad rows are refused by line number, all of them at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from review.errors import InputFileError

# A sentence ends at . ! or ? followed by space and a capital, a quote or a bracket; not
# after the abbreviations scientific English is full of.
_END = re.compile(r'(?<=[.!?])\s+(?=["“(\[]?[A-Z0-9])')
_ABBREV = re.compile(r"\b(?:al|vs|cf|fig|figs|eq|eqs|sec|resp|tab|no|approx|e\.g|i\.e|etc)\.$", re.IGNORECASE)
_ABSTRACT = re.compile(r"\babstract\b[\s.:—-]*", re.IGNORECASE)
# The body starts at its first heading, "1 Introduction" (on a line of its own or, in normalized
# text, inline).
_INTRO = re.compile(r"(?:(?:^|\s)(?:1\.?|I\.)\s*Introduction\b|\n\s*Introduction\s*\n)\s*")


@dataclass(frozen=True)
class Pair:
    id: str
    reference: tuple[str, ...]  # sentences
    hypothesis: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "reference": list(self.reference), "hypothesis": list(self.hypothesis)}


def split_sentences(text: str) -> list[str]:
    """Sentences of running text (whitespace collapsed); the specimen's explicit split."""
    out: list[str] = []
    for piece in _END.split(" ".join(text.split())):
        if out and _ABBREV.search(out[-1]):
            out[-1] += " " + piece  # "et al. 2004" does not end a sentence
        elif piece.strip():
            out.append(piece.strip())
    return out


def split_for(pair_sentences: Sequence[str] | tuple[str, ...], splitting: str) -> list[str]:
    """The lines one side is given as: the specimen's sentences, none (one line) or on every period."""
    if splitting == "explicit":
        return list(pair_sentences)
    text = " ".join(pair_sentences)
    if splitting == "none":
        return [text]
    if splitting == "period":
        return [s.strip() + " ." for s in text.split(".") if s.strip()]
    raise ValueError(f"unknown sentence splitting {splitting!r} (explicit, none, period)")


def specimen_hash(pairs: Iterable[Pair]) -> str:
    """sha256 of the pairs as scored (ids and sentences): the same specimen, the same hash."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps(p.as_dict(), sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def _sentences(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return split_sentences(value)
    if isinstance(value, list) and value and all(isinstance(s, str) for s in value):
        return [" ".join(s.split()) for s in value if s.strip()]
    return None


def read_jsonl(path: Path) -> list[Pair]:
    """Pairs of a JSONL specimen; every bad row is named by its line number."""
    pairs: list[Pair] = []
    problems: list[str] = []
    seen: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read the specimen: {exc}", item=str(path)) from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {number}: not an object")
            continue
        missing = [k for k in ("reference", "hypothesis") if k not in row]
        if missing:
            problems.append(f"line {number}: no {' or '.join(missing)}")
            continue
        ref, hyp = _sentences(row["reference"]), _sentences(row["hypothesis"])
        bad = [k for k, v in (("reference", ref), ("hypothesis", hyp)) if not v]
        if bad:
            problems.append(f"line {number}: {' and '.join(bad)} empty or not text")
            continue
        ident = str(row.get("id", number))
        if ident in seen:
            problems.append(f"line {number}: id {ident!r} repeated")
            continue
        seen.add(ident)
        pairs.append(Pair(ident, tuple(ref), tuple(hyp)))
    if problems:
        shown = "; ".join(problems[:10]) + (f"; and {len(problems) - 10} more" if len(problems) > 10 else "")
        raise InputFileError(f"{len(problems)} bad row(s): {shown}", item=str(path),
                             hint="each line: {\"reference\": text or [sentences], \"hypothesis\": ..., \"id\": optional}")
    if not pairs:
        raise InputFileError("no pairs in the specimen", item=str(path))
    return pairs


def lead3_pair(ident: str, text: str) -> Pair | None:
    """A paper's (abstract, Lead-3 of its body), or None when the text has no clear abstract."""
    start = _ABSTRACT.search(text[:5000])
    if not start:
        return None
    intro = _INTRO.search(text, start.end())
    if not intro or intro.start() - start.end() > 4000:
        return None
    abstract = split_sentences(text[start.end():intro.start()])
    body = split_sentences(text[intro.end():intro.end() + 5000])[:3]
    if len(abstract) < 2 or len(body) < 3:
        return None
    return Pair(ident, tuple(abstract), tuple(body))


def from_database(db: Any, text_source: str = "pdf", limit: int | None = None) -> list[Pair]:
    """Lead-3 pairs from the papers' extracted texts (papers whose text has no abstract are left out)."""
    from sqlalchemy import select

    from review.db.models import Paper, PaperText

    pairs: list[Pair] = []
    with db.session() as s:
        rows = s.execute(select(Paper.ident, PaperText.content).join(PaperText, PaperText.paper_id == Paper.id)
                         .where(PaperText.source == text_source, PaperText.outcome == "ok",
                                Paper.removed.is_(False)).order_by(Paper.ident))
        for ident, content in rows:
            pair = lead3_pair(ident, content or "")
            if pair:
                pairs.append(pair)
                if limit and len(pairs) >= limit:
                    break
    return pairs
