"""The standard library's parse of a rule pattern, shared by the analyses that read it.

The prefilter (required and leading literals, widths) and the backtracking guard both walk
the parse tree of every pattern when a rule set is compiled; parsing each pattern once per
process, not once per analysis, keeps compiling a rule file quick (it is done for every
`review check` and every evaluation). The `regex` module compiles the patterns that run;
this tree only describes them, and syntax only the `regex` module knows has none (None).
"""

from __future__ import annotations

import functools
import re
from typing import Any

try:  # the standard library's regex parser (Python 3.11+: re._parser; older: sre_parse)
    import re._parser as _sre  # type: ignore[import-not-found]
    from re._constants import MAXREPEAT  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]
    from sre_constants import MAXREPEAT  # type: ignore[no-redef]

__all__ = ["MAXREPEAT", "parse"]


@functools.lru_cache(maxsize=None)
def parse(source: str) -> Any | None:
    """The case-insensitive parse tree of a pattern (read it, never change it), or None."""
    try:
        return _sre.parse(source, re.IGNORECASE)
    except Exception:  # syntax the standard parser does not know (regex-module extensions)
        return None
