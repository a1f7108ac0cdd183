"""Headless Chromium for the report tests: what a reader's browser really lays out.

String checks cannot tell whether an arrow reaches its box or a banner is on screen; a
browser can. `probe` loads a copy of the page with a small script appended that measures
elements (getBoundingClientRect) and writes the result into the DOM, which
`--dump-dom` returns. Without chromium the tests skip, except under CI (CI=true), where
`.ci/run` installs it and a skip would hide a broken report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PROBE_ID = "review-test-probe"


def chromium() -> str:
    """The chromium binary, or a skip (a failure under CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (CI installs it in .ci/run)")
    pytest.skip("chromium not installed (apt-get install -y chromium)")


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def screenshot(page: Path, out: Path, width: int, height: int) -> Path:
    """A PNG of the page's first `width`x`height` pixels."""
    proc = _run([f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()], out.parent / "profile-shot")
    assert out.exists(), f"chromium wrote no screenshot: {proc.stderr[-2000:]}"
    return out


def probe(page: Path, script: str, work: Path, width: int = 1200) -> Any:
    """Run `script` (JavaScript whose last statement is `return <json-able value>;` inside a
    function body) on a copy of `page` and return its value."""
    text = page.read_text(encoding="utf-8")
    body = (f'<pre id="{PROBE_ID}"></pre><script>document.getElementById("{PROBE_ID}").textContent = '
            f"JSON.stringify((function(){{{script}}})());</script>")
    copy = work / f"probe-{page.name}"
    copy.write_text(text.replace("</body>", body + "</body>"), encoding="utf-8")
    proc = _run([f"--window-size={width},1000", "--dump-dom", copy.as_uri()], work / "profile-probe")
    m = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', proc.stdout, re.S)
    assert m and m.group(1), f"the probe script gave nothing: {proc.stderr[-2000:]}"
    import html

    return json.loads(html.unescape(m.group(1)))
