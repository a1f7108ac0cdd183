"""The one redactor: every stored value, log line, run record and export passes through it.

Why one place: a secret leaks through whatever path was forgotten (an exception's text
stored as a detail, an error body echoing the Authorization header, a URL with
`user:password@`). So the redactor is applied where all of those paths meet, not by
each stage: the database engine redacts every bound parameter of every statement
(`review.db.session`), the log record factory redacts every log message
(`review.log`), and the export and CLI writers pass their text through it too.

What counts as a secret:

- the values of the environment variables that hold secrets: the ones the settings name
  (every `*_env` key, e.g. `code.github_token_env`, `label_studio.api_key_env`, registered
  whenever a `Settings` object is made) plus `GITHUB_TOKEN`, `GH_TOKEN` and `LABEL_STUDIO_API_KEY`, read at
  redaction time so a variable set later is still covered; a value cut short at the end
  of a text (a detail truncated to its column) is masked too;
- credentials in URLs (`scheme://user:password@host`), token-like query parameters
  (`?token=`, `access_token=`, `api_key=`, ...);
- GitHub token formats (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), JSON web
  tokens (Label Studio's personal access tokens), and the value after `Authorization:`,
  `Bearer` or `Token` when it looks like a credential (16 characters or more, with a digit).

Each check runs only when a cheap substring test says it could match, so a value without
any secret costs a few `in` scans (what keeps `review label` and `review extract` fast).
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any, Iterable

MASK = "***"
MIN_SECRET = 8
"""Shorter environment values are not treated as secrets (they would mask ordinary words)."""
SEPARATOR = "\x00"
"""Joins many values for one check (`Redactor.clean`); a secret cut off before it still counts."""

DEFAULT_SECRET_ENVS = ("GITHUB_TOKEN", "GH_TOKEN", "LABEL_STUDIO_API_KEY")
SECRET_PARAMS = ("token", "access_token", "api_key", "apikey", "key", "secret", "client_secret", "password",
                 "sig", "signature")

# Every pattern starts with a literal, so `re` finds candidates at memory speed; what
# must come before the literal (a word boundary, the T of "Token") is checked afterwards.
_URL_CREDENTIALS = re.compile(r"://[^\s/@:\"'<>]*:[^\s/@\"'<>]*@")
_QUERY_SECRET = re.compile(r"(?P<name>[?&;](?:%s)=)[^&#\s\"'<>]+" % "|".join(SECRET_PARAMS), re.IGNORECASE)
_GITHUB_TOKENS = (re.compile(r"gh[pousr]_[A-Za-z0-9]{16,}"), re.compile(r"github_pat_[A-Za-z0-9_]{20,}"))
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
_HEADER = re.compile(r"(?P<name>\b(?:proxy-)?authorization|\bx-api-key)(?P<sep>[\"']?\s*[:=]\s*\[?[\"']?)"
                     r"(?P<scheme>(?:bearer|token|basic)\s+)?[^\s\"',;}\]]+", re.IGNORECASE)
_CREDENTIAL = r"\s+(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*"  # long, with a digit: not a word
_SCHEME_VALUES = tuple((literal, re.compile(literal + _CREDENTIAL), initials)
                       for literal, initials in (("oken", "Tt"), ("earer", "Bb"), ("asic", "B")))


class Redactor:
    """Masks a fixed set of known secret values plus every secret-shaped substring."""

    def __init__(self, secrets: Iterable[str] = ()):
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True))
        self._heads = tuple((secret[:MIN_SECRET], secret) for secret in self.secrets)

    def clean(self, texts: list[str]) -> bool:
        """True when none of `texts` holds anything to mask (one pass over them all)."""
        if not texts:
            return True
        joined = SEPARATOR.join(texts)
        return self.text(joined) == joined

    def text(self, s: str) -> str:
        """`s` with every secret replaced by `***`."""
        if not s:
            return s
        for head, secret in self._heads:
            if head in s:
                s = _mask_known(s, secret)
        if "://" in s and "@" in s:
            s = _URL_CREDENTIALS.sub("://" + MASK + "@", s)
        if "=" in s and ("?" in s or "&" in s or ";" in s):
            s = _QUERY_SECRET.sub(lambda m: m["name"] + MASK, s)
        if "gh" in s:
            for pattern in _GITHUB_TOKENS:
                s = pattern.sub(MASK, s)
        if "eyJ" in s:
            s = _JWT.sub(MASK, s)
        if "uthorization" in s or "UTHORIZATION" in s or "pi-key" in s or "PI-KEY" in s:
            s = _HEADER.sub(lambda m: m["name"] + m["sep"] + (m["scheme"] or "") + MASK, s)
        for literal, pattern, initials in _SCHEME_VALUES:
            if literal in s:
                s = pattern.sub(lambda m, s=s, i=initials: _scheme_value(s, m, i), s)
        return s

    def value(self, obj: Any) -> Any:
        """Strings redacted inside dicts, lists and tuples (a new object only when something changed)."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            out = {k: self.value(v) for k, v in obj.items()}
            return obj if all(out[k] is obj[k] for k in obj) else out
        if isinstance(obj, (list, tuple)):
            items = [self.value(v) for v in obj]
            if all(a is b for a, b in zip(items, obj)):
                return obj
            return type(obj)(items) if isinstance(obj, list) else tuple(items)
        return obj


def _scheme_value(s: str, m: re.Match, initials: str) -> str:
    """`Token <credential>` masked when the literal is really the word Token (Bearer, Basic)."""
    start = m.start()
    word = start >= 1 and s[start - 1] in initials and (start < 2 or not s[start - 2].isalnum())
    return f"{m.group(0).split(None, 1)[0]} {MASK}" if word else m.group(0)


def _mask_known(s: str, secret: str) -> str:
    """Mask every occurrence of `secret`, and a prefix of it that the text ends with."""
    head = secret[:MIN_SECRET]
    out: list[str] = []
    i = 0
    while True:
        j = s.find(head, i)
        if j < 0:
            break
        k, m = j + len(head), len(head)
        while k < len(s) and m < len(secret) and s[k] == secret[m]:
            k, m = k + 1, m + 1
        whole = m == len(secret) or k == len(s) or s[k] == SEPARATOR
        out.append(s[i:j] + MASK if whole else s[i:k])
        i = k
    out.append(s[i:])
    return "".join(out)


# ------------------------------------------------------------------ the process-wide redactor

_env_names: list[str] = list(DEFAULT_SECRET_ENVS)
_lock = threading.Lock()
_cache: tuple[tuple[str, ...], Redactor] | None = None


def watch_env(*names: str) -> None:
    """Treat the values of these environment variables as secrets from now on."""
    with _lock:
        for name in names:
            if name and name not in _env_names:
                _env_names.append(name)


def current() -> Redactor:
    """The redactor for the secrets known now; cheap when nothing changed since the last call."""
    global _cache
    values = tuple(v for v in (os.environ.get(n) for n in _env_names) if v)
    cached = _cache
    if cached is not None and cached[0] == values:
        return cached[1]
    redactor = Redactor(values)
    _cache = (values, redactor)
    return redactor


def redact(text: str) -> str:
    """`text` with every known secret and every secret-shaped substring replaced by `***`."""
    return current().text(text)


class RedactingWriter:
    """A text file wrapper whose every `write` is redacted (for csv.writer and line writers)."""

    def __init__(self, fh: Any):
        self._fh = fh
        self._redactor = current()

    def write(self, text: str) -> int:
        return self._fh.write(self._redactor.text(text))


def redact_value(obj: Any) -> Any:
    """Like `redact`, for strings inside dicts and lists (JSON values)."""
    return current().value(obj)
