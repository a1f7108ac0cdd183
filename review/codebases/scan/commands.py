"""Commands a repository documents or runs: the entry points of its evaluation.

A command is a line that runs a script or a tool: in a README (code blocks, inline code or
prose naming a script: "see `evaluate.sh`"), a shell script, a Makefile or Dockerfile, or a
notebook `!` line. What it runs (script paths, `python -m` modules) and the words around it
(its arguments, e.g. `--mode=test`, and the README heading it sits under, e.g. "Training")
say what it is for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from review.codebases.scan.python import notebook_cells
from review.codebases.scan.words import is_comment, words

SCRIPT = re.compile(r"(?:^|(?<=[\s;&|(`'\"=:\[]))((?:[\w.${}~@+-]+/)*[\w${}@+-][\w.${}@+-]*\.(?:py|sh|bash|pl|lua|ipynb|jar))"
                    r"(?=$|[\s;&|)`'\",:\]])")
MODULE = re.compile(r"\bpython[\d.]*\s+(?:-[A-Za-z]\s+)*-m\s+([A-Za-z_][\w.]*)")
HEADING_MD = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
HEADING_BOLD = re.compile(r"^\s*(?:\*\*|__)([^*_]{2,80})(?:\*\*|__)\s*:?\s*$")
UNDERLINE = re.compile(r"^\s*([=\-~^\"'#+])\1{2,}\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
ARG_WORDS = re.compile(r"(?:^|\s)--?([A-Za-z][\w-]*)(?:[=\s]+([A-Za-z][\w-]*))?")


@dataclass
class Command:
    """One line that runs scripts or tools."""

    file: str
    line: int
    text: str
    kind: str  # readme | shell | notebook
    cell: int | None = None
    heading: str = ""
    scripts: list[str] = field(default_factory=list)  # path tokens as written
    modules: list[str] = field(default_factory=list)  # `python -m` modules

    @property
    def arg_words(self) -> list[str]:
        out: list[str] = []
        for m in ARG_WORDS.finditer(self.text):
            out.extend(words(m.group(1)))
            if m.group(2):
                out.extend(words(m.group(2)))
        return out

    @property
    def heading_words(self) -> list[str]:
        return words(self.heading)


def scripts_in(text: str) -> list[str]:
    return [m.group(1) for m in SCRIPT.finditer(text)]


def readme_headings(content: str) -> list[str]:
    """The heading each line of a README sits under (markdown, setext, rst, bold lines)."""
    out: list[str] = []
    heading = ""
    lines = content.splitlines()
    in_fence = False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if FENCE.match(line):
            in_fence = not in_fence
        elif in_fence:
            pass
        elif (m := HEADING_MD.match(line)) or (m := HEADING_BOLD.match(line)):
            heading = m.group(1)
        elif line.strip() and UNDERLINE.match(nxt) and not UNDERLINE.match(line):
            heading = line.strip()
        out.append(heading)
    return out


def readme_commands(rel: str, content: str, headings: list[str],
                    consoles: Mapping[str, str] | None = None) -> list[Command]:
    """Every README line that names a script (or runs a console script of the repository),
    with the heading it sits under."""
    out: list[Command] = []
    for i, line in enumerate(content.splitlines(), 1):
        cmd = _command(rel, i, line, "readme", None, headings[i - 1] if i <= len(headings) else "", consoles)
        if cmd is not None:
            out.append(cmd)
    return out


def shell_commands(rel: str, content: str, consoles: Mapping[str, str] | None = None) -> list[Command]:
    out = []
    for i, line in enumerate(content.splitlines(), 1):
        if is_comment(line):
            continue
        cmd = _command(rel, i, line, "shell", None, "", consoles)
        if cmd is not None:
            out.append(cmd)
    return out


def notebook_commands(rel: str, content: str) -> list[Command]:
    """`!` lines and `%%bash` cells, under the notebook's latest markdown heading."""
    out: list[Command] = []
    heading = ""
    for n, kind, source in notebook_cells(content) or []:
        lines = source.splitlines()
        if kind == "markdown":
            for line in lines:
                if m := HEADING_MD.match(line):
                    heading = m.group(1)
            continue
        if kind != "code":
            continue
        magic = bool(lines) and lines[0].lstrip().startswith(("%%bash", "%%sh", "%%script"))
        for i, line in enumerate(lines, 1):
            stripped = line.lstrip()
            if magic or stripped.startswith(("!", "%")):
                cmd = _command(rel, i, stripped.lstrip("!%"), "notebook", n, heading)
                if cmd is not None:
                    out.append(cmd)
    return out


CONSOLE_SCRIPT = re.compile(r"""['"]?([A-Za-z][\w.-]*)['"]?\s*=\s*['"]?([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_]\w*)""")
PROMPT = re.compile(r"^\s*(?:[$>]\s+)?([A-Za-z][\w.-]*)(?:\s|$)")


def console_scripts(content: str) -> dict[str, str]:
    """`name = package.module:function` entries of setup.py / setup.cfg / pyproject.toml:
    the commands a `pip install` of the repository puts on PATH, and the module each runs."""
    return {m.group(1): m.group(2) for m in CONSOLE_SCRIPT.finditer(content) if "." in m.group(2) or "_" in m.group(2)}


def console_functions(content: str) -> dict[str, str]:
    """module -> the function a console script calls (`module:function`): the command runs that
    function, not the module's top level, so the function is the entry point to follow."""
    return {m.group(2): m.group(3) for m in CONSOLE_SCRIPT.finditer(content) if "." in m.group(2) or "_" in m.group(2)}


def _command(rel: str, line_no: int, line: str, kind: str, cell: int | None, heading: str,
             consoles: Mapping[str, str] | None = None) -> Command | None:
    scripts = scripts_in(line)
    modules = [m.group(1) for m in MODULE.finditer(line)]
    first = PROMPT.match(line)
    if consoles and first and first.group(1) in consoles:
        modules.append(consoles[first.group(1)])  # `calc-scores --metrics rouge` runs summ_eval.calc_scores
    if not scripts and not modules:
        return None
    return Command(rel, line_no, line.strip(), kind, cell, heading, scripts, modules)


