"""When and how long to wait before asking again: one policy for every LLM call.

Transient failures (429, 408, 409, 5xx, timeouts, dropped connections) and
invalid replies (a judge reply that does not parse, a score off the scale)
go through the same retry loop, built on ``tenacity``: exponential backoff
with jitter, capped, and a server's ``Retry-After`` wins when it gives one.
The SDK's own retries are off, so every retry is counted and bounded here.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from typing import Any

import openai
import tenacity

# Longest wait a Retry-After header may impose on us.
MAX_RETRY_AFTER_S = 120.0


class InvalidReply(Exception):
    """A reply that arrived but cannot be used; retried like a transient failure."""


class MalformedReply(Exception):
    """The server answered 200 with a body we cannot read; retried like a 5xx."""


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, InvalidReply | MalformedReply | openai.APIConnectionError):  # + timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return code in (408, 409, 429) or code >= 500
    return False


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, when.timestamp() - time.time()) if when else None


class _WaitRetryAfter(tenacity.wait.wait_base):
    """No wait after an invalid reply; else the server's ``Retry-After`` when present,
    else the fallback backoff."""

    def __init__(self, fallback: tenacity.wait.wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, InvalidReply):
            return 0.0  # the server is fine, the reply was not: waiting would not help
        asked = retry_after(exc)
        if asked is not None:
            return min(asked, MAX_RETRY_AFTER_S)
        return self.fallback(retry_state)


def first_wait(exc: BaseException, initial_s: float) -> float:
    """The wait after a first failed try (what :func:`retrying` would wait)."""
    if isinstance(exc, InvalidReply):
        return 0.0
    asked = retry_after(exc)
    if asked is not None:
        return min(asked, MAX_RETRY_AFTER_S)
    return initial_s + random.uniform(0, initial_s)


def retrying(
    max_retries: int,
    initial_s: float,
    max_s: float,
    on_retry: Callable[[tenacity.RetryCallState], Any] | None = None,
    first: int = 0,
) -> tenacity.AsyncRetrying:
    """An ``async for attempt in retrying(...)`` loop: at most ``max_retries`` retries.

    ``first``: tries already made (and waited for), so the backoff continues from there.
    """
    return tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=_WaitRetryAfter(
            tenacity.wait_exponential_jitter(
                multiplier=initial_s * 2**first, max=max_s, jitter=initial_s
            )
        ),
        retry=tenacity.retry_if_exception(is_transient),
        before_sleep=on_retry,
        reraise=True,
    )
