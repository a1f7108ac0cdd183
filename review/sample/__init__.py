"""The bundled sample corpus for `review survey --sample` (generated at run time)."""

from review.sample.build import SampleCorpus, build_sample
from review.sample.papers import SAMPLE_PAPERS, SamplePaper

__all__ = ["SAMPLE_PAPERS", "SampleCorpus", "SamplePaper", "build_sample"]
