"""The sample corpus for `review survey --sample`: a metric folder's sample file, generated at run time."""

from review.sample.build import SampleCorpus, build_sample
from review.sample.papers import Sample, SamplePaper, load_sample, metric_sample

__all__ = ["Sample", "SampleCorpus", "SamplePaper", "build_sample", "load_sample", "metric_sample"]
