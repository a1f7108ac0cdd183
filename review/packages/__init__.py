"""Metric packages measured against their reference (Rogue Scores, Tables 1 and 2).

`review packages test` runs the reference implementation of a metric and every candidate
package on one specimen of (reference, hypothesis) pairs and counts where they disagree;
`review packages sensitivity` runs the reference alone under the paper's configurations.
What a package is (its pip spec, lock, adapter, options) is data in the metric folder
(`patterns/<metric>/harness.toml`); each package runs in its own cached venv, and the only
code that touches its API is its adapter in the metric folder's `adapters.py`, run there by
`adapter_main.py`. The reference is run the same way.
"""
