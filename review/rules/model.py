"""Rule files as validated objects: `RuleSet` and `Rule`, loaded from TOML.

A rule file is data (see docs/rules.md): this module reads it,
rejects anything it does not understand (unknown keys name the key and the file; invalid
regexes name the rule) and resolves defaults, named options and `extends` in one step,
so the engine only ever sees a flat, checked list of rules. Nothing here looks at a
paper's text: every error surfaces before any text is processed.
"""

from __future__ import annotations

import copy
import hashlib
import tomllib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping

import regex

from review.errors import RuleFileError
from review.log import get_logger
from review.rules.expr import Expr, parse_expression
from review.rules.guard import nested_quantifier

log = get_logger("rules")

SCHEMA_VERSION = 1
"""The rule-file format version this release reads (the file's `schema` key)."""

FLAGS = regex.IGNORECASE | regex.V0


class Kind(str, Enum):
    """What a rule's matches mean for a paper's labels."""

    PACKAGE = "package"
    """A software citation (P4); the rule's label is the package name."""
    PROTOCOL = "protocol"
    """An evaluation decision (P3): stemming, stopwords, bootstrapping, ..."""
    VARIANT = "variant"
    """A measure (P2): precision, recall, F-score."""
    PARAMS = "params"
    """A parameter string (P1); the value is the rule's capture group."""
    FLAG = "flag"
    """A named input of the computed-metric expression (`[flag] expression`)."""
    CODE_URL = "code_url"
    """A link to code; the value is the matched URL."""


class Resolve(str, Enum):
    """How a generic package label and a more specific one that overlaps it resolve."""

    KEEP_BOTH = "keep_both"
    """Report both labels (what the paper's released dataset does)."""
    SPECIFIC_WINS = "specific_wins"
    """Drop the generic label when a specific one is found (in `scope`)."""


class OverlapScope(str, Enum):
    SPAN = "span"
    """Only a generic match whose characters overlap a specific match is dropped."""
    PAPER = "paper"
    """The generic label is dropped when the specific one occurs anywhere in the paper."""


@dataclass(frozen=True)
class Pattern:
    source: str
    compiled: Any  # regex.Pattern


@dataclass(frozen=True)
class Rule:
    """One rule: patterns that, when matched, give a paper one label of one kind."""

    id: str
    kind: Kind
    label: str
    patterns: tuple[Pattern, ...]
    near: str | None = None  # anchor name; None = match anywhere
    window: int = 0  # characters between a match and an anchor mention, when `near` is set
    group: int = 0  # capture group whose text is the finding's value (params)
    exclude_regions: tuple[str, ...] = ()
    description: str = ""
    attach: str | None = None  # name of an [attachments.*] policy the match must satisfy
    trim: Pattern | None = None  # matches of this pattern are cut out of the value (params)


@dataclass(frozen=True)
class Attachment:
    """What a match must refer to (`[attachments.NAME]`), judged by `review.rules.context`.

    The match is kept when a mention of `anchor` stands in its sentence or within `window`
    characters of it, no `closer` anchor (another metric, another task) is nearer to it, no
    `reject_sentence` anchor (cue words of related work, preprocessing, ...) is in its
    sentence and it lies in none of `reject_regions`; otherwise it is rejected with the reason.
    """

    name: str
    anchor: str
    window: int
    sentence_end: Pattern
    closer: tuple[str, ...] = ()
    reject_sentence: tuple[str, ...] = ()
    reject_regions: tuple[str, ...] = ()
    description: str = ""
    sentence_chars: int = 400  # a sentence is cut this many characters either side of the match (tables, lists)


@dataclass(frozen=True)
class Region:
    """A stretch of text found by a start pattern (last or first match) and an end pattern."""

    name: str
    start: Pattern
    end: Pattern | None
    which: str = "last"  # which start match opens the region: first | last
    min_fraction: float = 0.0  # the start must lie at least this far into the text


@dataclass(frozen=True)
class Overlap:
    generic: str
    specific: tuple[str, ...]
    resolve: Resolve
    scope: OverlapScope


@dataclass(frozen=True)
class RuleSet:
    """A checked, flattened rule file: what `review label` and `review check` run."""

    name: str
    metric: str
    version: str
    description: str
    prelim: Pattern
    gate: bool
    anchors: Mapping[str, Pattern]
    rules: tuple[Rule, ...]
    regions: Mapping[str, Region]
    flag_expression: Expr
    flag_source: str
    overlaps: tuple[Overlap, ...]
    r1_packages: frozenset[str]
    r2_packages: frozenset[str]
    snippet_chars: int
    options: tuple[str, ...]  # named options switched on
    available_options: Mapping[str, str]  # name -> description
    content: str  # what ran: the file (and its base and options), stored with the labels
    path: str | None = None
    sha256: str = field(default="")
    attachments: Mapping[str, Attachment] = field(default_factory=dict)

    def signature(self) -> dict[str, Any]:
        """The fields a result's reproducibility signature takes from the rule set."""
        return {"rules": self.name, "rules_version": self.version, "rules_sha256": self.sha256[:12],
                "rules_options": ",".join(self.options) or None}

    @property
    def package_labels(self) -> list[str]:
        return sorted({r.label for r in self.rules if r.kind is Kind.PACKAGE})


# ----------------------------------------------------------------------------- loading

TOP_KEYS = {"schema", "name", "metric", "version", "description", "extends", "enable", "snippet_chars",
            "prelim", "anchors", "regions", "flag", "rules", "overlaps", "reproducibility", "options",
            "attachments"}
RULE_KEYS = {"id", "kind", "label", "patterns", "pattern", "near", "window", "group", "exclude_regions",
             "description", "attach", "trim"}
PRELIM_KEYS = {"pattern", "gate"}
ANCHOR_KEYS = {"pattern", "description"}
REGION_KEYS = {"start", "end", "which", "min_fraction", "description"}
FLAG_KEYS = {"expression", "description"}
OVERLAP_KEYS = {"generic", "specific", "resolve", "scope"}
REPRO_KEYS = {"r1_packages", "r2_packages"}
OPTION_KEYS = {"description", "rules", "patch", "disable", "overlaps", "anchors", "prelim", "flag"}
PATCH_KEYS = {"select_kinds", "select_ids", "near", "window", "exclude_regions", "attach", "trim"}
ATTACHMENT_KEYS = {"anchor", "window", "sentence_end", "sentence_chars", "closer", "reject_sentence",
                   "reject_regions", "description"}
MERGED_TABLES = ("anchors", "regions", "attachments")
"""Tables a child file adds to (same name = replace) instead of replacing the base's whole table."""


def load_ruleset(path: str | Path, options: Iterable[str] = ()) -> RuleSet:
    """Read, check and flatten a rule file; raise `RuleFileError` naming what is wrong."""
    path = Path(path)
    data, content = _read(path)
    options = tuple(options)
    base_content = ""
    if "extends" in data:
        base_path = (path.parent / str(data["extends"])).resolve()
        base, base_content = _read(base_path)
        if "extends" in base:
            raise RuleFileError("a base file cannot itself use `extends`", item=str(base_path))
        data = _merge_child(base, data, str(path))
    enabled = tuple(dict.fromkeys([*_as_list(data.get("enable", []), "enable", str(path)), *options]))
    content_all = content
    if base_content:
        content_all += f"\n# ---- extends {data.get('extends')} ----\n" + base_content
    if options:
        content_all += "\n# ---- options: " + ",".join(options) + " ----\n"
    return build_ruleset(data, source=str(path), options=enabled, content=content_all)


def _read(path: Path) -> tuple[dict[str, Any], str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RuleFileError("rule file not found", item=str(path), hint="see patterns/ for the shipped rule files") from None
    except OSError as exc:
        raise RuleFileError(f"cannot read the rule file: {exc.strerror}", item=str(path)) from None
    try:
        text = raw.decode("utf-8")
        return tomllib.loads(text), text
    except UnicodeDecodeError:
        raise RuleFileError("not UTF-8 text", item=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"not valid TOML: {exc}", item=str(path)) from None


def _merge_child(base: dict[str, Any], child: dict[str, Any], source: str) -> dict[str, Any]:
    """A child file keeps the base's rules and options; its own top-level keys win."""
    merged = copy.deepcopy(base)
    for key, value in child.items():
        if key == "extends":
            merged["extends"] = value
        elif key == "rules":
            merged["rules"] = _replace_rules(merged.get("rules", []), value, source)
        elif key == "options" or (key in MERGED_TABLES and isinstance(value, dict)):
            merged.setdefault(key, {}).update(value)
        else:
            merged[key] = value
    return merged


def _replace_rules(rules: list[dict[str, Any]], new: Any, source: str) -> list[dict[str, Any]]:
    if not isinstance(new, list):
        raise RuleFileError("`rules` must be an array of tables ([[rules]])", item=source)
    out = list(rules)
    index = {r.get("id"): i for i, r in enumerate(out) if isinstance(r, dict)}
    for rule in new:
        rid = rule.get("id") if isinstance(rule, dict) else None
        if rid in index:
            out[index[rid]] = rule
        else:
            out.append(rule)
    return out


def build_ruleset(data: dict[str, Any], *, source: str = "<rules>", options: Iterable[str] = (),
                  content: str | None = None) -> RuleSet:
    """Check a parsed rule file and resolve defaults and options into a `RuleSet`."""
    _check_keys(data, TOP_KEYS, "top level", source)
    schema = data.get("schema")
    if schema is None:
        raise RuleFileError(f"missing `schema = {SCHEMA_VERSION}` (the rule-file format version)", item=source)
    if not isinstance(schema, int) or schema > SCHEMA_VERSION or schema < 1:
        raise RuleFileError(f"rule-file schema {schema!r} is not readable by this release (it reads schema "
                            f"{SCHEMA_VERSION})", item=source,
                            hint="upgrade `review`" if isinstance(schema, int) and schema > SCHEMA_VERSION
                            else f"set `schema = {SCHEMA_VERSION}`")
    data = copy.deepcopy(data)
    declared = data.get("options", {}) or {}
    if not isinstance(declared, dict):
        raise RuleFileError("`options` must be a table of named options", item=source)
    available = {}
    for name, opt in declared.items():
        if not isinstance(opt, dict):
            raise RuleFileError(f"option '{name}' must be a table", item=source)
        _check_keys(opt, OPTION_KEYS, f"option '{name}'", source)
        available[name] = str(opt.get("description", ""))
    options = tuple(options)
    for name in options:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise RuleFileError(f"unknown option '{name}' (this file declares: {known})", item=source)
        data = _apply_option(data, name, declared[name], source)

    name = _str(data, "name", source, required=True)
    for key, most in (("name", 128), ("metric", 64), ("version", 64)):
        if isinstance(data.get(key), str) and len(data[key]) > most:
            raise RuleFileError(f"`{key}` has at most {most} characters", item=source)
    snippet_chars = data.get("snippet_chars", 80)
    if not isinstance(snippet_chars, int) or snippet_chars < 0:
        raise RuleFileError("`snippet_chars` must be a non-negative integer", item=source)

    prelim_t = _table(data, "prelim", source, required=True)
    _check_keys(prelim_t, PRELIM_KEYS, "[prelim]", source)
    prelim = _compile(prelim_t.get("pattern"), "[prelim]", source)
    gate = prelim_t.get("gate", True)
    if not isinstance(gate, bool):
        raise RuleFileError("[prelim] `gate` must be true or false", item=source)

    anchors: dict[str, Pattern] = {}
    for aname, anchor in _table(data, "anchors", source).items():
        if not isinstance(anchor, dict):
            raise RuleFileError(f"anchor '{aname}' must be a table", item=source)
        _check_keys(anchor, ANCHOR_KEYS, f"anchor '{aname}'", source)
        anchors[aname] = _compile(anchor.get("pattern"), f"anchor '{aname}'", source)

    regions: dict[str, Region] = {}
    for rname, reg in _table(data, "regions", source).items():
        if not isinstance(reg, dict):
            raise RuleFileError(f"region '{rname}' must be a table", item=source)
        _check_keys(reg, REGION_KEYS, f"region '{rname}'", source)
        which = reg.get("which", "last")
        if which not in ("first", "last"):
            raise RuleFileError(f"region '{rname}': `which` must be 'first' or 'last'", item=source)
        end = reg.get("end")
        regions[rname] = Region(rname, _compile(reg.get("start"), f"region '{rname}' start", source),
                                _compile(end, f"region '{rname}' end", source) if end else None,
                                which, float(reg.get("min_fraction", 0.0)))

    attachments = _build_attachments(data.get("attachments"), anchors, regions, source, content)
    rules = _build_rules(data.get("rules"), anchors, regions, source, attachments, content)
    flag_labels = {r.label for r in rules if r.kind is Kind.FLAG}
    flag_t = _table(data, "flag", source, required=True)
    _check_keys(flag_t, FLAG_KEYS, "[flag]", source)
    expression = flag_t.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise RuleFileError("[flag] needs `expression`, e.g. 'score || full || (abbrev && verbatim)'", item=source)
    try:
        expr = parse_expression(expression)
    except ValueError as exc:
        raise RuleFileError(f"[flag] expression {expression!r}: {exc}", item=source) from None
    unknown = expr.names() - flag_labels
    if unknown:
        raise RuleFileError(f"[flag] expression names {', '.join(sorted(unknown))}, but no rule of kind 'flag' "
                            f"has that label (flag labels: {', '.join(sorted(flag_labels)) or 'none'})", item=source)

    package_labels = {r.label for r in rules if r.kind is Kind.PACKAGE}
    overlaps = []
    for i, ov in enumerate(_array(data, "overlaps", source)):
        where = f"overlaps[{i}]"
        _check_keys(ov, OVERLAP_KEYS, where, source)
        generic = ov.get("generic")
        specific = _as_list(ov.get("specific", []), f"{where}.specific", source)
        for lab in [generic, *specific]:
            if lab not in package_labels:
                raise RuleFileError(f"{where}: '{lab}' is not the label of any package rule", item=source)
        try:
            resolve = Resolve(ov.get("resolve", ""))
            scope = OverlapScope(ov.get("scope", "paper"))
        except ValueError:
            raise RuleFileError(f"{where}: `resolve` must be keep_both or specific_wins and `scope` span or "
                                "paper", item=source) from None
        overlaps.append(Overlap(str(generic), tuple(specific), resolve, scope))

    repro = _table(data, "reproducibility", source)
    _check_keys(repro, REPRO_KEYS, "[reproducibility]", source)
    r1 = repro.get("r1_packages", "all")
    r1_set = package_labels if r1 == "all" else set(_as_list(r1, "r1_packages", source))
    r2_set = set(_as_list(repro.get("r2_packages", []), "r2_packages", source))
    for lab in sorted((r1_set | r2_set) - package_labels):
        raise RuleFileError(f"[reproducibility] names '{lab}', which is not the label of any package rule",
                            item=source)

    text = content if content is not None else repr(data)
    return RuleSet(
        name=name, metric=_str(data, "metric", source) or name, version=_str(data, "version", source) or "",
        description=_str(data, "description", source) or "", prelim=prelim, gate=gate, anchors=anchors,
        rules=tuple(rules), regions=regions, flag_expression=expr, flag_source=expression,
        overlaps=tuple(overlaps), r1_packages=frozenset(r1_set), r2_packages=frozenset(r2_set),
        snippet_chars=snippet_chars, options=options, available_options=available, content=text,
        path=source if source != "<rules>" else None,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), attachments=attachments,
    )


def _apply_option(data: dict[str, Any], name: str, opt: dict[str, Any], source: str) -> dict[str, Any]:
    """Switch on one named option: replace or add rules, patch fields, drop rules."""
    where = f"option '{name}'"
    if "rules" in opt:
        data["rules"] = _replace_rules(data.get("rules", []), opt["rules"], source)
    disable = set(_as_list(opt.get("disable", []), f"{where}.disable", source))
    if disable:
        ids = {r.get("id") for r in data.get("rules", [])}
        for rid in sorted(disable - ids):
            raise RuleFileError(f"{where} disables rule '{rid}', which does not exist", item=source)
        data["rules"] = [r for r in data["rules"] if r.get("id") not in disable]
    for i, patch in enumerate(_as_list(opt.get("patch", []), f"{where}.patch", source)):
        _check_keys(patch, PATCH_KEYS, f"{where}.patch[{i}]", source)
        kinds = set(patch.get("select_kinds", []))
        ids = set(patch.get("select_ids", []))
        if not kinds and not ids:
            raise RuleFileError(f"{where}.patch[{i}] selects nothing (give select_kinds or select_ids)", item=source)
        for rule in data.get("rules", []):
            if rule.get("kind") in kinds or rule.get("id") in ids:
                for key in ("near", "window", "exclude_regions", "attach", "trim"):
                    if key in patch:
                        rule[key] = patch[key]
    if "overlaps" in opt:
        data["overlaps"] = opt["overlaps"]
    for key in ("anchors", "prelim", "flag"):
        if key in opt:
            merged = dict(data.get(key, {}))
            merged.update(opt[key])
            data[key] = merged
    return data


def _build_attachments(raw: Any, anchors: Mapping[str, Pattern], regions: Mapping[str, Region], source: str,
                       content: str | None) -> dict[str, Attachment]:
    """Check `[attachments.*]`: every name they use must be a declared anchor or region."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise RuleFileError("`attachments` must be a table of named policies", item=source)
    out = {}
    for name, t in raw.items():
        where = f"attachment '{name}'"
        item = _at(source, content, rf"^\s*\[attachments\.{regex.escape(name)}\]")
        _check_keys(t, ATTACHMENT_KEYS, where, item)
        anchor = t.get("anchor")
        if not isinstance(anchor, str) or anchor not in anchors:
            raise RuleFileError(f"{where}: `anchor` must name an anchor declared in [anchors] (got {anchor!r}; "
                                f"declared: {', '.join(sorted(anchors)) or 'none'})", item=item)
        window, sentence_chars = t.get("window", 0), t.get("sentence_chars", 400)
        for key, value in (("window", window), ("sentence_chars", sentence_chars)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > 10_000:
                raise RuleFileError(f"{where}: `{key}` must be a number of characters from 0 to 10000", item=item)
        names = {}
        for key in ("closer", "reject_sentence"):
            names[key] = tuple(_as_list(t.get(key, []), f"{where}.{key}", item))
            for n in names[key]:
                if n not in anchors:
                    raise RuleFileError(f"{where}: `{key}` names '{n}', which is not declared in [anchors]", item=item)
        reject_regions = tuple(_as_list(t.get("reject_regions", []), f"{where}.reject_regions", item))
        for n in reject_regions:
            if n not in regions:
                raise RuleFileError(f"{where}: `reject_regions` names '{n}', which is not declared in [regions]",
                                    item=item)
        end = t.get("sentence_end")
        if end is None:
            raise RuleFileError(f"{where} needs `sentence_end`, the pattern between two sentences", item=item)
        out[name] = Attachment(name, anchor, window, _compile(end, f"{where} sentence_end", item), names["closer"],
                               names["reject_sentence"], reject_regions, str(t.get("description", "")),
                               sentence_chars)
    return out


def _at(source: str, content: str | None, line_pattern: str, after: str | None = None) -> str:
    """`file:line` of the first line matching `line_pattern` (after the line matching `after`), else `file`.

    Rule-file errors name the line a user has to edit; TOML itself keeps no positions, so
    the line is found again in the file's own text (the part before any `extends` base).
    """
    if not content:
        return source
    lines = content.split("\n# ---- extends ")[0].splitlines()
    start = 0
    if after is not None:
        start = next((i for i, ln in enumerate(lines) if regex.search(after, ln)), None)  # type: ignore[assignment]
        if start is None:
            return source
    for i in range(start, len(lines)):
        if regex.search(line_pattern, lines[i]):
            return f"{source}:{i + 1}"
    return source


def _build_rules(raw: Any, anchors: Mapping[str, Pattern], regions: Mapping[str, Region], source: str,
                 attachments: Mapping[str, Attachment] | None = None, content: str | None = None) -> list[Rule]:
    if not isinstance(raw, list) or not raw:
        raise RuleFileError("no rules: add at least one [[rules]] table", item=source)
    rules: list[Rule] = []
    seen: set[str] = set()
    for i, r in enumerate(raw):
        if not isinstance(r, dict):
            raise RuleFileError(f"rules[{i}] must be a table", item=source)
        rid = r.get("id")
        if not isinstance(rid, str) or not rid:
            raise RuleFileError(f"rules[{i}] has no `id`", item=source)
        where = f"rule '{rid}'"
        if len(rid) > 128:
            raise RuleFileError(f"{where}: an id has at most 128 characters", item=source)
        _check_keys(r, RULE_KEYS, where, source)
        if rid in seen:
            raise RuleFileError(f"{where} is defined twice", item=source)
        seen.add(rid)
        try:
            kind = Kind(r.get("kind"))
        except ValueError:
            kinds = ", ".join(k.value for k in Kind)
            raise RuleFileError(f"{where}: kind {r.get('kind')!r} is not one of {kinds}", item=source) from None
        label = r.get("label", rid)
        if not isinstance(label, str) or not label or len(label) > 128:
            raise RuleFileError(f"{where}: `label` must be a non-empty string of at most 128 characters", item=source)
        sources = r.get("patterns", [])
        if "pattern" in r:
            sources = [r["pattern"], *sources]
        sources = _as_list(sources, f"{where}.patterns", source)
        if not sources:
            raise RuleFileError(f"{where} has no patterns", item=source)
        patterns = tuple(_compile(p, where, source) for p in sources)
        near = r.get("near")
        window = r.get("window", 0)
        if near is not None:
            if near not in anchors:
                raise RuleFileError(f"{where}: `near` names anchor '{near}', which is not declared in [anchors]",
                                    item=source)
            if not isinstance(window, int) or window < 0:
                raise RuleFileError(f"{where}: `window` must be a non-negative number of characters", item=source)
        elif "window" in r:
            raise RuleFileError(f"{where}: `window` needs `near` (the anchor it is measured from)", item=source)
        group = r.get("group", 0)
        if not isinstance(group, int) or group < 0:
            raise RuleFileError(f"{where}: `group` must be a capture-group number", item=source)
        for p in patterns:
            if group > p.compiled.groups:
                raise RuleFileError(f"{where}: pattern {p.source!r} has no capture group {group}", item=source)
        exclude = tuple(_as_list(r.get("exclude_regions", []), f"{where}.exclude_regions", source))
        for reg in exclude:
            if reg not in regions:
                raise RuleFileError(f"{where}: region '{reg}' is not declared in [regions]", item=source)
        attach = r.get("attach")
        if attach is not None and attach not in (attachments or {}):
            item = _at(source, content, rf"\battach\s*=\s*[\"']{regex.escape(str(attach))}[\"']",
                       after=rf"\bid\s*=\s*[\"']{regex.escape(rid)}[\"']")
            if item == source:
                item = _at(source, content, rf"\battach\s*=\s*[\"']{regex.escape(str(attach))}[\"']")
            raise RuleFileError(f"{where}: `attach` names '{attach}', which is not declared in [attachments] "
                                f"(declared: {', '.join(sorted(attachments or {})) or 'none'})", item=item)
        trim = r.get("trim")
        trim_p = _compile(trim, f"{where} trim", source) if trim is not None else None
        rules.append(Rule(rid, kind, label, patterns, near, window if near else 0, group, exclude,
                          str(r.get("description", "")), attach, trim_p))
    return rules


def _compile(source_text: Any, where: str, source: str) -> Pattern:
    if not isinstance(source_text, str) or not source_text:
        raise RuleFileError(f"{where}: a pattern must be a non-empty string", item=source)
    try:
        compiled = regex.compile(source_text, FLAGS)
    except regex.error as exc:
        raise RuleFileError(f"{where}: invalid regex {source_text!r}: {exc}", item=source,
                            hint="patterns are Python `regex` syntax; TOML literal strings ('...') keep backslashes") from None
    if compiled.search("") is not None:
        raise RuleFileError(f"{where}: pattern {source_text!r} matches the empty string", item=source)
    if nested_quantifier(source_text):
        log.warning("%s: %s: pattern %r nests repeats (like (a+)+$) and can take exponential time on some texts; "
                    "it is cut off after label.regex_timeout per paper", source, where, source_text)
    return Pattern(source_text, compiled)


def _check_keys(table: Any, allowed: set[str], where: str, source: str) -> None:
    if not isinstance(table, dict):
        raise RuleFileError(f"{where} must be a table", item=source)
    for key in table:
        if key not in allowed:
            raise RuleFileError(f"unknown key '{key}' in {where} (allowed: {', '.join(sorted(allowed))})", item=source)


def _table(data: dict[str, Any], key: str, source: str, required: bool = False) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise RuleFileError(f"missing [{key}] table", item=source)
        return {}
    if not isinstance(value, dict):
        raise RuleFileError(f"`{key}` must be a table", item=source)
    return value


def _array(data: dict[str, Any], key: str, source: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RuleFileError(f"`{key}` must be an array of tables ([[{key}]])", item=source)
    return value


def _as_list(value: Any, where: str, source: str) -> list[Any]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise RuleFileError(f"`{where}` must be a list", item=source)
    return value


def _str(data: dict[str, Any], key: str, source: str, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise RuleFileError(f"`{key}` must be a non-empty string", item=source)
    return value
