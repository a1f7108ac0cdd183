"""The loop every adapter runs in, inside a package's own venv: JSONL in, JSONL out.

Run as a script with nothing of this project importable (`python -I adapter_main.py
ADAPTERS_FILE NAME OPTIONS_JSON`), so standard library only. It loads the metric folder's
adapters file, calls `NAME(options)` and scores each pair read on stdin ({"i",
"reference": [sentences], "hypothesis": [sentences]}), writing {"i", "scores": {score:
{measure: value}}} or {"i", "error"} per line, so one bad input is reported and the next
is scored. An adapter whose scorer has `batch = N` (a number) gets the rows N at a time and
returns their result lines: one process (a Perl run) for many pairs, memory bounded by N.
"""

import importlib.util
import itertools
import json
import sys


def load(path, name):
    spec = importlib.util.spec_from_file_location("metric_adapters", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def main(argv):
    factory = load(argv[1], argv[2])
    score = factory(json.loads(argv[3]) if len(argv) > 3 else {})
    rows = (json.loads(line) for line in sys.stdin)
    size = getattr(score, "batch", 0)
    if size:
        while chunk := list(itertools.islice(rows, size)):
            for result in score(chunk):
                sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
        return
    for row in rows:
        try:
            result = {"i": row["i"], "scores": score(row["reference"], row["hypothesis"])}
        except Exception as exc:  # one input's failure is reported, the next is scored
            result = {"i": row["i"], "error": f"{type(exc).__name__}: {exc}"[:300]}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
