"""The repository as a graph of code: who calls, imports or runs what.

A node is a place code runs from: `(file, "")` a module's top level (or a whole shell
script), `(file, "Cls.method")` a function or class, `(file, "<entry>")` a script run on
its own, `(README, "cmd:N")` a documented command. `callers(node)` answers "what runs this?"
by reading only the files that mention its name (a substring test first, then Python's
`ast`), so a repository is parsed only as far as the evaluation path leads.

How a call is resolved, from most to least certain: a name imported from the module that
defines it (also through a package's `__init__`), an attribute of such a module, a
method called on an object in a file that imports the defining module (or in the same
file), `getattr(module, name)` with a computed name (every function of that module),
and a name defined exactly once in the repository called anywhere.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable

from review.codebases.catalog import Catalog
from review.codebases.scan.commands import (Command, console_functions, console_scripts, notebook_commands, readme_commands, readme_headings,
                                            scripts_in, shell_commands)
from review.codebases.scan.files import TextFile
from review.codebases.scan.python import Binding, ModuleInfo, notebook_cells, parse_module, parse_notebook
from review.codebases.scan.words import words

Node = tuple[str, str]
ENTRY = "<entry>"
CMD = "cmd:"
SCRIPT_EXT = (".py", ".sh", ".bash", ".pl", ".lua", ".ipynb", ".jar")
LUA_REQUIRE = re.compile(r"""\brequire\s*\(?\s*['"]([\w.]+)['"]""")
QUOTED = re.compile(r"""(['"])([^'"\n]{1,300})\1""")
WORD = re.compile(r"[A-Za-z_]\w*")
DEF_NAME = re.compile(r"^[ \t]*(?:async\s+)?(?:def|class)\s+(\w+)", re.M)
MIN_DISTINCT = 6  # a name shorter than this is never resolved by being unique


@dataclass(frozen=True)
class Caller:
    node: Node
    line: int | None
    how: str  # import | call | command | script | entry | class | dispatch


PACKAGING_FILES = frozenset({"setup.py", "setup.cfg", "pyproject.toml"})  # where console scripts are declared


def _names_scripts(text: str) -> bool:
    return any(ext in text for ext in SCRIPT_EXT) or "-m " in text


class Repo:
    """Index of one checkout: files, commands, modules (parsed on demand) and call resolution."""

    def __init__(self, texts: list[TextFile], paths: set[str], catalog: Catalog):
        self.catalog = catalog
        self.files = {t.rel: t for t in texts}
        self.paths = paths
        self.dirs = {p.rsplit("/", 1)[0] for p in paths if "/" in p}
        self.dirs |= {d.rsplit("/", k)[0] for d in list(self.dirs) for k in range(1, d.count("/") + 1)}
        self.by_basename: dict[str, list[str]] = {}
        for p in sorted(paths):
            self.by_basename.setdefault(p.rsplit("/", 1)[-1], []).append(p)
        self.code_files = [t.rel for t in texts if t.kind in ("python", "notebook")]
        self._modules: dict[str, ModuleInfo | None] = {}
        self._with_word: dict[str, list[str]] = {}
        self._code_text: dict[str, str] = {}
        self._words: dict[str, list[str]] | None = None
        self._word_sets: dict[str, set[str]] = {}
        self._def_counts: dict[str, int] = {}
        self._target_cache: dict[tuple[str, int], str | None] = {}
        self.vendored_files: set[str] = set()  # copies of a package's code (set by the evidence collector)
        self.vendored_cells: dict[str, set[int]] = {}  # notebook -> cells holding such a copy
        self.vendored_dirs = self._vendored_dirs()
        self.commands: list[Command] = []
        self.headings: dict[str, list[str]] = {}  # README -> the heading of each line
        self._script_refs: dict[str, list[Caller]] = {}
        self._def_refs: dict[Node, list[Caller]] = {}  # functions documented commands call (console scripts)
        self.unresolved_scripts: list[tuple[Node, int | None, str]] = []
        self.parse_failures: dict[str, str] = {}
        self._callers: dict[Node, tuple[Caller, ...]] = {}
        self._read_commands(texts)

    # ------------------------------------------------------------------ files and modules

    def module(self, rel: str) -> ModuleInfo | None:
        if rel not in self._modules:
            f = self.files.get(rel)
            info = None
            if f is not None and f.kind == "python":
                info = parse_module(rel, f.content, self.interesting)
            elif f is not None and f.kind == "notebook":
                info = parse_notebook(rel, f.content, self.interesting)
            if info is not None and info.parser == "regex":
                self.parse_failures[rel] = info.error or "not Python 3"
            self._modules[rel] = info
        return self._modules[rel]

    def parsed(self) -> list[str]:
        """The Python files and notebooks parsed so far (those the scan had a reason to read)."""
        return [rel for rel, info in self._modules.items() if info is not None]

    def interesting(self, s: str) -> bool:
        lower = s.lower()
        return self.catalog.prelim in lower or any(ext in lower for ext in SCRIPT_EXT) or "/" in s

    def code_text(self, rel: str) -> str:
        """The code of a Python file, or of a notebook's code cells (not its outputs)."""
        if rel not in self._code_text:
            f = self.files[rel]
            if f.kind == "notebook":
                cells = notebook_cells(f.content) or []
                self._code_text[rel] = "\n".join(src for _, kind, src in cells if kind == "code")
            else:
                self._code_text[rel] = f.content
        return self._code_text[rel]

    def has_name(self, name: str) -> bool:
        """Is there a module file or folder of this name anywhere in the checkout?"""
        return bool(self.by_basename.get(f"{name}.py")) or name in self.dirs or any(
            d.endswith("/" + name) for d in self.dirs)

    def is_vendored(self, rel: str) -> bool:
        return rel in self.vendored_files or any(rel.startswith(d + "/") for d in self.vendored_dirs)

    def _vendored_dirs(self) -> set[str]:
        """Folders named after a catalogued package's module, or after a framework or
        third-party folder the catalog lists (`[roles] vendored_trees`: a copy of
        transformers, fairseq, OpenNMT-py, Texar, `third_party`): copies of someone else's
        code, whose own scripts, READMEs and `__main__` blocks are not the repository's
        entry points. The repository's own code calling into them is still followed."""
        tops = {m.split(".")[0].lower() for p in self.catalog.packages for m in p.imports}
        trees = self.catalog.roles.vendored_trees
        out = set()
        for d in self.dirs:
            name = d.rsplit("/", 1)[-1].lower()
            if name in tops or trees.match(name):
                out.add(d)
        return out

    def is_unit_test(self, rel: str) -> bool:
        """A `test_*.py` / `*_test.py` file importing a unit-test framework: it checks the
        code, it does not produce the reported scores, so it is no entry point."""
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
        if not (stem.startswith("test_") or stem.endswith("_test") or stem == "tests"):
            return False
        info = self.module(rel)
        return bool(info) and any(self.catalog.roles.unit_test_imports.match(b.dotted.split(".")[0].lower())
                                  for b in info.bindings if b.level == 0 and b.dotted)  # type: ignore[union-attr]

    # ------------------------------------------------------------------ commands and scripts

    def _read_commands(self, texts: list[TextFile]) -> None:
        consoles: dict[str, str] = {}
        self._console_bases: dict[str, str] = {}  # module -> the folder of the packaging file declaring it
        self._console_funcs: dict[str, str] = {}  # module -> the function its console script calls
        for t in texts:
            if t.rel.rsplit("/", 1)[-1] in PACKAGING_FILES and not self.is_vendored(t.rel):
                found = console_scripts(t.content)
                consoles.update(found)
                self._console_funcs.update(console_functions(t.content))
                for module in found.values():
                    self._console_bases.setdefault(module, t.rel.rsplit("/", 1)[0] if "/" in t.rel else "")
        self.console_scripts = consoles
        for t in texts:
            if self.is_vendored(t.rel):
                continue  # a copied framework's README and scripts document the framework, not this repository
            runs = _names_scripts(t.content) or any(name in t.content for name in consoles)
            if t.kind == "readme":
                cmds = readme_commands(t.rel, t.content, self.headings_of(t.rel), consoles) if runs else []
            elif t.kind == "shell" and runs:
                cmds = shell_commands(t.rel, t.content, consoles)
            elif t.kind == "notebook" and ("!" in t.content or "%%" in t.content):
                cmds = notebook_commands(t.rel, t.content)
            else:
                cmds = []
            for c in cmds:
                idx = len(self.commands)
                self.commands.append(c)
                caller = (c.file, f"{CMD}{idx}") if c.kind == "readme" else (c.file, "")
                for token in c.scripts:
                    self._add_script_ref(caller, c.line, token, c.file)
                for module in c.modules:
                    target = self.resolve_module(c.file, module, 0, from_command=True)
                    if target is None and module in self._console_bases:  # an installed console script
                        base = self._console_bases[module]
                        target = self.resolve_module(f"{base}/setup.py" if base else "setup.py", module, 0,
                                                     from_command=True)
                    if target is not None:
                        self._script_refs.setdefault(target, []).append(Caller(caller, c.line, "command"))
                        if module in self._console_funcs:  # the console script calls module:function
                            node = (target, self._console_funcs[module])
                            self._def_refs.setdefault(node, []).append(Caller(caller, c.line, "command"))
            if t.kind == "code":
                self._code_refs(t)

    def _code_refs(self, t: TextFile) -> None:
        """Lua `require 'a.b'` and quoted script paths in other languages' code."""
        for n, line in enumerate(t.content.splitlines(), 1):
            for m in LUA_REQUIRE.finditer(line):
                target = self._first([m.group(1).replace(".", "/") + ext for ext in (".lua", ".py")], t.rel)
                if target:
                    self._script_refs.setdefault(target, []).append(Caller((t.rel, ""), n, "import"))
            for q in QUOTED.finditer(line):
                for token in scripts_in(q.group(2)):
                    self._add_script_ref((t.rel, ""), n, token, t.rel)

    def _add_script_ref(self, caller: Node, line: int | None, token: str, from_rel: str) -> None:
        targets = self.resolve_script(from_rel, token)
        if not targets:
            self.unresolved_scripts.append((caller, line, token))
        for target in targets:
            self._script_refs.setdefault(target, []).append(Caller(caller, line, "script"))

    def _string_refs(self, rel: str) -> Iterable[Caller]:
        """Python strings naming the script (`subprocess.call('python eval.py')`)."""
        name = rel.rsplit("/", 1)[-1]
        for f in self.code_files:
            if f == rel or name not in self.files[f].content:
                continue
            info = self.module(f)
            for scope, line, value in info.strings if info else ():
                if name in value and any(rel in self.resolve_script(f, t, into_copies=False) for t in scripts_in(value)):
                    yield Caller((f, scope), line, "script")

    def unresolved_strings(self, rel: str, scope: str) -> list[tuple[int, str]]:
        """Script paths in a Python scope's strings that name no file of the repository."""
        info = self.module(rel)
        return [(line, t) for s, line, value in (info.strings if info else ()) if s == scope
                for t in scripts_in(value) if not self.resolve_script(rel, t)]

    def resolve_script(self, from_rel: str, token: str, into_copies: bool = True) -> list[str]:
        """The files a script path written in `from_rel` may mean: relative to it, to the
        root, else every file the path is a suffix of (variables like `$ROOT/` dropped)."""
        clean = re.sub(r"\$\{?\w+\}?/?|~/", "", token).lstrip("./") if token else ""
        clean = re.sub(r"^(?:\.\./)+", "", clean)
        if not clean or "$" in clean or "{" in clean:
            return []
        base = from_rel.rsplit("/", 1)[0] if "/" in from_rel else ""
        for cand in (os.path.normpath(f"{base}/{token}") if base else os.path.normpath(token), clean):
            cand = cand.lstrip("./")
            if cand in self.paths:
                return [cand]
        name = clean.rsplit("/", 1)[-1]
        found = [p for p in self.by_basename.get(name, []) if p == clean or p.endswith("/" + clean)]
        own = [p for p in found if not self.is_vendored(p)]
        if into_copies:  # a command: our own file of that name if there is one, else a copy's
            return own or found
        # a path a string of our code names but our tree lacks is not the copy a vendored
        # framework carries (Hi_MAP's help text naming tools/test_rouge.py is not OpenNMT-py's)
        return [p for p in found if not self.is_vendored(p) or self._same_tree(p, from_rel)]

    def _same_tree(self, rel: str, other: str) -> bool:
        return any(rel.startswith(d + "/") and other.startswith(d + "/") for d in self.vendored_dirs)

    def _first(self, candidates: Iterable[str], from_rel: str) -> str | None:
        base = from_rel.rsplit("/", 1)[0] if "/" in from_rel else ""
        for c in candidates:
            for cand in ((f"{base}/{c}" if base else c), c):
                if cand in self.paths:
                    return cand
        return None

    def headings_of(self, rel: str) -> list[str]:
        if rel not in self.headings:
            self.headings[rel] = readme_headings(self.files[rel].content)
        return self.headings[rel]

    def command_node(self, rel: str, line: int, text: str, cell: int | None) -> Node:
        """The node of a documented command on this line (made if the line runs no script)."""
        for idx, c in enumerate(self.commands):
            if c.file == rel and c.line == line and c.kind == "readme" and c.cell == cell:
                return (rel, f"{CMD}{idx}")
        heading = self.headings_of(rel) if rel in self.files and self.files[rel].kind == "readme" else []
        self.commands.append(Command(rel, line, text.strip(), "readme", cell,
                                     heading[line - 1] if 0 < line <= len(heading) else ""))
        return (rel, f"{CMD}{len(self.commands) - 1}")

    def copy_nodes(self, rel: str, cell: int) -> list[Node]:
        """Where a vendored copy can be called: its top-level functions and classes (those
        of one notebook cell) and, for a file, its module level."""
        info = self.module(rel)
        if info is None:
            return [(rel, "")]
        if cell:
            lines = [n for n, (c, _) in enumerate(info.cell_of or [], 1) if c == cell]
            lo, hi = (min(lines), max(lines)) if lines else (0, -1)
            return [(rel, d.qual) for d in info.defs if d.parent == "" and lo <= d.start <= hi]
        defs = [(rel, d.qual) for d in info.defs if d.parent == ""]
        return defs or [(rel, "")]  # a copy is used when its functions are called (a script copy: when run)

    # ------------------------------------------------------------------ imports

    def resolve_module(self, from_rel: str, module: str, level: int, *, from_command: bool = False) -> str | None:
        """The repository file a module name means when imported from `from_rel`: its own
        folder and every folder above it are searched (scripts are run from many places)."""
        parts = [p for p in module.split(".") if p]
        here = from_rel.rsplit("/", 1)[0].split("/") if "/" in from_rel else []
        if level:
            if level - 1 > len(here):
                return None
            bases = ["/".join(here[: len(here) - (level - 1)])]
        else:
            bases = ["/".join(here[:k]) for k in range(len(here), -1, -1)] + (["src"] if "src" in self.dirs else [])
        for base in bases:
            stem = "/".join(x for x in (base, *parts) if x)
            if not stem:
                continue
            installed = base == "src" and "src" not in here[:1]  # a src/ layout installs packages, not loose files
            for cand in (f"{stem}.py" if not installed else "", f"{stem}/__init__.py",
                         f"{stem}/__main__.py" if from_command else ""):
                if cand and cand in self.paths:
                    return cand
            if parts and stem in self.dirs:
                return stem + "/"
        return None

    def binding_target(self, rel: str, b: Binding) -> str | None:
        """The repository module (or package folder, ending in /) a binding stands for, if any."""
        key = (rel, id(b))
        if key not in self._target_cache:
            target = None
            if b.attr:
                target = self.resolve_module(rel, f"{b.module}.{b.attr}", b.level)
            if target is None and (b.module or b.level):
                target = self.resolve_module(rel, b.module, b.level)
            self._target_cache[key] = target
        return self._target_cache[key]

    def is_local(self, rel: str, b: Binding) -> bool:
        return self.binding_target(rel, b) is not None

    def _reaches(self, target: str | None, rel: str) -> bool:
        """Does an import of `target` make the definitions of `rel` available?"""
        if target is None:
            return False
        if target == rel:
            return True
        folder = target[:-1] if target.endswith("/") else (target[: -len("/__init__.py")]
                                                            if target.endswith("/__init__.py") else None)
        return folder is not None and rel.startswith(folder + "/")

    # ------------------------------------------------------------------ entry points

    def is_entry_script(self, rel: str) -> bool:
        """Runs on its own: a shell script, a notebook, a Python script (a `__main__` guard or
        module-level calls) or a file whose name says it evaluates; never a vendored copy."""
        f = self.files.get(rel)
        if f is None or self.is_vendored(rel):
            return False
        if f.kind == "python" and self.is_unit_test(rel):
            return False
        if f.kind in ("shell", "notebook"):
            return True
        if f.kind != "python":
            return False
        info = self.module(rel)
        return bool(info and (info.has_main or info.top_calls)) or self.is_entry_file(rel)

    def is_entry_file(self, rel: str) -> bool:
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return (not self.is_vendored(rel) and self.catalog.roles.entry_files.any(words(stem))
                and not self.is_unit_test(rel))

    # ------------------------------------------------------------------ callers

    def callers(self, node: Node) -> tuple[Caller, ...]:
        if node not in self._callers:
            self._callers[node] = tuple(dict.fromkeys(self._find_callers(node)))
        return self._callers[node]

    def _find_callers(self, node: Node) -> Iterable[Caller]:
        rel, qual = node
        if qual == ENTRY or qual.startswith(CMD):
            return ()
        if qual == "":
            return self._module_callers(rel)
        info = self.module(rel)
        d = info.definition(qual) if info else None
        if d is None:
            return ()
        return self._def_callers(rel, info, d)  # type: ignore[arg-type]

    def _module_callers(self, rel: str) -> Iterable[Caller]:
        yield from self._script_refs.get(rel, [])
        yield from self._string_refs(rel)
        if self.is_entry_script(rel):
            yield Caller((rel, ENTRY), None, "entry")
        if not rel.endswith(".py"):
            return
        stem = rel[:-len(".py")]
        name = stem.rsplit("/", 1)[-1] if not stem.endswith("/__init__") else stem[:-len("/__init__")].rsplit("/", 1)[-1]
        imports = re.compile(rf"^[ \t]*(?:from|import)\b.*\b{re.escape(name)}\b", re.M)
        for f in self.files_with_text(name):
            text = self.code_text(f)
            if f == rel or not (imports.search(text) or "import (" in text or "import(" in text):
                continue
            info = self.module(f)
            for b in info.bindings if info else ():
                if name in (b.name, b.attr) or name in b.module.split("."):
                    target = self.binding_target(f, b)
                    if target == rel or (b.attr is None and self._reaches(target, rel)):
                        yield Caller((f, b.scope), b.line, "import")

    def _def_callers(self, rel: str, info: ModuleInfo, d) -> Iterable[Caller]:  # type: ignore[no-untyped-def]
        name = d.name
        yield from self._def_refs.get((rel, d.qual), [])
        if d.parent_kind == "class":
            yield Caller((rel, d.parent), d.start, "class")
        elif d.parent == "" and self.is_entry_file(rel):
            yield Caller((rel, ENTRY), None, "entry")
        if d.parent == "" and d.name == "main" and info.has_main:  # tf.app.run(), absl: main runs implicitly
            yield Caller((rel, ""), None, "call")
        for ref in info.refs_to(name):
            if ref.scope != d.qual and not ref.scope.startswith(d.qual + "."):
                yield Caller((rel, ref.scope), ref.line, "call")
        if d.parent_kind == "function":
            return  # a nested function is only visible where it is defined
        distinct = len(name) >= MIN_DISTINCT and not name.startswith("__") and self._defined_once(name)
        stems = self._import_names(rel)
        done: set[str] = {rel}
        for f in self.files_with_text(name):
            if f in done or (not distinct and not any(self._has_word(f, stem) for stem in stems)):
                continue  # cannot import the defining module: not a caller, and not worth parsing
            if name not in self.identifiers(f):
                continue
            done.add(f)
            other = self.module(f)
            if other is not None:
                yield from self._refs_from(f, other, rel, d, distinct)
        if d.parent == "":  # getattr(module, computed_name) in files that never spell the name
            for f in self.files_with_text("getattr"):
                if f in done or not any(self._has_word(f, stem) for stem in stems):
                    continue
                other = self.module(f)
                for scope, line, receiver in other.getattrs if other else ():
                    if any(b.name == receiver and self._reaches(self.binding_target(f, b), rel) for b in other.bindings):
                        yield Caller((f, scope), line, "dispatch")

    def _import_names(self, rel: str) -> set[str]:
        """Names an import of `rel` must spell: its stem and the folders holding it."""
        parts = rel[: -len(".py")].split("/") if rel.endswith(".py") else rel.split("/")
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        return {p for p in parts[-3:] if p}

    def identifiers(self, rel: str) -> set[str]:
        info = self.module(rel)
        return info.identifiers() if info else set()

    def files_with_text(self, word: str) -> list[str]:
        """Python files and notebooks whose code holds the word as a whole word (no parsing)."""
        if self._words is None:
            self._index_words()
        return self._words.get(word, [])  # type: ignore[union-attr]

    def _index_words(self) -> None:
        """One pass over the code: which files hold each word, how often each name is defined."""
        self._words = {}
        for r in self.code_files:
            text = self.code_text(r)
            for w in set(WORD.findall(text)):
                self._words.setdefault(w, []).append(r)
            for name in DEF_NAME.findall(text):
                self._def_counts[name] = self._def_counts.get(name, 0) + 1

    def _has_word(self, rel: str, word: str) -> bool:
        if word not in self._word_sets:
            self._word_sets[word] = set(self.files_with_text(word))
        return rel in self._word_sets[word]

    def _refs_from(self, f: str, other: ModuleInfo, rel: str, d, distinct: bool) -> Iterable[Caller]:  # type: ignore[no-untyped-def]
        name = d.name
        targets = {b.name: self.binding_target(f, b) for b in other.bindings}
        imports_rel = any(self._reaches(t, rel) for t in targets.values())
        star = any(b.name == "*" and self._reaches(self.binding_target(f, b), rel) for b in other.bindings)
        direct = any(b.name == name and b.attr == name and self._reaches(targets.get(name), rel)
                     for b in other.bindings) or star
        for ref in other.names.get(name, []):
            if direct or distinct:
                yield Caller((f, ref.scope), ref.line, "call")
        for ref in other.attrs.get(name, []):
            via_module = ref.root is not None and self._reaches(targets.get(ref.root), rel)
            if via_module or (imports_rel and d.parent_kind == "class") or distinct:
                yield Caller((f, ref.scope), ref.line, "call")
        if d.parent == "":
            for scope, line, receiver in other.getattrs:
                if self._reaches(targets.get(receiver), rel):
                    yield Caller((f, scope), line, "dispatch")

    def _defined_once(self, name: str) -> bool:
        """Is exactly one function or class of this name defined in the repository?"""
        if self._words is None:
            self._index_words()
        return self._def_counts.get(name, 0) == 1

    # ------------------------------------------------------------------ what a node is for

    def groups(self, node: Node) -> list[list[str]]:
        """The words that say what a node is for, innermost first: the function, its class,
        the file, its folders; for a command its arguments, then its README heading."""
        rel, qual = node
        if qual == ENTRY:
            return []
        if qual.startswith(CMD):
            cmd = self.commands[int(qual[len(CMD):])]
            return [cmd.arg_words, cmd.heading_words]
        out = [words(part) for part in reversed(qual.split("."))] if qual else []
        parts = rel.split("/")
        out.append(words(parts[-1].rsplit(".", 1)[0]))
        out.extend(words(p) for p in reversed(parts[-4:-1]))
        return out

    def describe(self, node: Node) -> str:
        rel, qual = node
        if qual == ENTRY:
            return f"{rel} (run on its own)"
        if qual.startswith(CMD):
            cmd = self.commands[int(qual[len(CMD):])]
            return f"{rel}:{cmd.line} `{cmd.text[:80]}`" + (f" under \"{cmd.heading[:40]}\"" if cmd.heading else "")
        return f"{rel} {qual}" if qual else rel
