"""Connecting an LLM-backed stage (judge, answerer, summarizer, probe writer, native
compaction) to its endpoint: the validated endpoint, the usage ledger and a client;
:class:`LLMStage`, what each of those stages holds, and :class:`RegionStage`, the one
constructor of the stages sent a compacted region."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from benchmark.llm.endpoint import Endpoint
from benchmark.llm.usage import CallPurpose, UsageLedger

if TYPE_CHECKING:  # the client (openai, aiohttp) loads when a stage connects, not before
    from benchmark.llm.client import LLMClient
    from benchmark.llm.reply_cache import ResponseCache

C = TypeVar("C", bound="LLMClient")


def as_endpoint(endpoint: Endpoint | Mapping[str, Any]) -> Endpoint:
    """An ``Endpoint`` from config; a dict without ``name`` is named after its model."""
    if isinstance(endpoint, Endpoint):
        return endpoint
    data = dict(endpoint)
    data.setdefault("name", data.get("model", ""))
    return Endpoint.model_validate(data)


def token_budget(name: str, value: object) -> int:
    """A positive integer token budget; ``ValueError`` naming the parameter otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def connect(
    endpoint: Endpoint | Mapping[str, Any],
    role: str,
    ledger: UsageLedger | None,
    cache: ResponseCache | None = None,
    kind: type[C] | None = None,
) -> tuple[Endpoint, UsageLedger, C]:
    """The validated endpoint, the ledger (a new one if none) and a client for ``role``
    (``kind``: :class:`~benchmark.llm.native.NativeClient` for the Responses API too;
    None: :class:`~benchmark.llm.client.LLMClient`).

    The client reads the key now, so a missing one fails before any work.
    ``cache`` (the job's response cache) makes reruns free; None = no caching.
    """
    from benchmark.llm.client import LLMClient

    resolved = as_endpoint(endpoint)
    ledger = ledger if ledger is not None else UsageLedger()
    make = LLMClient if kind is None else kind
    return resolved, ledger, make(resolved, role=role, ledger=ledger, cache=cache)  # type: ignore[return-value]


class LLMStage:
    """What every LLM-backed stage holds: its endpoint, the usage ledger, a client for its
    role (of class ``kind``) and the fitter to the endpoint's window.

    A subclass checks its own parameters first, then calls this, which reads the key (a
    missing one fails before any work).
    """

    TRACED = True  # its a<method> takes ``purpose=`` (see :func:`purpose_of`)

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        role: str,
        ledger: UsageLedger | None,
        cache: ResponseCache | None,
        kind: type[LLMClient] | None = None,  # None: LLMClient
    ) -> None:
        from benchmark.llm.window import Window

        self.endpoint, self.ledger, self.client = connect(endpoint, role, ledger, cache, kind)
        self.window = Window(self.endpoint, role, self.ledger)

    def close(self) -> None:
        """Release the client's connections."""
        self.client.close()


def purpose_of(stage: object, purpose: CallPurpose | None) -> dict[str, CallPurpose]:
    """``{"purpose": purpose}`` for a stage that records it on its calls (``TRACED``), else
    nothing: a plug-in's ``aanswer(request)`` keeps its one-argument signature."""
    if purpose is None or not getattr(stage, "TRACED", False):
        return {}
    return {"purpose": purpose}


class RegionStage(LLMStage):
    """An LLM stage sent a compacted region (summarizer, probe writer), at most
    ``max_region_tokens`` of it: ``REGION_TOKENS`` unless configured (None = that default).

    A subclass names its ``ROLE`` and default, and sets up any state of its own in
    :meth:`_start`, so every such stage takes the same constructor arguments.
    """

    ROLE: ClassVar[str]
    REGION_TOKENS: ClassVar[int]

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        ledger: UsageLedger | None = None,
        max_region_tokens: int | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        budget = self.REGION_TOKENS if max_region_tokens is None else max_region_tokens
        self.max_region_tokens = token_budget("max_region_tokens", budget)
        super().__init__(endpoint, self.ROLE, ledger, cache)
        self._start()

    def _start(self) -> None:
        """The subclass's own per-instance state, set up once connected (none here)."""
