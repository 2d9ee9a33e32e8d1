"""Token and dollar accounting per role (summarizer, answerer, judge, probe writer).

The ledger can also keep every call (:class:`CallRecord`) so tracking can
turn them into MLflow traces after the job; it is off unless asked for,
because a long sweep's prompts add up. Kept calls go to a temporary JSON Lines
file as they land, not to memory: each request holds a rendered context, and a
job of a thousand calls would otherwise hold a thousand of them until logging.
A writer thread encodes them, so the LLM loop only hands each one over; a request keeps
its prompt but not the long strings in it (a point's rendered context, ~100 KB, stored
once as the run's ``contexts/`` file): each is a marker of its length
(``benchmark.llm.encoded.left_out``), which the trace shows as a pointer to that file.
"""

from __future__ import annotations

import queue
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from benchmark.llm.encoded import JsonText, left_out

if TYPE_CHECKING:
    from benchmark.llm.endpoint import Endpoint


class Usage(BaseModel):
    """Counts for one role. Tokens and dollars cover every reply used, cached or not,
    so a rerun from the cache reports the same cost as the run that paid for it."""

    calls: int = Field(0, description="requests sent to the server (not cache hits)")
    cache_hits: int = 0
    retries: int = 0
    failures: int = Field(0, description="failed requests and invalid replies")
    fallbacks: int = Field(
        0, description="steps down the structured-output ladder (benchmark.llm.structured_output)"
    )
    truncated: int = Field(0, description="plain replies used although cut at max_tokens")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    clipped: int = Field(0, description="requests whose context was cut to fit context_window")
    clipped_tokens: int = Field(0, description="prompt tokens those cuts removed")
    too_long: int = Field(0, description="requests not sent: over context_window with no context")

    def add(self, other: Usage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


_FIELDS = tuple(Usage.model_fields)


@dataclass(frozen=True)
class CallPurpose:
    """What a call served, so its trace can name the probe (or point) it was for.

    Set by the stage that makes the call and carried down to the ledger; never
    sent to a model. A plain dataclass: built once per probe, on the hot path.
    """

    transcript: str
    point: int
    policy: str = ""
    probe_id: str | None = None  # None: a call for the point (the probe writer's)
    probe_type: str | None = None
    arm: str = "compacted"  # or "control": the probe asked of the uncompacted session


class CallRecord(BaseModel):
    """One request to an endpoint as sent and as answered (never the key)."""

    role: str
    endpoint: str
    model: str
    api: str = Field(description="chat.completions, responses or responses.compact")
    request: dict[str, Any] = Field(description="the request body minus transport settings")
    reply: str | None = None
    error: str | None = None
    cached: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    input_cost_usd: float = Field(0.0, description="the prompt's share of ``cost_usd``")
    start_ns: int
    end_ns: int
    purpose: CallPurpose | None = None


# Longest reply a kept call holds: its trace shows it; the whole text is in the run's
# answers or judge records (a 1 MB reply is not copied into every trace too).
TRACE_REPLY_CHARS = 20_000


def _kept_reply(text: object) -> str | None:
    if not isinstance(text, str) or len(text) <= TRACE_REPLY_CHARS:
        return text if isinstance(text, str) else None
    cut = len(text) - TRACE_REPLY_CHARS
    return f"{text[:TRACE_REPLY_CHARS]}\n[{cut:,} more characters of this reply not kept here]"


def kept_request(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as a kept call holds it: each message's long strings left out (markers)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    kept = [
        {**m, "content": left_out(m["content"])}
        if isinstance(m, dict) and isinstance(m.get("content"), JsonText)
        else m
        for m in messages
    ]
    return {**body, "messages": kept}


class UsageLedger:
    """Thread-safe running totals per role; ``metrics()`` flattens them for tracking."""

    def __init__(self, keep_calls: bool = False) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, list[float]] = {}  # plain counters: this is per call
        self.keep_calls = keep_calls
        self._spill: IO[str] | None = None  # the kept calls, one JSON line each
        self._pending: queue.Queue[CallRecord | None] | None = None  # to the writer thread

    def record(self, role: str, usage: Usage | None = None, **counts: float) -> None:
        """Add ``usage`` (or the named counts, which is cheaper) to ``role``'s totals."""
        values = usage.model_dump() if usage is not None else counts
        with self._lock:
            totals = self._roles.get(role)
            if totals is None:
                totals = self._roles[role] = [0] * len(_FIELDS)
            for i, name in enumerate(_FIELDS):
                if name in values:
                    totals[i] += values[name]

    def record_call(self, call: CallRecord) -> None:
        """Count ``call`` (a failure when it has an error) and keep it if asked to."""
        usage = Usage(
            calls=int(not call.cached),
            cache_hits=int(call.cached),
            failures=int(call.error is not None),
            input_tokens=call.input_tokens,
            output_tokens=call.output_tokens,
            cost_usd=call.cost_usd,
        )
        self.record(call.role, usage)
        if self.keep_calls:
            with self._lock:
                if self._pending is None:
                    self._start_writer()
                assert self._pending is not None
            self._pending.put(call)

    def _start_writer(self) -> None:
        """The file and the thread writing kept calls to it (ends with the ledger)."""
        spill = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (the ledger's)
        pending: queue.Queue[CallRecord | None] = queue.Queue()
        lock = self._lock

        def write() -> None:
            while (call := pending.get()) is not None:
                try:
                    call.request = kept_request(call.request)
                    line = call.model_dump_json() + "\n"
                    with lock:
                        spill.write(line)
                finally:
                    pending.task_done()  # calls() waits for this, whatever happened
            spill.close()

        threading.Thread(target=write, name="ledger-calls", daemon=True).start()
        weakref.finalize(self, pending.put, None)
        self._spill, self._pending = spill, pending

    def account(
        self,
        role: str,
        endpoint: Endpoint,
        api: str,
        body: dict[str, Any],
        start_ns: int,
        value: dict[str, Any] | None,
        *,
        error: str | None = None,
        cached: bool = False,
        purpose: CallPurpose | None = None,
    ) -> None:
        """Count one exchange with ``endpoint`` (a reply ``value`` or an ``error``); the
        request and reply are kept as a :class:`CallRecord` only when calls are kept."""
        tokens_in = int((value or {}).get("input_tokens", 0))
        tokens_out = int((value or {}).get("output_tokens", 0))
        cost = endpoint.cost(tokens_in, tokens_out)
        if not self.keep_calls:  # the hot path: counts only
            self.record(
                role,
                calls=int(not cached),
                cache_hits=int(cached),
                failures=int(error is not None),
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cost_usd=cost,
            )
            return
        self.record_call(  # built from plain values: no validation on the LLM loop
            CallRecord.model_construct(
                role=role,
                endpoint=endpoint.name,
                model=endpoint.model,
                api=api,
                request=body,
                reply=None if value is None else _kept_reply(value.get("text")),
                error=None if error is None else f"{role} call to {endpoint.name}: {error}",
                cached=cached,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cost_usd=cost,
                input_cost_usd=endpoint.cost(tokens_in, 0),
                start_ns=start_ns,
                end_ns=time.time_ns(),
                purpose=purpose,
            )
        )

    def calls(self) -> list[CallRecord]:
        """The kept calls, in the order they landed (read back from their file)."""
        if self._pending is None:
            return []
        self._pending.join()  # every call handed over is written
        with self._lock:
            spill = self._spill
            assert spill is not None
            spill.seek(0)
            calls = [CallRecord.model_validate_json(line) for line in spill]
            spill.seek(0, 2)  # later calls append
            return calls

    def call_lines(self, offset: int = 0) -> tuple[list[str], int]:
        """The kept calls that landed after ``offset`` in their file, as their JSON lines,
        and the offset after them: a job sends its finished points' calls to its tracking
        process as it goes (``benchmark.tracking.trace_stream``), each line once."""
        if self._pending is None:
            return [], offset
        self._pending.join()  # every call handed over is written
        with self._lock:
            spill = self._spill
            assert spill is not None
            spill.seek(offset)
            lines = spill.readlines()
            end = spill.tell()
            spill.seek(0, 2)  # later calls append
            return lines, end

    def roles(self) -> dict[str, Usage]:
        with self._lock:
            return {
                role: Usage(**dict(zip(_FIELDS, totals, strict=True)))
                for role, totals in self._roles.items()
            }

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        total = Usage()
        for role, usage in self.roles().items():
            total.add(usage)
            for key, value in usage.model_dump().items():
                out[f"llm/{role}/{key}"] = value
        if self._roles:
            for key, value in total.model_dump().items():
                out[f"llm/{key}"] = value
        # Summation order varies with concurrency; rounding keeps reruns identical.
        return {k: round(v, 9) if isinstance(v, float) else v for k, v in out.items()}
