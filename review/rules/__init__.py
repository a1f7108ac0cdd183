"""Rule files as data and the engine that runs them (Table 5 of Rogue Scores and beyond).

Public surface for other areas:

- `load_ruleset(path, options=())` -> `RuleSet` (checked; errors name the rule and file)
- `Engine(ruleset).scan(text)` -> `Scan`; `label_scan(scan, ruleset)` -> `Labeled`
- `check_text(text, ruleset)` -> `CheckResult` (in `review.check`)
- `run_label(db, settings, ...)` (in `review.rules.stage`) writes `PaperLabel`/`Finding` rows
"""

from review.rules.engine import Engine, Hit, NaiveEngine, Scan
from review.rules.labels import Labeled, Labels, label_scan, reproducibility
from review.rules.model import SCHEMA_VERSION, Kind, Rule, RuleSet, build_ruleset, load_ruleset

__all__ = [
    "SCHEMA_VERSION", "Engine", "Hit", "Kind", "Labeled", "Labels", "NaiveEngine", "Rule", "RuleSet", "Scan",
    "build_ruleset", "label_scan", "load_ruleset", "reproducibility",
]
