"""Codebases: link papers to code (C0), look them up on GitHub, infer ROUGE packages (C1).

Entry points callable without the CLI (the survey command uses them):
`run_link` (link.py), `run_github` (github.py), `run_scan` and `scan_target` (runner.py).
"""
