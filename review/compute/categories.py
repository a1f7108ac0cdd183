"""Figure 3 of Rogue Scores: which series a paper that computes the metric is counted in.

A reproducible paper is "reproducible"; otherwise its software decides: a package with
scoring errors, a package whose correctness is unknown, or only correct packages.
"""

from __future__ import annotations

# Figure 3 series, in plotting order.
CATEGORIES = ("reproducible", "incorrect package", "unknown package", "correct package, not reproducible")


def category(reproducible: bool | None, software_error: str) -> str:
    """The series of a paper that computes the metric (`software_error`: true | false | unknown)."""
    if reproducible:
        return CATEGORIES[0]
    if software_error == "true":
        return CATEGORIES[1]
    if software_error == "unknown":
        return CATEGORIES[2]
    return CATEGORIES[3]
