"""All models, imported here so `Base.metadata` is complete for Alembic."""

from review.db.base import Base
from review.db.models.codebases import Codebase, CodebaseLink, CodeFinding
from review.db.models.compute import Reproducibility
from review.db.models.decisions import HumanDecision
from review.db.models.documents import Document, PaperText
from review.db.models.human import HumanProject, HumanResolution, HumanTask
from review.db.models.labels import Finding, PaperLabel, RuleSet
from review.db.models.papers import Paper, SourceRecord
from review.db.models.runs import Run
from review.db.models.sampling import SamplingDesign
from review.db.models.work import WorkItem

__all__ = [
    "Base", "Codebase", "CodebaseLink", "CodeFinding", "Document", "Finding", "HumanDecision",
    "Paper", "PaperLabel", "PaperText", "Reproducibility", "Run", "RuleSet", "SamplingDesign", "SourceRecord", "WorkItem",
]
