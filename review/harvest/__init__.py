"""Harvesting: paper records from the ACL Anthology and DBLP into papers/source_records.

Library entry points (no typer): `review.harvest.acl.harvest_acl` and
`review.harvest.dblp.harvest_dblp`, both returning a `HarvestResult`.
"""

from review.harvest.result import HarvestResult

__all__ = ["HarvestResult"]
