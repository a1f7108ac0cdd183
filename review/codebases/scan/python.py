"""Python source (a .py file or a notebook's code cells) as the scan needs it: what it
defines, imports, references and runs.

Python's `ast` reads it when it can. A file `ast` cannot parse (Python 2 print statements,
a syntax error, a null byte) is read by a line-based fallback that finds the same things
with regular expressions and indentation: less exact, and said so in the evidence
(`parser: regex` and the error). Nothing is executed and nothing is imported.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from review.codebases.scan.words import is_comment

MAX_STRING = 300


@dataclass(frozen=True)
class Def:
    """A function or class, `qual` its dotted path inside the module ("Cls.method")."""

    qual: str
    name: str
    kind: str  # function | class
    start: int
    end: int
    parent: str  # qual of the enclosing def, "" at module level
    parent_kind: str  # module | class | function


@dataclass(frozen=True)
class Binding:
    """A name an import statement binds: `from pyrouge import Rouge155` binds Rouge155."""

    name: str  # the local name ("*" for a star import)
    module: str  # the module as written, without leading dots
    attr: str | None  # the imported name of a from-import
    level: int  # leading dots of a relative import
    line: int
    scope: str

    @property
    def dotted(self) -> str:
        """What the bound name stands for: `pkg.mod` or `pkg.mod.name`."""
        return ".".join(x for x in (self.module, self.attr) if x)


@dataclass(frozen=True)
class Ref:
    """A use of an identifier: as a bare name, or as an attribute (`root.x.name`)."""

    scope: str
    line: int
    stmt: tuple[int, int]  # lines of the statement holding it
    root: str | None = None  # for an attribute: the name the chain starts with


@dataclass
class ModuleInfo:
    rel: str
    parser: str  # ast | regex
    error: str | None  # why ast could not read it
    lines: list[str]
    cell_of: list[tuple[int, int]] | None = None  # notebook: (cell, line in cell) per line
    defs: list[Def] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    names: dict[str, list[Ref]] = field(default_factory=dict)
    attrs: dict[str, list[Ref]] = field(default_factory=dict)
    assigned: dict[int, list[str]] = field(default_factory=dict)  # statement start line -> names it assigns
    strings: list[tuple[str, int, str]] = field(default_factory=list)  # (scope, line, value)
    getattrs: list[tuple[str, int, str]] = field(default_factory=list)  # getattr(receiver, <not a constant>)
    has_main: bool = False
    top_calls: bool = False  # module-level call statements: it runs something when executed

    def __post_init__(self) -> None:
        self._starts: list[int] = []
        self._by_qual: dict[str, Def] = {}
        self._identifiers: set[str] | None = None

    def index(self) -> None:
        self.defs.sort(key=lambda d: (d.start, -d.end))
        self._starts = [d.start for d in self.defs]
        self._by_qual = {d.qual: d for d in self.defs}

    def definition(self, qual: str) -> Def | None:
        return self._by_qual.get(qual)

    def scope_at(self, line: int) -> str:
        """The innermost function or class holding a line ("" at module level)."""
        best = ""
        for i in range(bisect_right(self._starts, line) - 1, -1, -1):
            d = self.defs[i]
            if d.start <= line <= d.end:
                if len(d.qual) > len(best):
                    best = d.qual
        return best

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1:end])

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    def where(self, line: int) -> tuple[int | None, int]:
        """(cell, line in cell) for a notebook, (None, line) for a file."""
        if self.cell_of and 0 < line <= len(self.cell_of):
            return self.cell_of[line - 1]
        return None, line

    def identifiers(self) -> set[str]:
        """Every name the module uses, defines or imports."""
        if self._identifiers is None:
            ids = set(self.names) | set(self.attrs) | {d.name for d in self.defs}
            for b in self.bindings:
                ids.update(x for x in (b.name, b.attr, *b.module.split(".")) if x)
            self._identifiers = ids
        return self._identifiers

    def refs_to(self, name: str) -> list[Ref]:
        return self.names.get(name, []) + self.attrs.get(name, [])


# ------------------------------------------------------------------ reading

def parse_module(rel: str, text: str, interesting: Callable[[str], bool]) -> ModuleInfo:
    """A Python file; `interesting(s)` says which string constants to keep (script paths...)."""
    return _parse(rel, text.splitlines(), None, interesting)


def parse_notebook(rel: str, text: str, interesting: Callable[[str], bool]) -> ModuleInfo | None:
    """A notebook's code cells as one module (`!`/`%` lines blanked: they are commands), or
    None when the JSON is broken."""
    cells = notebook_cells(text)
    if cells is None:
        return None
    lines: list[str] = []
    cell_of: list[tuple[int, int]] = []
    for n, kind, source in cells:
        if kind != "code":
            continue
        body = source.splitlines()
        magic_cell = bool(body) and body[0].lstrip().startswith("%%")
        for i, line in enumerate(body, 1):
            blank = magic_cell or line.lstrip().startswith(("!", "%"))
            lines.append("" if blank else line)
            cell_of.append((n, i))
    return _parse(rel, lines, cell_of, interesting)


@lru_cache(maxsize=32)
def notebook_cells(text: str) -> list[tuple[int, str, str]] | None:
    """(cell number, cell type, source) of nbformat 3 and 4 notebooks; None for broken JSON.
    Cached: several steps read the same notebook (callers must not modify the list)."""
    try:
        nb = json.loads(text)
    except ValueError:
        return None
    if not isinstance(nb, dict):
        return None
    cells = nb.get("cells")
    if cells is None:  # nbformat 3
        cells = [c for ws in nb.get("worksheets", []) if isinstance(ws, dict) for c in ws.get("cells", [])]
    out = []
    for n, cell in enumerate(cells if isinstance(cells, list) else [], 1):
        if not isinstance(cell, dict):
            continue
        src = cell.get("source", cell.get("input", ""))
        text_ = "".join(str(s) for s in src) if isinstance(src, list) else str(src)
        out.append((n, str(cell.get("cell_type", "")), text_))
    return out


def _parse(rel: str, lines: list[str], cell_of: list[tuple[int, int]] | None,
           interesting: Callable[[str], bool]) -> ModuleInfo:
    source = "\n".join(lines)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        reason = f"{type(exc).__name__}: {getattr(exc, 'msg', None) or exc}{where}"
        info = ModuleInfo(rel, "regex", reason[:200], lines, cell_of)
        _RegexReader(info, interesting).read()
    else:
        info = ModuleInfo(rel, "ast", None, lines, cell_of)
        try:
            _AstReader(info, interesting).read(tree)
        except RecursionError:  # pathologically nested code: read it line by line instead
            info = ModuleInfo(rel, "regex", "RecursionError: nested too deeply", lines, cell_of)
            _RegexReader(info, interesting).read()
    info.index()
    return info


class _AstReader:
    """One pass over the tree with an explicit stack (much cheaper than a NodeVisitor on
    notebooks of thousands of lines): each entry carries its scope and statement."""

    def __init__(self, info: ModuleInfo, interesting: Callable[[str], bool]):
        self.info = info
        self.interesting = interesting

    def read(self, tree: ast.AST) -> None:
        info = self.info
        names, attrs, strings = info.names, info.attrs, info.strings
        stack: list[tuple[ast.AST, str, str, tuple[int, int]]] = [(tree, "", "module", (1, 1))]
        pop, push = stack.pop, stack.append
        while stack:
            node, scope, kind, stmt = pop()
            t = type(node)
            if t is ast.Name:
                if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                    names.setdefault(node.id, []).append(Ref(scope, node.lineno, stmt))  # type: ignore[attr-defined]
                continue
            if t is ast.Constant:
                v = node.value  # type: ignore[attr-defined]
                if type(v) is str and len(v) <= MAX_STRING and self.interesting(v):
                    strings.append((scope, node.lineno, v))  # type: ignore[attr-defined]
                continue
            if t is ast.Attribute:
                root: ast.AST = node.value  # type: ignore[attr-defined]
                while type(root) in _CHAIN:
                    root = root.func if type(root) is ast.Call else root.value  # type: ignore[attr-defined]
                attrs.setdefault(node.attr, []).append(  # type: ignore[attr-defined]
                    Ref(scope, node.lineno, stmt, root.id if type(root) is ast.Name else ""))  # type: ignore[attr-defined]
                push((node.value, scope, kind, stmt))  # type: ignore[attr-defined]
                continue
            if isinstance(node, ast.stmt):
                stmt = _span(node)
                if t in _DEFS:
                    self._def(node, scope, kind, stmt, push)  # type: ignore[arg-type]
                    continue
                self._statement(node, t, scope, kind)
            elif t is ast.Call:
                self._call(node, scope)  # type: ignore[arg-type]
            for field in node._fields:
                v = getattr(node, field, None)
                if type(v) is list:
                    for x in reversed(v):
                        if isinstance(x, ast.AST):
                            push((x, scope, kind, stmt))
                elif isinstance(v, ast.AST):
                    push((v, scope, kind, stmt))

    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: str, kind: str,
             stmt: tuple[int, int], push: Callable[[Any], None]) -> None:
        own = "class" if type(node) is ast.ClassDef else "function"
        qual = f"{scope}.{node.name}" if scope else node.name
        self.info.defs.append(Def(qual, node.name, own, node.lineno, node.end_lineno or node.lineno, scope, kind))
        for child in reversed(node.body):
            push((child, qual, own, stmt))
        outer: list[ast.AST] = list(node.decorator_list)
        if type(node) is ast.ClassDef:
            outer += node.bases + [k.value for k in node.keywords]  # type: ignore[union-attr]
        else:
            outer.append(node.args)  # type: ignore[union-attr]
            if node.returns is not None:  # type: ignore[union-attr]
                outer.append(node.returns)  # type: ignore[union-attr]
        for child in outer:
            push((child, scope, kind, stmt))

    def _statement(self, node: ast.stmt, t: type, scope: str, kind: str) -> None:
        info = self.info
        if t is ast.Import:
            for a in node.names:  # type: ignore[attr-defined]
                info.bindings.append(Binding(a.asname or a.name.split(".")[0], a.name, None, 0, node.lineno, scope))
        elif t is ast.ImportFrom:
            for a in node.names:  # type: ignore[attr-defined]
                info.bindings.append(Binding(a.asname or a.name, node.module or "",  # type: ignore[attr-defined]
                                             a.name if a.name != "*" else None, node.level or 0,  # type: ignore[attr-defined]
                                             node.lineno, scope))
        elif t is ast.If:
            if scope == "" and _is_main_guard(node.test):  # type: ignore[attr-defined]
                info.has_main = True
        elif t is ast.Expr:
            if kind == "module" and type(node.value) is ast.Call:  # type: ignore[attr-defined]
                info.top_calls = True
        elif t is ast.Assign:
            self._assigned(list(node.targets), node)  # type: ignore[attr-defined]
        elif t is ast.AnnAssign:
            self._assigned([node.target], node)  # type: ignore[attr-defined]
        elif t is ast.With or t is ast.AsyncWith:
            self._assigned([i.optional_vars for i in node.items if i.optional_vars is not None], node)  # type: ignore[attr-defined]

    def _call(self, node: ast.Call, scope: str) -> None:
        f = node.func
        if (type(f) is ast.Name and f.id == "getattr" and len(node.args) >= 2
                and type(node.args[0]) is ast.Name and type(node.args[1]) is not ast.Constant):
            self.info.getattrs.append((scope, node.lineno, node.args[0].id))  # type: ignore[attr-defined]

    def _assigned(self, targets: list[ast.AST], node: ast.stmt) -> None:
        names: list[str] = []
        todo = list(targets)
        while todo:
            t = todo.pop()
            if isinstance(t, ast.Name):
                names.append(t.id)
            elif isinstance(t, ast.Attribute):
                names.append(t.attr)
            elif isinstance(t, (ast.Tuple, ast.List)):
                todo.extend(t.elts)
            elif isinstance(t, ast.Starred):
                todo.append(t.value)
        if names:
            self.info.assigned.setdefault(node.lineno, []).extend(names)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CHAIN = (ast.Attribute, ast.Call, ast.Subscript)


def _span(node: ast.stmt) -> tuple[int, int]:
    """A simple statement's lines; a compound statement's header only."""
    end = node.end_lineno or node.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = max(node.lineno, body[0].lineno - 1)
    return node.lineno, end


def _is_main_guard(test: ast.AST) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


# ------------------------------------------------------------------ the fallback

_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")
_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?\s*([\w\s,*]*)")
_IDENT = re.compile(r"(\.\s*)?\b([A-Za-z_]\w*)\b")
_CHAIN_ROOT = re.compile(r"\b([A-Za-z_]\w*)(?:\s*\.\s*\w+)*\s*\.\s*$")
_ASSIGN = re.compile(r"^\s*([\w.,\s]+?)\s*=(?!=)")
_MAIN = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")
_TOP_CALL = re.compile(r"^[A-Za-z_][\w.]*\s*\(")
_KEYWORDS = frozenset("and as assert async await break class continue def del elif else except exec finally for from "
                      "global if import in is lambda nonlocal not or pass print raise return try while with yield "
                      "True False None".split())


def _mask(lines: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """The lines with comments removed and string contents blanked (docstrings too), and
    the strings with the line they start on. Python's tokenizer reads Python 2 as well; if
    it gives up, a quote-counting scan does the same less carefully."""
    masked = list(lines)
    strings: list[tuple[int, str]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _mask_simple(lines)
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        (r0, c0), (r1, c1) = tok.start, tok.end
        if tok.type == tokenize.STRING:
            strings.append((r0, _literal(tok.string)))
        for r in range(r0, r1 + 1):
            line = masked[r - 1]
            a = c0 if r == r0 else 0
            b = c1 if r == r1 else len(line)
            keep = '""' if tok.type == tokenize.STRING and r == r0 else ""
            masked[r - 1] = line[:a] + keep + " " * max(0, b - a - len(keep)) + line[b:]
    return masked, strings


def _mask_simple(lines: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    masked, strings = [], []
    in_triple: str | None = None
    for n, line in enumerate(lines, 1):
        if in_triple:
            end = line.find(in_triple)
            if end < 0:
                masked.append("")
                continue
            line = " " * (end + 3) + line[end + 3:]
            in_triple = None
        out = ""
        i = 0
        while i < len(line):
            c = line[i]
            if c == "#":
                break
            if line.startswith(('"""', "'''"), i):
                q = line[i:i + 3]
                end = line.find(q, i + 3)
                if end < 0:
                    in_triple = q
                    strings.append((n, line[i + 3:]))
                    break
                strings.append((n, line[i + 3:end]))
                out += '""'
                i = end + 3
                continue
            if c in "'\"":
                end = i + 1
                while end < len(line) and line[end] != c:
                    end += 2 if line[end] == "\\" else 1
                strings.append((n, line[i + 1:end]))
                out += '""'
                i = end + 1
                continue
            out += c
            i += 1
        masked.append(out)
    return masked, strings


def _literal(token: str) -> str:
    body = token.lstrip("rRbBuUfF")
    for q in ('"""', "'''", '"', "'"):
        if body.startswith(q) and body.endswith(q) and len(body) >= 2 * len(q):
            return body[len(q):-len(q)]
    return body


def _statements(codes: list[str]) -> list[tuple[int, int]]:
    """Per line, the lines of the statement it belongs to (open brackets continue it)."""
    spans: list[tuple[int, int]] = []
    start, depth = 1, 0
    for n, code in enumerate(codes, 1):
        if depth <= 0:
            start, depth = n, 0
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        spans.append((start, n))
        if depth <= 0 or n - start > 30:
            for i in range(start, n + 1):
                spans[i - 1] = (start, n)
            depth = 0
    return spans


class _RegexReader:
    """Indentation and regular expressions: good enough to follow imports and calls in code
    `ast` rejects (mostly Python 2)."""

    def __init__(self, info: ModuleInfo, interesting: Callable[[str], bool]):
        self.info = info
        self.interesting = interesting

    def read(self) -> None:
        lines = self.info.lines
        codes, strings = _mask(lines)
        self._defs(codes)
        self.info.index()
        for n, value in strings:
            if self.interesting(value):
                self.info.strings.append((self.info.scope_at(n), n, value))
        for n, (code, span) in enumerate(zip(codes, _statements(codes)), 1):
            if code.strip():
                self._line(n, code, self.info.scope_at(n), span)
                if _MAIN.search(lines[n - 1]) and self.info.scope_at(n) == "":
                    self.info.has_main = True

    def _defs(self, lines: list[str]) -> None:
        stack: list[tuple[int, str, str, int]] = []  # (indent, qual, kind, start)
        opened: list[Def] = []

        def close(upto: int, indent: int) -> None:
            while stack and stack[-1][0] >= indent:
                ind, qual, kind, start = stack.pop()
                parent = stack[-1][1] if stack else ""
                parent_kind = stack[-1][2] if stack else "module"
                opened.append(Def(qual, qual.rsplit(".", 1)[-1], kind, start, upto, parent, parent_kind))

        last_code = 0
        for n, line in enumerate(lines, 1):
            if not line.strip() or is_comment(line):
                continue
            indent = len(line) - len(line.lstrip())
            m = _DEF.match(line)
            if stack and indent <= stack[-1][0]:
                close(last_code, indent)
            if m:
                parent = stack[-1][1] if stack else ""
                qual = f"{parent}.{m.group(3)}" if parent else m.group(3)
                stack.append((indent, qual, "function" if m.group(2) == "def" else "class", n))
            last_code = n
        close(last_code, -1)
        self.info.defs.extend(opened)

    def _line(self, n: int, code: str, scope: str, stmt: tuple[int, int]) -> None:
        info = self.info
        m = _IMPORT.match(code)
        if m:
            for part in m.group(1).split(","):
                bits = part.split()
                if bits:
                    module = bits[0]
                    bound = bits[2] if len(bits) == 3 else module.split(".")[0]
                    info.bindings.append(Binding(bound, module, None, 0, n, scope))
            return
        m = _FROM.match(code)
        if m:
            for part in m.group(3).replace("(", " ").split(","):
                bits = part.split()
                if bits:
                    name = bits[0]
                    info.bindings.append(Binding(bits[2] if len(bits) == 3 else name, m.group(2),
                                                 name if name != "*" else None, len(m.group(1)), n, scope))
            return
        if _DEF.match(code):
            head = code.split("(", 1)
            code = "(" + head[1] if len(head) == 2 else ""
        if scope == "" and _TOP_CALL.match(code):
            info.top_calls = True
        bare = code
        am = _ASSIGN.match(bare)
        if am:
            info.assigned.setdefault(stmt[0], []).extend(
                t.strip().rsplit(".", 1)[-1] for t in am.group(1).split(",") if t.strip())
        for im in _IDENT.finditer(bare):
            name = im.group(2)
            if name in _KEYWORDS:
                continue
            if im.group(1):
                root = _CHAIN_ROOT.search(bare[: im.start()] + ".")
                info.attrs.setdefault(name, []).append(Ref(scope, n, stmt, root.group(1) if root else ""))
            else:
                info.names.setdefault(name, []).append(Ref(scope, n, stmt))
        gm = re.search(r"\bgetattr\s*\(\s*(\w+)\s*,\s*(?!['\"])", bare)
        if gm:
            info.getattrs.append((scope, n, gm.group(1)))
