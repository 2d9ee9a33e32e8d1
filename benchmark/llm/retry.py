"""When and how long to wait before asking again: one policy for every LLM call.

Transient failures (429, 408, 409, 5xx, timeouts, dropped connections) and
invalid replies (a judge reply that does not parse, a score off the scale)
go through the same retry loop, built on ``tenacity``: exponential backoff
with jitter, capped, and a server's ``Retry-After`` wins when it gives one.
The SDK's own retries are off, so every retry is counted and bounded here.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import openai
import tenacity

# Longest wait a Retry-After header may impose on us (the endpoint's retry_after_max_s
# default): our own longest backoff (backoff_max_s), so no one wait looks like a hang; a
# server that asks more is asked again sooner, at the cost of one more request.
MAX_RETRY_AFTER_S = 30.0


class InvalidReply(Exception):
    """A reply that arrived but cannot be used; retried like a transient failure."""


class MalformedReply(Exception):
    """The server answered 200 with a body we cannot read; retried like a 5xx."""


def is_transient(exc: BaseException) -> bool:
    if getattr(exc, "final", False):  # a reply no retry can change (ReplyTooLarge)
        return False
    if isinstance(exc, InvalidReply | MalformedReply | openai.APIConnectionError):  # + timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return code in (408, 409, 429) or code >= 500
    return False


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), or None
    when it asked nothing usable: a value that is not a number or an HTTP date, negative,
    NaN or infinite is ignored (the default backoff applies); a date past is 0. The caller
    caps it (``retry_after_max_s``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = _seconds(headers.get("retry-after-ms"))
        if ms is not None:
            return ms / 1000
        value = headers.get("retry-after")
        if not isinstance(value, str):
            return None
        seconds = _seconds(value)
        if seconds is not None or not any(c.isalpha() for c in value):
            return seconds  # a number (-5, NaN aside) or nothing usable
        return _until(value)
    except Exception:  # noqa: BLE001 - a header from the network: unusable is ignored
        return None


def _seconds(value: object) -> float | None:
    """A non-negative finite number of ``value`` (a header's text), else None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 <= number < float("inf") else None


def _until(value: str) -> float | None:
    """Seconds until the HTTP date ``value`` (0 when past), or None when it is no date."""
    if len(value) > 64:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000": UTC, as RFC 5322 says
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - time.time())


class _WaitRetryAfter(tenacity.wait.wait_base):
    """No wait after an invalid reply; else the server's ``Retry-After`` when present
    (capped), else the fallback backoff."""

    def __init__(self, fallback: tenacity.wait.wait_base, cap_s: float) -> None:
        self.fallback = fallback
        self.cap_s = cap_s

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, InvalidReply):
            return 0.0  # the server is fine, the reply was not: waiting would not help
        asked = retry_after(exc)
        if asked is not None:
            return min(asked, self.cap_s)
        return self.fallback(retry_state)


def first_wait(exc: BaseException, initial_s: float, cap_s: float = MAX_RETRY_AFTER_S) -> float:
    """The wait after a first failed try (what :func:`retrying` would wait)."""
    if isinstance(exc, InvalidReply):
        return 0.0
    asked = retry_after(exc)
    if asked is not None:
        return min(asked, cap_s)
    return initial_s + random.uniform(0, initial_s)


def retrying(
    max_retries: int,
    initial_s: float,
    max_s: float,
    on_retry: Callable[[tenacity.RetryCallState], Any] | None = None,
    first: int = 0,
    retry_after_max_s: float = MAX_RETRY_AFTER_S,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tenacity.AsyncRetrying:
    """An ``async for attempt in retrying(...)`` loop: at most ``max_retries`` retries.

    ``first``: tries already made (and waited for), so the backoff continues from there.
    ``retry_after_max_s``: the longest wait a server's ``Retry-After`` may impose.
    ``sleep``: how a wait is waited (the client's ends early when its endpoint is given up).
    """
    return tenacity.AsyncRetrying(
        sleep=sleep,
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=_WaitRetryAfter(
            tenacity.wait_exponential_jitter(
                multiplier=initial_s * 2**first, max=max_s, jitter=initial_s
            ),
            retry_after_max_s,
        ),
        retry=tenacity.retry_if_exception(is_transient),
        before_sleep=on_retry,
        reraise=True,
    )
