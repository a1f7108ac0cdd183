"""The human verification pass in Label Studio: queue tasks, pull annotations, agree.

`run_queue` turns automated labels into Label Studio tasks with predictions (or, for
disputed questions, adjudication tasks: `adjudication`), `run_pull` reads the reviewers'
annotations into `HumanDecision` rows and resolves them with the one rule of
`review.resolution`, `offline` does the same through JSON files for servers this machine
cannot reach, `projects` finds which queued projects live on the server reached, and
`agreement` measures how far reviewers agree per question. Automated stages never write
`HumanDecision`; only these functions do, and only from reviewers' work.
"""

from review.labelstudio.pull import PullResult, run_pull
from review.labelstudio.queue import QueueResult, run_queue

__all__ = ["PullResult", "QueueResult", "run_pull", "run_queue"]
