"""`--min` thresholds of the evaluate commands: one syntax and one check for papers and code.

Each gold kind names its own questions, measures and examples (`Vocabulary`), so an error
message points at scores that exist for that kind of gold file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping


@dataclass(frozen=True)
class Threshold:
    metric: str
    minimum: float


@dataclass(frozen=True)
class Vocabulary:
    """What a score name may be: QUESTION[.LABEL].MEASURE, and examples for messages."""

    questions: tuple[str, ...]
    measures: tuple[str, ...]
    example: str  # one NAME=VALUE
    scores: str  # a few score names, comma-separated


def parse_threshold(spec: str, vocab: Vocabulary) -> Threshold:
    """`NAME=VALUE` (also `>=`); a label may sit in the middle (`P4.BZ/pyrouge.recall=1`).
    ValueError naming what is wrong."""
    name, sep, value = spec.replace(">=", "=").partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"{spec!r} is not NAME=VALUE (e.g. {vocab.example})")
    try:
        minimum = float(value)
    except ValueError:
        raise ValueError(f"{spec!r}: {value.strip()!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:
        raise ValueError(f"{spec!r}: a minimum lies between 0 and 1")
    question, _, rest = name.partition(".")
    measure = rest.rpartition(".")[2]
    if question not in vocab.questions or measure not in vocab.measures:
        raise ValueError(f"{spec!r}: a score is QUESTION[.LABEL].MEASURE with QUESTION one of "
                         f"{', '.join(vocab.questions)} and MEASURE one of {', '.join(vocab.measures)}")
    return Threshold(name, minimum)


def check_thresholds(metrics: Mapping[str, float | None], thresholds: Iterable[Threshold],
                     vocab: Vocabulary) -> list[str]:
    """One line per threshold not met; an undefined score (nothing to score) meets none."""
    failures = []
    for t in thresholds:
        value = metrics.get(t.metric)
        if t.metric not in metrics:
            failures.append(f"{t.metric}: no such score on this gold set (e.g. {vocab.scores})")
        elif value is None:
            failures.append(f"{t.metric} is undefined (nothing to score) < {t.minimum:g}")
        elif value < t.minimum:
            failures.append(f"{t.metric} = {value:.3f} < {t.minimum:g}")
    return failures
