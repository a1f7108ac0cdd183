"""The human verification pass in Label Studio: queue tasks, pull annotations, agree.

`run_queue` turns automated labels into Label Studio tasks with predictions,
`run_pull` reads the reviewers' annotations into `HumanDecision` rows and resolves them,
`offline` does the same through JSON files for servers this machine cannot reach, and
`agreement` measures how far reviewers agree per question. Automated stages never write
`HumanDecision`; only these functions do, and only from reviewers' work.
"""

from review.labelstudio.pull import PullResult, run_pull
from review.labelstudio.queue import QueueResult, run_queue

__all__ = ["PullResult", "QueueResult", "run_pull", "run_queue"]
