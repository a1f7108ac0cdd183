"""The labeling configurations, generated for the metric under review.

Why generated: the questions (Table 4 of Rogue Scores) are the same for every metric, but
their wording and choices are the metric's: P2 and P3 offer the measure and protocol
labels of its rule file, P4 and C1 the packages of its catalog. So annotations/ holds one
template per form (the structure the human pass relies on: "can't tell" choices, P1-P4
shown only after P0 = yes), and the metric folder fills it in: `{{P0}}` is a text of
its wording, a line `{{choices:package}}` one <Choice> per label.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import escape

from review.errors import InputFileError, RuleFileError
from review.metric import Metric, load_metric

TEMPLATES = {"papers": "paper_review.xml", "code": "code_review.xml"}
_TEXT = re.compile(r"\{\{([A-Za-z0-9_]+)\}\}")
_CHOICES = re.compile(r"^([ \t]*)\{\{choices:([a-z_]+)\}\}[ \t]*$", re.M)


def annotations_dir() -> Path:
    """annotations/ in a checkout, review/_annotations inside a wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "annotations", here / "_annotations"):
        if (candidate / TEMPLATES["papers"]).is_file():
            return candidate
    raise InputFileError("labeling configuration templates not found", item="annotations/", hint="reinstall the package")


def choice_labels(metric: Metric, rules: Path | None = None) -> dict[str, list[str]]:
    """The labels each choice list offers: the rule file's measures and protocol terms (in
    file order), the catalog's packages (catalog order, then labels only the rules or the
    code catalog know)."""
    from review.codebases.catalog import load_catalog as load_code_catalog
    from review.compute.catalog import load_catalog
    from review.rules.model import load_ruleset

    ruleset = load_ruleset(rules or metric.rules)
    by_kind: dict[str, list[str]] = {"variant": [], "protocol": [], "package": []}
    for rule in ruleset.rules:
        kind = getattr(rule.kind, "value", rule.kind)
        if kind in by_kind and rule.label not in by_kind[kind]:
            by_kind[kind].append(rule.label)
    catalog = list(load_catalog(metric.packages).packages)
    code = load_code_catalog(metric.code_packages).labels
    packages = catalog + [p for p in by_kind["package"] if p not in catalog]
    return {"variant": by_kind["variant"], "protocol": by_kind["protocol"], "package": packages,
            "code_package": catalog + [p for p in code if p not in catalog]}


def render(kind: str, metric: Metric, rules: Path | None = None) -> str:
    """The labeling configuration of `kind` (papers | code) for `metric`, as XML text."""
    return _render(kind, str(metric.folder), metric.sha256, str(rules) if rules else None)


def _attr(value: str) -> str:
    return escape(value, {'"': "&quot;"})


@lru_cache(maxsize=16)
def _render(kind: str, folder: str, _sha: str, rules: str | None) -> str:
    metric = load_metric(folder)
    path = annotations_dir() / TEMPLATES[kind]
    template = path.read_text(encoding="utf-8")
    labels = choice_labels(metric, Path(rules) if rules else None)

    def choices(m: re.Match[str]) -> str:
        indent, name = m.group(1), m.group(2)
        if name not in labels:
            raise RuleFileError(f"template asks for unknown choices {name!r}", item=str(path))
        return "\n".join(f'{indent}<Choice value="{_attr(v)}"/>' for v in labels[name] if v != "NONE")

    def text(m: re.Match[str]) -> str:
        try:
            value = metric.text(m.group(1))
        except KeyError:
            raise RuleFileError(f"template asks for unknown wording {m.group(1)!r}", item=str(path)) from None
        return _attr(value)

    xml = _TEXT.sub(text, _CHOICES.sub(choices, template))
    try:
        ET.fromstring(xml)
    except ET.ParseError as exc:
        raise RuleFileError(f"the generated labeling configuration is not valid XML: {exc}",
                            item=f"{metric.folder} + {path}") from None
    return xml
