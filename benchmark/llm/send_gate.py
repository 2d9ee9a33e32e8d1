"""Requests to a server held until the job lets them go; replies from the cache are not.

A job never spends a call on a store that cannot take its run, so its first request waits
until the tracking store is open. Waiting for the store before submitting anything also
held back the calls the reply cache answers, which cost nothing: a rerun's LLM phase then
started only once MLflow was imported and the store open. Now a job that prepares points
in worker processes submits each point's probes as it arrives and only the requests that
would reach a server wait here (``hold``, then ``release``); a store that cannot be used
releases them with its error, and they fail without a request.
"""

from __future__ import annotations

import asyncio
import threading

from benchmark.llm.loop import _Loop


class StoreNotReady(RuntimeError):
    """The job stops before its calls: its tracking store cannot take the run."""


class _Hold:
    """One hold: its waiters, and what they are told when it ends (None: go)."""

    def __init__(self) -> None:
        self.released = False
        self.error: str | None = None
        self.event: asyncio.Event | None = None  # created on the LLM loop, when first waited on


_LOCK = threading.Lock()
_HOLD: list[_Hold] = []  # the hold in force, if any


def hold() -> None:
    """From now on, requests wait for :func:`release` (the reply cache still answers)."""
    with _LOCK:
        _HOLD[:] = [_Hold()]


def release(error: str | None = None) -> None:
    """Let the held requests go; or (``error``) fail each of them with it, sending nothing,
    and every request after them until :func:`reset_gate`."""
    with _LOCK:
        if not _HOLD or _HOLD[0].released:
            return
        held = _HOLD[0]
        held.released, held.error = True, error
        if error is None:
            _HOLD.clear()
        event = held.event
    loop = _Loop._loop
    if event is not None and loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(event.set)


def reset_gate() -> None:
    """The end of a job: requests still held fail unsent; the next job starts free."""
    release(error="the job ended before its tracking store was ready")
    with _LOCK:
        _HOLD.clear()


async def passed() -> None:
    """Wait, on the LLM loop, until requests may go; raises ``StoreNotReady`` if they may not."""
    with _LOCK:
        held = _HOLD[0] if _HOLD else None
        if held is None:
            return
        if held.released:
            event = None
        else:
            if held.event is None:
                held.event = asyncio.Event()
            event = held.event
    if event is not None:
        await event.wait()
    if held.error is not None:
        raise StoreNotReady(held.error)
