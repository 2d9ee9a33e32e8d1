"""The one background event loop every LLM call of the process runs on.

Stages stay synchronous (plug-ins implement plain methods), but their calls
share one loop on a daemon thread, so one aiohttp pool serves them all and
the pipeline can keep hundreds of probes in flight without a thread each.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class _Loop:
    """A private event loop on a daemon thread, started on first use."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                # Everything alive now (imports, config, transcripts) lives as long as the
                # job: freezing it keeps full collections from scanning it, which stalled
                # the loop for tens of ms at a time (64 calls in flight: 0.88 -> 0.90 of ideal).
                # Only the young generations are collected first: a full collection of a
                # prepared job's heap (~700K objects) took 0.8-1.4 s and freed nothing.
                gc.collect(1)
                gc.freeze()
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="llm-loop", daemon=True).start()
                cls._loop = loop
            return cls._loop

    @classmethod
    def run(cls, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it (never call from the loop itself)."""
        return asyncio.run_coroutine_threadsafe(coro, cls.get()).result()


def submit(coro: Coroutine[Any, Any, T]) -> Future[T]:
    """Schedule ``coro`` on the loop; the caller collects the result later."""
    return asyncio.run_coroutine_threadsafe(coro, _Loop.get())


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the loop and wait for its result."""
    return _Loop.run(coro)


def cancel_all(timeout_s: float = 10.0) -> None:
    """Cancel every task on the loop and wait (up to ``timeout_s``) until they have unwound.

    After Ctrl-C the main thread stops waiting, but the calls it started (probes, a
    summary, a probe writer's) still run on the loop; cancelling them closes their
    requests, and completed calls are already in the reply cache. A loop never
    started has nothing to cancel.
    """
    loop = _Loop._loop
    if loop is None or loop.is_closed():
        return

    async def cancel() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    # A task that ignores cancellation is left to the process's exit.
    with contextlib.suppress(TimeoutError):
        asyncio.run_coroutine_threadsafe(cancel(), loop).result(timeout_s + 1)
