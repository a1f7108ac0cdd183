"""How far reviewers agree, per question: Krippendorff's alpha and Cohen's kappa.

Open-source Label Studio has no agreement statistics, so they are computed here from the
live decisions of review projects (adjudication answers are not a second opinion and
are left out). Answers are nominal categories; a multiple-choice answer counts as one
category (the whole set), so "recall, f-score" vs "f-score" is a disagreement. Alpha
comes from the `krippendorff` package (nominal level; units with one answer carry no
pairs); kappa is computed when exactly two reviewers answered the question, over the
items both answered. Either is None when undefined (e.g. every answer identical).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import krippendorff
import numpy as np
from sqlalchemy.orm import Session

from review.labelstudio.resolve import Vote, answer_key, live_votes


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


def agreement_from_votes(votes: list[Vote]) -> list[dict[str, Any]]:
    """One row per question: alpha, kappa (two reviewers), units, annotators, observed agreement."""
    by_question: dict[str, dict[tuple[str, int], dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    decisions: Counter[str] = Counter()
    for v in votes:
        if v.adjudication:
            continue
        by_question[v.question][(v.kind, v.item_id)][v.annotator] = answer_key(v.answer)
        decisions[v.question] += 1
    rows = []
    for q in sorted(by_question):
        units = by_question[q]
        raters = sorted({r for a in units.values() for r in a})
        multi = {u: a for u, a in units.items() if len(a) >= 2}
        agree = [len(set(a.values())) == 1 for a in multi.values()]
        kappa = None
        if len(raters) == 2:
            kappa = cohen_kappa([(a[raters[0]], a[raters[1]]) for a in multi.values()])
        rows.append({"question": q, "alpha": nominal_alpha(units), "kappa": kappa, "units": len(multi),
                     "items": len(units), "annotators": len(raters), "decisions": decisions[q],
                     "observed_agreement": (sum(agree) / len(agree)) if agree else None})
    return rows


def agreement_report(session: Session) -> list[dict[str, Any]]:
    """Agreement per question over the database's live review decisions."""
    return agreement_from_votes(live_votes(session, include_adjudication=False))
