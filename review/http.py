"""The one HTTP layer: every harvester and the downloader fetch through `HttpClient`.

Why one layer: politeness and robustness must hold whatever the caller. Each request
passes a per-host gate (at most `per_host_concurrency` in flight, request starts spaced by
`1 / per_host_rate`), is retried on 429, 5xx, timeouts and dropped connections with
exponential backoff plus jitter, honours Retry-After (seconds or an HTTP date; the pause
applies to the whole host), and carries a User-Agent naming the tool. Redirects are
followed here hop by hop so that every hop passes its own host's gate, and credentials
never follow a redirect to another host. Hosts are identified by `host:port`.

Responses that retrying cannot fix (404, 403, 410, ...) are returned to the caller, who
records them. When retries run out, `FetchError` is raised with a short `reason`.
URLs in messages are stripped of credentials and token-like query parameters.

Every answer is read through a guarded reader: a body longer than
`http.max_response_bytes` (decoded bytes, or a larger Content-Length) stops with
`ResponseTooLarge` naming the URL, so an endless answer costs a bounded amount of memory.
The cap is one mechanism for all three client libraries: `CappedAdapter` for requests
(this client, and PyGithub's session), `CappedTransport` for httpx (label-studio-sdk).
JSON is parsed by `load_json`, which refuses nesting deeper than `http.max_json_depth`
(and never lets a RecursionError escape), so one hostile answer is one bad item.

A redirect from a public address into a loopback, private or link-local one is refused
before it is requested (`FetchError`, reason `internal_redirect`): a publisher's URL must
not make the tool read an internal service and keep its answer. A URL the user configured
may point at loopback directly (local mirrors, the sample survey, the tests), and so may
a redirect that starts from an internal address; `http.allow_internal_redirects` lifts
the guard for a mirror that redirects inwards. A host name is judged by the addresses it
resolves to; one that does not resolve here (reached through a proxy) counts as public.
"""

from __future__ import annotations

import ipaddress
import json
import random
import socket
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Any, Iterator
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx
import requests
from requests.adapters import HTTPAdapter

from review import __version__
from review.errors import FetchError
from review.log import get_logger
from review.redact import SECRET_PARAMS as _SECRET_PARAMS
from review.settings import HttpSettings

log = get_logger("http")

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 507, 509, 520, 521, 522, 523, 524})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 10
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
SECRET_PARAMS = frozenset(_SECRET_PARAMS)
_NEVER_RESOLVE = (".invalid", ".test", ".example")  # RFC 2606/6761 names: no DNS query needed
_SHARED_SPACE = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: internal, yet not "private"


def user_agent(contact: str = "") -> str:
    """`review/<version> (rogue-review; <contact>)`: names the tool so operators can reach us."""
    extra = f"; {contact.strip()}" if contact.strip() else ""
    return f"review/{__version__} (rogue-review literature review tool{extra})"


def host_key(url: str) -> str:
    """`host:port` of a URL (default ports filled in): the unit of per-host limits."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a malformed port: the request itself will fail with bad_url
        return url
    return f"{host}:{port}"


def host_rate(settings: HttpSettings, key: str) -> float:
    """Requests per second allowed to `key` (host:port): `host_rates` by host:port or host, else `per_host_rate`."""
    rates = {k.lower(): v for k, v in settings.host_rates.items()}
    return rates.get(key, rates.get(key.rsplit(":", 1)[0], settings.per_host_rate))


def redact_url(url: str) -> str:
    """The URL without user:password and with token-like query values replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_PARAMS for k, _ in pairs):
            query = urlencode([(k, "***" if k.lower() in SECRET_PARAMS else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def is_internal_ip(value: str) -> bool:
    """Loopback, private, link-local, unspecified, reserved, multicast or CGNAT: not a public address."""
    try:
        ip = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_reserved
            or ip.is_multicast or (isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_SPACE))


def resolve_host(host: str) -> list[str]:
    """The addresses a host name resolves to here (empty when it does not resolve)."""
    if host.endswith(_NEVER_RESOLVE) or host in ("invalid", "test", "example"):
        return []
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})
    except (OSError, UnicodeError):
        return []


def address_kind(host: str, resolve=resolve_host) -> str:  # type: ignore[no-untyped-def]
    """'internal' when the host is or resolves to any internal address, else 'public'."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "internal"
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return "internal" if any(is_internal_ip(a) for a in resolve(host)) else "public"
    return "internal" if is_internal_ip(host) else "public"


def safe_headers(headers: dict[str, str] | None) -> dict[str, str]:
    """Headers fit for a log line: secrets masked."""
    return {k: ("***" if k.lower() in SECRET_HEADERS else v) for k, v in (headers or {}).items()}


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = now if now is not None else time.time()
    return max(0.0, when.timestamp() - current)


@dataclass
class _Host:
    """Gate for one host: a semaphore for concurrency and a schedule for the rate."""

    slots: threading.BoundedSemaphore
    rate: float = 0.0  # starts per second (0 = no limit)
    next_start: float = 0.0  # monotonic time before which no request may start
    lock: threading.Lock = field(default_factory=threading.Lock)


class HttpClient:
    """A pooled `requests.Session` behind per-host limits, retries and backoff.

    Thread-safe: share one client between worker threads so the per-host limits hold for
    the whole process. With `stream=True` the host slot stays taken until the response is
    closed, so use it as `with client.get(url, stream=True) as resp: ...`.
    """

    def __init__(self, settings: HttpSettings, *, resolve=resolve_host) -> None:  # type: ignore[no-untyped-def]
        self.settings = settings
        self._resolve = resolve  # host name -> addresses; tests give names fixed addresses
        self.user_agent = user_agent(settings.user_agent)
        self._hosts: dict[str, _Host] = {}
        self._hosts_lock = threading.Lock()
        self._stop = threading.Event()
        self.session = requests.Session()
        pool = max(10, settings.per_host_concurrency * 2)
        adapter = CappedAdapter(settings.max_response_bytes, pool_connections=32, pool_maxsize=pool, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = self.user_agent
        self.session.trust_env = True

    # -- public -------------------------------------------------------------------------

    def get(self, url: str, *, headers: dict | None = None, stream: bool = False,
            timeout: float | None = None, allow_redirects: bool = True) -> requests.Response:
        """GET `url` politely; returns the final response (after redirects) unless it gives up.

        Raises `FetchError` (reason: timeout, connection_error, gave_up_after_retries,
        too_many_redirects, bad_url, internal_redirect) when no usable response could be had.
        """
        history: list[requests.Response] = []
        current = url
        hop_headers = dict(headers or {})
        for _hop in range(MAX_REDIRECTS + 1):
            resp = self._get_with_retries(current, hop_headers, stream=stream, timeout=timeout)
            if not allow_redirects or resp.status_code not in REDIRECT_STATUSES or "location" not in resp.headers:
                resp.history = history
                return resp
            target = urljoin(resp.url or current, resp.headers["location"])
            resp.close()
            self._check_redirect(url, current, target)
            history.append(resp)
            if host_key(target) != host_key(current):
                # Credentials are for the host they were given to, never the next one.
                hop_headers = {k: v for k, v in hop_headers.items() if k.lower() not in SECRET_HEADERS}
                log.debug("redirect to another host: %s -> %s", redact_url(current), redact_url(target))
            current = target
        raise FetchError(f"more than {MAX_REDIRECTS} redirects", item=redact_url(url), reason="too_many_redirects")

    def read_json(self, resp: requests.Response, what: str) -> Any:
        """The body of `resp` as JSON through `load_json`; `FetchError` (bad_response) naming `what` otherwise."""
        try:
            return load_json(resp.content, max_depth=self.settings.max_json_depth)
        except ValueError as exc:
            raise FetchError(f"{what}: not usable JSON ({exc})", item=redact_url(resp.url or ""),
                             reason="bad_response") from None

    def _check_redirect(self, url: str, source: str, target: str) -> None:
        """Refuse a hop from a public address into an internal one (see the module docstring)."""
        if self.settings.allow_internal_redirects:
            return
        try:
            target_host, source_host = urlsplit(target).hostname, urlsplit(source).hostname
        except ValueError:
            return  # a malformed target fails as bad_url on the next hop
        if not target_host or not source_host:
            return
        if address_kind(target_host, self._resolve) != "internal":
            return
        if address_kind(source_host, self._resolve) == "internal":
            return  # an internal service (a local mirror) redirecting within the inside
        log.debug("%s: redirect from %s into the internal address %s refused", redact_url(url),
                    host_key(source), host_key(target))
        raise FetchError(f"redirect from a public address into the internal address {host_key(target)} refused",
                         item=redact_url(url), reason="internal_redirect",
                         hint="set http.allow_internal_redirects = true for a mirror that redirects inwards")

    def backoff_delay(self, attempt: int) -> float:
        """Exponential backoff with jitter for retry number `attempt` (0-based), capped."""
        base = min(self.settings.max_backoff, self.settings.backoff * (2 ** attempt))
        return min(self.settings.max_backoff, base * (0.5 + random.random() / 2))

    def pause_host(self, url: str, seconds: float) -> None:
        """Let no request start to this URL's host for `seconds` (Retry-After, 503s)."""
        gate = self._gate(url)
        with gate.lock:
            gate.next_start = max(gate.next_start, time.monotonic() + seconds)

    def sleep(self, seconds: float) -> None:
        """Wait, but wake at once when the client is closed."""
        if seconds > 0:
            self._stop.wait(seconds)

    def close(self) -> None:
        self._stop.set()
        self.session.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------

    def _gate(self, url: str) -> _Host:
        key = host_key(url)
        with self._hosts_lock:
            gate = self._hosts.get(key)
            if gate is None:
                gate = _Host(threading.BoundedSemaphore(max(1, self.settings.per_host_concurrency)),
                             rate=host_rate(self.settings, key))
                self._hosts[key] = gate
            return gate

    def _wait_for_turn(self, gate: _Host) -> None:
        """Reserve the next start time for this host, then sleep until it comes."""
        rate = gate.rate
        with gate.lock:
            now = time.monotonic()
            start = max(now, gate.next_start)
            if rate > 0:
                gate.next_start = start + 1.0 / rate
        self.sleep(start - time.monotonic())

    def _get_with_retries(self, url: str, headers: dict, *, stream: bool, timeout: float | None) -> requests.Response:
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError("not an http(s) URL", item=redact_url(url), reason="bad_url")
        gate = self._gate(url)
        wait = self.settings.timeout if timeout is None else timeout
        attempts = self.settings.retries + 1
        last = ""
        for attempt in range(attempts):
            if self._stop.is_set():
                raise FetchError("client closed", item=redact_url(url), reason="interrupted")
            gate.slots.acquire()
            released = False
            try:
                self._wait_for_turn(gate)
                try:
                    resp = self.session.get(url, headers=headers, stream=stream, timeout=wait,
                                            allow_redirects=False)
                except requests.Timeout:
                    reason, last, retry_after = "timeout", f"no answer within {wait:g}s", None
                except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                    # A read timeout while requests reads a non-streamed body arrives wrapped.
                    reason = "timeout" if "timed out" in str(exc).lower() else "connection_error"
                    last, retry_after = _short(exc), None
                except requests.exceptions.InvalidURL:
                    raise FetchError("invalid URL", item=redact_url(url), reason="bad_url") from None
                else:
                    if resp.status_code not in RETRY_STATUSES:
                        if stream:
                            _release_on_close(resp, gate.slots)
                            released = True
                        return resp
                    reason, last = "gave_up_after_retries", f"http_{resp.status_code}"
                    retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                    resp.close()
            finally:
                if not released:
                    gate.slots.release()
            if attempt + 1 >= attempts:
                break
            delay = self.backoff_delay(attempt)
            if retry_after is not None:
                delay = min(self.settings.max_backoff, max(retry_after, 0.0))
                self.pause_host(url, delay)  # the whole host asked us to wait, not just this URL
            log.info("%s: %s, retry %d/%d in %.1fs", redact_url(url), last, attempt + 1,
                     self.settings.retries, delay)
            self.sleep(delay)
        raise FetchError(f"{last} (gave up after {attempts} attempts)", item=redact_url(url), reason=reason)


def _release_on_close(resp: requests.Response, slots: threading.BoundedSemaphore) -> None:
    """Keep the host slot until the streamed body is closed (exactly once)."""
    original = resp.close
    done = threading.Lock()
    state = {"open": True}

    def close() -> None:
        try:
            original()
        finally:
            with done:
                if state["open"]:
                    state["open"] = False
                    slots.release()

    resp.close = close  # type: ignore[method-assign]


def _short(exc: BaseException) -> str:
    """A one-line description of a connection error, without URLs that could hold secrets."""
    text = type(exc).__name__
    cause = exc.args[0] if exc.args else None
    reason = getattr(cause, "reason", None)
    if reason is not None:
        text += f": {type(reason).__name__}"
    return text


# ------------------------------------------------------------------ the guarded reader

class ResponseTooLarge(FetchError):
    """An answer longer than `http.max_response_bytes`: refused before it fills the memory."""

    def __init__(self, url: str, limit: int, declared: int | None = None):
        said = f" (Content-Length {declared})" if declared is not None else ""
        super().__init__(f"answer larger than {limit} bytes{said} refused", item=redact_url(url), reason="too_large",
                         hint="raise http.max_response_bytes if this service really sends answers that large")
        self.limit = limit


def _declared_length(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _Meter:
    """Counts the bytes of one answer and raises `ResponseTooLarge` past the limit."""

    def __init__(self, limit: int, url: str):
        self.limit, self.url, self.seen = limit, url, 0

    def add(self, n: int) -> None:
        self.seen += n
        if self.limit > 0 and self.seen > self.limit:
            raise ResponseTooLarge(self.url, self.limit)


class _CappedRaw:
    """A urllib3 response whose `stream` and `read` stop at the limit (decoded bytes, as requests reads them)."""

    _own = ("_raw", "_meter")

    def __init__(self, raw: Any, meter: _Meter):
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_meter", meter)

    def stream(self, amt: int | None = 2 ** 16, decode_content: bool | None = None) -> Iterator[bytes]:
        for chunk in self._raw.stream(amt, decode_content=decode_content):
            self._meter.add(len(chunk))
            yield chunk

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        if amt is not None:
            data = self._raw.read(amt, *args, **kwargs)
            self._meter.add(len(data))
            return data
        parts = []
        while True:  # an unbounded read() of an endless body would never return
            data = self._raw.read(2 ** 16, *args, **kwargs)
            if not data:
                return b"".join(parts)
            self._meter.add(len(data))
            parts.append(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._raw, name, value)


class CappedAdapter(HTTPAdapter):
    """A requests adapter whose every response body stops at `max_bytes` (0 = no cap)."""

    __attrs__ = [*HTTPAdapter.__attrs__, "max_bytes"]

    def __init__(self, max_bytes: int, **kwargs: Any):
        self.max_bytes = max_bytes
        super().__init__(**kwargs)

    def build_response(self, req: Any, resp: Any) -> requests.Response:
        response = super().build_response(req, resp)
        if self.max_bytes > 0:
            url = response.url or getattr(req, "url", "") or ""
            declared = _declared_length(response.headers.get("Content-Length"))
            if declared is not None and declared > self.max_bytes:
                response.close()
                raise ResponseTooLarge(url, self.max_bytes, declared)
            response.raw = _CappedRaw(response.raw, _Meter(self.max_bytes, url))
        return response


def cap_session(session: requests.Session, max_bytes: int, *, retries: Any = 0, pool: int = 10) -> None:
    """Mount `CappedAdapter`s on a session made by another library (PyGithub's)."""
    adapter = CappedAdapter(max_bytes, max_retries=retries, pool_connections=pool, pool_maxsize=pool)
    session.mount("http://", adapter)
    session.mount("https://", adapter)


class _CappedStream(httpx.SyncByteStream):
    """An httpx body stream that counts decoded bytes (gzip/deflate inflated to count them)."""

    def __init__(self, inner: Any, meter: _Meter, encoding: str):
        self._inner, self._meter = inner, meter
        self._inflate = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(47 if encoding != "deflate" else 15)

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._meter.add(self._decoded_size(chunk))
            yield chunk

    def _decoded_size(self, chunk: bytes) -> int:
        if self._inflate is None:
            return len(chunk)
        try:
            n = len(self._inflate.decompress(chunk, 2 ** 20))
            while self._inflate.unconsumed_tail:
                n += len(self._inflate.decompress(self._inflate.unconsumed_tail, 2 ** 20))
            return n
        except zlib.error:  # httpx's own decoder reports the broken stream; count raw bytes from here
            self._inflate = None
            return len(chunk)

    def close(self) -> None:
        self._inner.close()


class CappedTransport(httpx.BaseTransport):
    """An httpx transport whose every response body stops at `max_bytes` (0 = no cap)."""

    def __init__(self, max_bytes: int, inner: httpx.BaseTransport | None = None):
        self.max_bytes = max_bytes
        self._inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        if self.max_bytes <= 0:
            return response
        url = str(request.url)
        declared = _declared_length(response.headers.get("Content-Length"))
        if declared is not None and declared > self.max_bytes:
            response.close()
            raise ResponseTooLarge(url, self.max_bytes, declared)
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        return httpx.Response(response.status_code, headers=response.headers, request=request,
                              extensions=response.extensions,
                              stream=_CappedStream(response.stream, _Meter(self.max_bytes, url), encoding))

    def close(self) -> None:
        self._inner.close()


def capped_httpx_client(settings: HttpSettings, *, timeout: float | None = None) -> httpx.Client:
    """An httpx client (for label-studio-sdk) whose answers stop at `http.max_response_bytes`."""
    return httpx.Client(transport=CappedTransport(settings.max_response_bytes),
                        timeout=settings.timeout if timeout is None else timeout, follow_redirects=True)


def json_depth(value: Any, limit: int) -> int:
    """How deeply lists and objects nest in `value`, counted without recursion (stops past `limit`)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if limit > 0 and deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def load_json(data: bytes | str, *, max_depth: int) -> Any:
    """Parse JSON, refusing nesting deeper than `max_depth` (ValueError, never RecursionError).

    Why: the standard parser recurses, so `[[[[...` 200,000 deep ends in a RecursionError that
    kills the whole run; and every later walk over the value (redaction, storing) recurses too.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    if max_depth > 0 and json_depth(value, max_depth) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return value
