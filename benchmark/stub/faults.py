"""What the stub can do wrong: one scripted :class:`Fault`, or a seeded random :class:`FaultMix`.

A fault is the server misbehaving the way real providers do (rate limits with
``Retry-After``, 5xx, a reply that never comes, a 200 whose body is not JSON),
so the client's retry and timeout paths run against the real SDK over sockets.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

FaultKind = Literal["429", "500", "hang", "malformed"]
FAULT_KINDS: tuple[FaultKind, ...] = ("429", "500", "hang", "malformed")


# What :meth:`Fault.patched` puts at a path to delete the field there.
DELETE = object()


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour; build with the class methods, not the constructor.

    The ``hostile`` ones (:mod:`benchmark.stub.hostile` serves them) are what a broken or
    hostile server sends: any JSON, any body, a reset, a cut or endless body, megabytes.
    """

    kind: Literal["status", "hang", "malformed", "empty_choices", "hostile"]
    status_code: int = 200
    retry_after: float | str | None = None
    seconds: float = 0.0
    message: str = ""
    name: str = ""  # a hostile fault's behaviour (see benchmark.stub.hostile)
    path: str = ""  # patched: the dotted path of the field replaced ("choices.0.message")
    value: Any = None  # patched: its new value (DELETE: none); json: the whole body
    body: bytes = b""  # raw: the body sent as is
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    size: int = 0  # huge: bytes of content

    @classmethod
    def status(cls, code: int, retry_after: float | str | None = None, message: str = "") -> Fault:
        """An HTTP error with an OpenAI-style error body (and ``Retry-After`` when given: a
        number of seconds, or any text, sent as is)."""
        return cls(kind="status", status_code=code, retry_after=retry_after, message=message)

    @classmethod
    def patched(cls, path: str, value: Any, text: str = "") -> Fault:
        """A valid completion of ``text`` (empty: the default reply) with the field at
        dotted ``path`` (``"usage.prompt_tokens"``, ``"choices.0.message.content"``,
        ``"choices"``) set to ``value`` (any JSON, or :data:`DELETE` to drop it)."""
        return cls(kind="hostile", name="patched", path=path, value=value, message=text)

    @classmethod
    def json(cls, value: Any) -> Fault:
        """HTTP 200 whose body is ``value`` as JSON, whatever it is (a list, a number...)."""
        return cls(kind="hostile", name="json", value=value)

    @classmethod
    def raw(
        cls,
        body: bytes | str,
        content_type: str = "application/json",
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """``body`` sent as is, with this content-type, status and headers (an HTML page,
        an event stream, a gzip header on plain bytes...)."""
        data = body.encode() if isinstance(body, str) else body
        pairs = tuple((headers or {}).items())
        return cls(
            kind="hostile",
            name="raw",
            body=data,
            content_type=content_type,
            status_code=status,
            headers=pairs,
        )

    @classmethod
    def hostile(cls, name: str, seconds: float = 1.0, size: int = 0) -> Fault:
        """A transport-level misbehaviour by name: ``reset`` (the connection reset, no
        reply), ``cut`` (a chunked body cut mid-way), ``trickle`` (a byte every ``seconds``,
        forever), ``huge`` (a valid completion whose content is ``size`` bytes)."""
        return cls(kind="hostile", name=name, seconds=seconds, size=size)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Sleep before answering normally; lets tests drive client-side timeouts."""
        return cls(kind="hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body is not valid JSON."""
        return cls(kind="malformed")

    @classmethod
    def empty_choices(cls) -> Fault:
        """A well-formed completion with ``choices: []`` (Responses routes: ``output: []``)."""
        return cls(kind="empty_choices")

    @property
    def label(self) -> str:
        """The name it is counted under in :meth:`OpenAIStub.stats` (``"429"``, ``"hang"``...)."""
        if self.kind == "hostile":
            return self.name
        return str(self.status_code) if self.kind == "status" else self.kind


class FaultMix(BaseModel):
    """Random faults on a fraction of requests, reproducible from ``seed``.

    The n-th request that draws (in arrival order) gets the n-th item of
    :meth:`draws`, so a sequential client sees the same faults on every run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(0.2, ge=0, le=1, description="probability that a request faults")
    kinds: tuple[FaultKind, ...] = Field(FAULT_KINDS, min_length=1)
    seed: int = 0
    retry_after: float = Field(0.05, ge=0, description="Retry-After of a 429, in seconds")
    hang_s: float = Field(5.0, ge=0, description="a hang's delay; meant to exceed the timeout")

    @field_validator("kinds", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """Accept ``"429,hang"`` as well as a sequence (the CLI passes a string)."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    def draws(self) -> Iterator[FaultKind | None]:
        """The endless, seeded sequence of outcomes: a fault kind, or ``None`` (no fault)."""
        rng = random.Random(self.seed)
        while True:
            hit = rng.random() < self.rate
            kind = self.kinds[rng.randrange(len(self.kinds))]
            yield kind if hit else None

    def fault(self, kind: FaultKind) -> Fault:
        """The concrete :class:`Fault` a drawn ``kind`` stands for."""
        if kind == "429":
            return Fault.status(429, retry_after=self.retry_after)
        if kind == "500":
            return Fault.status(500)
        if kind == "hang":
            return Fault.hang(self.hang_s)
        return Fault.malformed()


class StubStats(BaseModel):
    """Counters since the stub started; ``served`` counts valid 2xx replies only."""

    requests: int = 0
    served: int = 0
    rejected: int = Field(0, description="4xx for a bad key, body or unsupported format")
    faults: dict[str, int] = Field(default_factory=dict, description="by Fault.label")
    first_request_at: float | None = Field(
        None, description="wall-clock time (time.time) the first request arrived"
    )
    last_reply_at: float | None = Field(
        None, description="wall-clock time the last valid 2xx reply was ready"
    )

    @property
    def span_s(self) -> float | None:
        """First request to last valid reply, as the server saw it: the throughput figure
        of a whole job, free of its start-up and logging."""
        if self.first_request_at is None or self.last_reply_at is None:
            return None
        return self.last_reply_at - self.first_request_at


_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


def error_type(status_code: int) -> tuple[str, str | None]:
    """The OpenAI error ``type`` and ``code`` a status comes with."""
    return _ERROR_TYPES.get(status_code, ("server_error", None))


def error_body(
    message: str, type_: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The JSON shape OpenAI uses for errors; the SDK reads ``error.message`` from it."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}
