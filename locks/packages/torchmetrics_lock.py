"""Write a hash-pinned lock from a pip install report (locks/packages/torchmetrics.in says when).

    python3 locks/packages/torchmetrics_lock.py REPORT.json > locks/packages/torchmetrics.txt
"""

import json
import sys

report = json.load(open(sys.argv[1]))
print("# Written by locks/packages/torchmetrics_lock.py from pip's install report of torchmetrics.in")
print("# (not by locks/compile: torch's CPU build is a local file uv does not see)")
for item in sorted(report["install"], key=lambda i: i["metadata"]["name"].lower()):
    meta, info = item["metadata"], item["download_info"]
    hashes = info.get("archive_info", {}).get("hashes") or {}
    sha = hashes.get("sha256") or info["archive_info"]["hash"].split("=", 1)[1]
    print(f"{meta['name'].lower()}=={meta['version']} \\\n    --hash=sha256:{sha}")
