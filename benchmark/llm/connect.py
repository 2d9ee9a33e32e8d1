"""Connecting an LLM-backed stage (judge, answerer, summarizer, probe writer, native
compaction) to its endpoint: the validated endpoint, the usage ledger and a client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from benchmark.llm.cache import ResponseCache
from benchmark.llm.client import LLMClient
from benchmark.llm.endpoint import Endpoint
from benchmark.llm.usage import UsageLedger

C = TypeVar("C", bound=LLMClient)


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
    kind: type[C] = LLMClient,  # type: ignore[assignment]
) -> tuple[Endpoint, UsageLedger, C]:
    """The validated endpoint, the ledger (a new one if none) and a client for ``role``
    (``kind``: :class:`~benchmark.llm.native.NativeClient` for the Responses API too).

    The client reads the key now, so a missing one fails before any work.
    ``cache`` (the job's response cache) makes reruns free; None = no caching.
    """
    resolved = as_endpoint(endpoint)
    ledger = ledger if ledger is not None else UsageLedger()
    return resolved, ledger, kind(resolved, role=role, ledger=ledger, cache=cache)
