"""Reproducibility labels (Rogue Scores §4): R1, R2, R3, software_error, reproducible.

One module per job: `catalog` (the package catalog), `human` (the reviewers' resolved
answers, as `review.resolution` stores them), `labels` (R1-R3 and software_error of one
paper), `categories` (the Figure 3 series), `rows` (the stored table) and `stage`
(`review compute` itself).
"""

from review.compute.catalog import Catalog, Package, counts_as_package, load_catalog
from review.compute.categories import CATEGORIES, category
from review.compute.labels import CodeInput, PaperInput, automated_code_metric, compute_paper
from review.compute.human import Human, human_inputs
from review.compute.rows import dump_json, json_text, parse_json, rows_digest, write_rows
from review.compute.stage import ComputeResult, choose_rule_set, configured_rules, gather_inputs, run_compute

__all__ = [
    "CATEGORIES", "Catalog", "CodeInput", "ComputeResult", "Human", "Package",
    "PaperInput", "automated_code_metric", "category", "choose_rule_set", "compute_paper", "configured_rules",
    "counts_as_package", "dump_json", "gather_inputs", "human_inputs", "json_text", "load_catalog",
    "parse_json", "rows_digest", "run_compute", "write_rows",
]
