"""Whether an endpoint can be reached at all: a dead address fails the job's calls at once.

A refused connection, a host name that does not resolve or a URL no client can
use is not a passing fault like a 503 or a read timeout: retrying it call by
call would spend every retry of every probe before the job ends with nothing
but a failure count. So a connection that cannot be made, on an endpoint that
has not answered once in this job, is retried briefly (a server still
starting gets one backoff interval), then the endpoint is marked unreachable
and every later call on it fails at once with the same message, which names
the endpoint and its base_url. Once an endpoint has answered (any HTTP status),
a failed connection is transient again, as for a server that restarts.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from benchmark.llm.endpoint import normalise_base_url

try:  # the HTTP models the SDK's exceptions carry
    import httpx2 as httpx  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

# Tries of one call that meet a refused connection before the endpoint is marked
# unreachable (bounded by the endpoint's max_retries + 1).
CONNECT_TRIES = 2
# Reasons no retry can change: the URL itself is unusable.
_PERMANENT = ("invalid URL", "not an http(s) URL")


@dataclass
class Reach:
    """What this job knows of one base_url: answered once, or found unreachable (why)."""

    reached: bool = False
    dead: str | None = None


_STATE: dict[str, Reach] = {}  # per normalised base_url, for the current job


def reach_of(base_url: str | None) -> Reach:
    """The shared state of ``base_url`` (every role and model on it sees the same)."""
    key = normalise_base_url(base_url)
    state = _STATE.get(key)
    if state is None:
        state = _STATE[key] = Reach()
    return state


def forget_all() -> None:
    """Start over (end of a job): the next job tries every endpoint again. In place, as
    clients hold their state."""
    for state in _STATE.values():
        state.reached, state.dead = False, None


def connect_failure(exc: BaseException) -> str | None:
    """Why no connection could be made (``"connection refused"``...), or None when
    ``exc`` is not a failure to connect (a timeout, a dropped reply, an HTTP error)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        reason = _reason(cause)
        if reason is not None:
            return reason
        cause = cause.__cause__ or cause.__context__
    return None


def _reason(exc: BaseException) -> str | None:
    if isinstance(exc, aiohttp.NonHttpUrlClientError):
        return "not an http(s) URL"
    if isinstance(exc, aiohttp.InvalidURL | httpx.InvalidURL):
        return "invalid URL"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return None  # the aiohttp error it wraps says which (invalid, or not http)
    if isinstance(exc, aiohttp.ClientConnectorDNSError | socket.gaierror):
        return "host name not resolved"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, aiohttp.ClientConnectorError):
        inner = exc.os_error
        if isinstance(inner, ConnectionRefusedError):
            return "connection refused"
        if isinstance(inner, socket.gaierror):
            return "host name not resolved"
        return f"cannot connect ({inner.strerror or type(inner).__name__})"
    return None


def is_permanent(reason: str) -> bool:
    return reason in _PERMANENT


def shown_url(base_url: str | None) -> str:
    """``base_url`` as a message may show it: no user info, query or fragment."""
    url = normalise_base_url(base_url)
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return url.rpartition("@")[2].split("?")[0]
