"""review: systematic literature reviews of how papers report an evaluation metric."""

__version__ = "0.1.0"
