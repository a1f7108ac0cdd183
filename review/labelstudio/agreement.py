"""How far reviewers agree, per question: Krippendorff's alpha and Cohen's kappa.

Open-source Label Studio has no agreement statistics, so they are computed here from the
live decisions of review projects (adjudication answers are not a second opinion and
are left out). Answers are compared as `review.answers.vote_value` reads them (the same
reading the resolution uses); a multiple-choice answer counts as one category (the whole
set), so "recall, f-score" vs "f-score" is a disagreement, and "can't tell" is a missing
value. P1 gives two rows: "P1" (lists parameters: yes/no) and "P1 strings" (the
normalized parameter strings, among reviewers who both said yes).

Alpha comes from the `krippendorff` package (nominal level; units with one answer carry
no pairs). Kappa is Cohen's kappa for every pair of reviewers over the items both
answered; the row's `kappa` is the unweighted mean over the pairs where it is defined
(with two reviewers simply their kappa), `kappa_method` says so and `kappa_pairs` lists
each pair. Any of them is None when undefined (e.g. every answer identical).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
from sqlalchemy.orm import Session

from review.answers import PARAMS, UNSURE, normalize_param, param_strings, vote_value
from review.resolution import Vote, live_votes

STRINGS = "P1 strings"
PAIRWISE = "cohen, mean of pairs"


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa for two raters' paired nominal answers."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in set(first) | set(second)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def pairwise_kappa(units: dict[Any, dict[str, str]]) -> tuple[float | None, list[dict[str, Any]]]:
    """Mean Cohen's kappa over reviewer pairs, and each pair's kappa and shared items."""
    raters = sorted({r for answers in units.values() for r in answers})
    pairs = []
    for a, b in combinations(raters, 2):
        shared = [(u[a], u[b]) for u in units.values() if a in u and b in u]
        if shared:
            pairs.append({"annotators": [a, b], "items": len(shared), "kappa": cohen_kappa(shared)})
    defined = [p["kappa"] for p in pairs if p["kappa"] is not None]
    return (sum(defined) / len(defined) if defined else None), pairs


def nominal_alpha(units: dict[Any, dict[str, str]]) -> float | None:
    """Krippendorff's alpha (nominal) for {unit: {rater: answer}}."""
    raters = sorted({r for answers in units.values() for r in answers})
    categories = sorted({a for answers in units.values() for a in answers.values()})
    if len(raters) < 2 or not units:
        return None
    index = {c: i for i, c in enumerate(categories)}
    data = np.full((len(raters), len(units)), np.nan)
    for j, answers in enumerate(units.values()):
        for i, r in enumerate(raters):
            if r in answers:
                data[i, j] = index[answers[r]]
    pairable = (np.sum(~np.isnan(data), axis=0) >= 2)
    values = data[:, pairable]
    if values.size == 0 or len(set(values[~np.isnan(values)].tolist())) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def _key(value: Any) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)


def agreement_from_votes(votes: list[Vote]) -> list[dict[str, Any]]:
    """One row per question: alpha, kappa (pairwise), units, annotators, observed agreement."""
    by_question: dict[str, dict[tuple[str, int], dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    decisions: Counter[str] = Counter()
    unsure: Counter[str] = Counter()
    for v in votes:
        if v.adjudication:
            continue
        decisions[v.question] += 1
        value = vote_value(v.question, v.answer)
        if value == UNSURE:
            unsure[v.question] += 1
        if value is None or value == UNSURE:  # missing, not a category
            continue
        by_question[v.question][(v.kind, v.item_id)][v.annotator] = _key(value)
        strings = param_strings(v.answer) if v.question == PARAMS and value is True else []
        if strings:
            by_question[STRINGS][(v.kind, v.item_id)][v.annotator] = _key(sorted(map(normalize_param, strings)))
            decisions[STRINGS] += 1
    rows = []
    for q in sorted(by_question):
        units = by_question[q]
        raters = sorted({r for a in units.values() for r in a})
        multi = {u: a for u, a in units.items() if len(a) >= 2}
        agree = [len(set(a.values())) == 1 for a in multi.values()]
        kappa, pairs = pairwise_kappa(units)
        rows.append({"question": q, "alpha": nominal_alpha(units), "kappa": kappa,
                     "kappa_method": "cohen" if len(raters) == 2 else PAIRWISE if pairs else None,
                     "kappa_pairs": pairs, "units": len(multi), "items": len(units), "annotators": len(raters),
                     "decisions": decisions[q], "cant_tell": unsure[q],
                     "observed_agreement": (sum(agree) / len(agree)) if agree else None})
    return rows


def agreement_report(session: Session) -> list[dict[str, Any]]:
    """Agreement per question over the database's live review decisions."""
    return agreement_from_votes(live_votes(session, include_adjudication=False))
