"""The computed-metric flag as a declared boolean expression, not code.

A rule file writes e.g. `score || full || (abbrev && verbatim)` (or with `or`, `and`,
`not`, `!`); this module parses it once into a small tree that is evaluated per paper
against the set of flag labels found. No `eval`: the grammar is names, parentheses and
the three operators, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet

import regex

_TOKEN = regex.compile(r"\s*(?:(\|\||\bor\b)|(&&|\band\b)|(!|\bnot\b)|(\()|(\))|([A-Za-z_][\w.-]*))")


@dataclass(frozen=True)
class Expr:
    op: str  # name | or | and | not
    args: tuple["Expr", ...] = ()
    name: str = ""

    def evaluate(self, present: AbstractSet[str]) -> bool:
        if self.op == "name":
            return self.name in present
        if self.op == "not":
            return not self.args[0].evaluate(present)
        if self.op == "and":
            return all(a.evaluate(present) for a in self.args)
        return any(a.evaluate(present) for a in self.args)

    def names(self) -> set[str]:
        if self.op == "name":
            return {self.name}
        out: set[str] = set()
        for a in self.args:
            out |= a.names()
        return out


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"unexpected text at character {pos}: {text[pos:pos + 10]!r}")
        kinds = ("or", "and", "not", "(", ")", "name")
        for kind, value in zip(kinds, m.groups()):
            if value is not None:
                out.append((kind, value))
        pos = m.end()
    return out


def parse_expression(text: str) -> Expr:
    """Parse `a || b && !c` with the usual precedence (not > and > or)."""
    tokens = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos][0] if pos < len(tokens) else None

    def take(kind: str) -> str:
        nonlocal pos
        if peek() != kind:
            found = tokens[pos][1] if pos < len(tokens) else "end of expression"
            raise ValueError(f"expected {kind!r}, found {found!r}")
        pos += 1
        return tokens[pos - 1][1]

    def disjunction() -> Expr:
        args = [conjunction()]
        while peek() == "or":
            take("or")
            args.append(conjunction())
        return args[0] if len(args) == 1 else Expr("or", tuple(args))

    def conjunction() -> Expr:
        args = [negation()]
        while peek() == "and":
            take("and")
            args.append(negation())
        return args[0] if len(args) == 1 else Expr("and", tuple(args))

    def negation() -> Expr:
        if peek() == "not":
            take("not")
            return Expr("not", (negation(),))
        if peek() == "(":
            take("(")
            inner = disjunction()
            take(")")
            return inner
        return Expr("name", name=take("name"))

    if not tokens:
        raise ValueError("empty expression")
    tree = disjunction()
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r} after a complete expression")
    return tree
