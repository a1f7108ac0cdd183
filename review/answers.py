"""What a reviewer's answer means: one value per question, the same for every reader.

Answers arrive in the shapes Label Studio or a file gives them ("yes", ["Yes"],
{"choices": ["no"]}, True; ["NONE"] for an empty multiple choice; parameter strings one
per line). `vote_value` turns each into the value reviewers are compared on: a bool for
the yes/no questions, a sorted tuple for the multiple choices, `UNSURE` for "can't tell"
(missing for agreement, a reason to adjudicate), None for an answer nobody can read.

P1 has two uses, kept apart: whether the paper lists the metric's parameters (yes/no: what R1
needs, what reviewers are resolved and tied on) and which strings it lists (compared
only after `normalize_param`, reported as their own agreement row, never a tie).
"""

from __future__ import annotations

from typing import Any

UNSURE = "can't tell"
PARAMS = "P1"
BOOL_QUESTIONS = ("P0", "C0", "C2")
LIST_QUESTIONS = ("P2", "P3", "P4", "C1")
QUESTIONS = ("P0", "P1", "P2", "P3", "P4", "C0", "C1", "C2")
_UNSURE_WORDS = {"can't tell", "can’t tell", "cant tell", "cannot tell", "unsure"}
_QUOTES = "'\"`"


def _unwrap(answer: Any) -> Any:
    if isinstance(answer, dict):
        return answer.get("choices", answer.get("value", answer.get("answer", answer.get("text"))))
    return answer


def is_unsure(answer: Any) -> bool:
    """Whether the reviewer chose "can't tell" (alone or among other choices)."""
    answer = _unwrap(answer)
    items = answer if isinstance(answer, list) else [answer]
    return any(isinstance(a, str) and " ".join(a.casefold().split()) in _UNSURE_WORDS for a in items)


def parse_bool(answer: Any) -> bool | None:
    """A yes/no answer in any of the shapes Label Studio or a file may give it."""
    answer = _unwrap(answer)
    if isinstance(answer, list):
        answer = answer[0] if len(answer) == 1 else None
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, (int, float)) and answer in (0, 1):
        return bool(answer)
    if isinstance(answer, str):
        word = answer.strip().casefold()
        if word in ("yes", "true", "y", "1"):
            return True
        if word in ("no", "false", "n", "0"):
            return False
    return None


def parse_list(answer: Any) -> list[str] | None:
    """A multi-choice answer as a sorted list; "NONE" means the empty list."""
    answer = _unwrap(answer)
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
        return None
    return sorted({a.strip() for a in answer if a.strip() and a.strip().casefold() != "none"})


def parse_params(answer: Any) -> bool | list[str] | None:
    """P1 as a yes/no, or (in our Label Studio config) the parameter strings the reviewer
    copied from the paper, one per line: any string means "yes, parameters are listed"."""
    flag = parse_bool(answer)
    if flag is not None:
        return flag
    strings = parse_list(answer)
    if strings is None:
        return None
    return [x for x in strings if x.casefold() not in ("no", "false")]


def parse_answer(question: str, answer: Any) -> Any:
    """The value compute uses: bool, list of str, P1 as bool or strings; None if unreadable."""
    if is_unsure(answer):
        return None
    if question == PARAMS:
        return parse_params(answer)
    if question in BOOL_QUESTIONS:
        return parse_bool(answer)
    if question in LIST_QUESTIONS:
        return parse_list(answer)
    return None


def vote_value(question: str, answer: Any) -> Any:
    """What reviewers are compared on: bool, tuple of str, UNSURE, or None (unreadable)."""
    if is_unsure(answer):
        return UNSURE
    value = parse_answer(question, answer)
    if question == PARAMS and isinstance(value, list):
        return bool(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def normalize_param(text: str) -> str:
    """One spelling per parameter string: whitespace collapsed, quotes and a leading
    program name dropped, options (each with its values) in sorted order, so
    "ROUGE-1.5.5.pl -n 2  -m" and "-m -n 2" compare equal."""
    tokens = [t.strip(_QUOTES) for t in text.split()]
    tokens = [t for t in tokens if t]
    first = next((i for i, t in enumerate(tokens) if t.startswith("-")), None)
    if first is None:
        return " ".join(tokens)
    groups: list[list[str]] = []
    for t in tokens[first:]:
        if t.startswith("-") or not groups:
            groups.append([t])
        else:
            groups[-1].append(t)
    return " ".join(" ".join(g) for g in sorted(groups))


def param_strings(answer: Any) -> list[str]:
    """A P1 answer's strings, one per normalized form, in their first spelling."""
    value = parse_params(answer)
    if not isinstance(value, list):
        return []
    seen: dict[str, str] = {}
    for s in value:
        seen.setdefault(normalize_param(s), " ".join(s.split()))
    return [seen[k] for k in sorted(seen)]


def yes_no(value: bool) -> str:
    return "yes" if value else "no"
