"""Measured accuracy: automated labels scored against human labels.

- `gold.read_gold(path, packages)` -> `GoldFile` (papers gold files of GOLD.md, checked per line)
- `score.score_pairs(pairs)` -> `Scores` over (expected, proposed) label dicts, whoever gave them
- `papers.evaluate(gold, texts, ruleset)` -> `PapersEvaluation` (`review evaluate papers`)
"""
