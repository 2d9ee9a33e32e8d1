"""Giving up an endpoint that has never worked: its later calls fail at once.

Each request is bounded (``timeout_s``, ``deadline_s``, ``retry_after_max_s``), but a
job is not: an endpoint that fails every call (an empty or HTML body, a body that
never ends, a 429 storm, a server that never sends headers) would cost every probe
its full round of tries, so the job's time grew with probes x tries. So, per
endpoint (base_url and model, shared by every role on it), until its first usable
reply in this job:

* every failed try that a retry could mend (429, 5xx, timeouts, unreadable bodies)
  is counted; the ``give_up_tries``-th one marks the endpoint broken;
* so does a failure, or a planned retry wait, that would end more than
  ``give_up_s`` after its first failure.

A broken endpoint fails every later call at once (sleeping retries wake and fail
too) with one message naming the role, the endpoint, its base_url and the last
failure; the job ends as for any failed probes (``execution.fail_on_error``), as
for an unreachable one (:mod:`benchmark.llm.reach`). Once an endpoint has given a
usable reply it is never given up: its faults stay transient and are retried as
before (a server that worked is worth waiting for).

A connection refused before any answer is :mod:`benchmark.llm.reach`'s case and is
not counted here; a 4xx other than 408/409/429 fails its call without retries and
says something about that request, not the server, so it is not counted either.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from benchmark.llm.endpoint import Endpoint, normalise_base_url
from benchmark.llm.reach import shown_url

_POLL_S = 0.05  # how often a sleeping retry looks whether its endpoint was given up


@dataclass
class Breaker:
    """What this job knows of one endpoint's health: worked once, or given up (why)."""

    worked: bool = False
    failures: int = 0  # failed tries, while it has not worked
    first_failure: float | None = None  # monotonic time of the first of them
    last: str = ""  # the last failure, as a message shows it
    broken: str | None = None  # why it was given up; None while it is not

    def reset(self) -> None:
        """As new: the next job tries the endpoint again."""
        self.worked, self.failures, self.first_failure = False, 0, None
        self.last, self.broken = "", None

    def succeeded(self) -> None:
        """A usable reply: the endpoint works, and is never given up in this job."""
        self.worked = True

    def failed(self, what: str, endpoint: Endpoint) -> bool:
        """Count a failed try (``what`` says why); True when the endpoint is now given up."""
        if self.worked or self.broken is not None:
            return self.broken is not None
        now = time.monotonic()
        self.failures += 1
        self.last = what
        if self.first_failure is None:
            self.first_failure = now
        max_tries, max_s = endpoint.give_up_tries, endpoint.give_up_s
        if max_tries and self.failures >= max_tries:
            self.broken = f"no usable reply in its first {self.failures} tries"
        elif max_s is not None and now - self.first_failure > max_s:
            self.broken = f"no usable reply in {now - self.first_failure:.0f} s of tries"
        return self.broken is not None

    async def wait(self, seconds: float, endpoint: Endpoint) -> bool:
        """A retry's wait of ``seconds``; False (at once, or as soon as it is so) when the
        endpoint is given up: the wait would end past ``give_up_s`` from its first
        failure, or another call gave it up meanwhile."""
        if self.worked or seconds <= 0:
            await asyncio.sleep(seconds)
            return True
        max_s = endpoint.give_up_s
        start = time.monotonic()
        first = self.first_failure if self.first_failure is not None else start
        if self.broken is None and max_s is not None and start + seconds - first > max_s:
            self.broken = (
                f"no usable reply in its first {self.failures} tries, and a retry wait of "
                f"{seconds:g} s would pass give_up_s"
            )
        end = start + seconds
        while self.broken is None and not self.worked and (left := end - time.monotonic()) > 0:
            await asyncio.sleep(min(left, _POLL_S))
        if self.worked and (left := end - time.monotonic()) > 0:
            await asyncio.sleep(left)  # it works again: the rest of the wait as asked
        return self.broken is None

    def message(self, role: str, endpoint: Endpoint) -> str:
        """The line every call on a given-up endpoint fails with."""
        e = endpoint
        limits = f"give_up_tries={e.give_up_tries}"
        if e.give_up_s is not None:
            limits += f", give_up_s={e.give_up_s:g}"
        return (
            f"{role} call to {e.name} failed: endpoint '{e.name}' ({e.model}) at "
            f"{shown_url(e.base_url)} given up for this job, {self.broken} ({limits}); "
            f"last failure: {self.last}"
        )


_STATE: dict[tuple[str, str], Breaker] = {}  # per (normalised base_url, model), this job


def breaker_of(base_url: str | None, model: str) -> Breaker:
    """The shared breaker of the endpoint at ``base_url`` serving ``model``."""
    key = (normalise_base_url(base_url), model)
    state = _STATE.get(key)
    if state is None:
        state = _STATE[key] = Breaker()
    return state


def forget_breakers() -> None:
    """Start over (end of a job): the next job tries every endpoint again. In place, as
    clients hold their breaker."""
    for state in _STATE.values():
        state.reset()
