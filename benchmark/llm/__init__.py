"""The LLM layer: endpoints, the client every LLM-backed stage uses, usage and cost.

The client (and with it ``openai`` and ``aiohttp``) is imported on first use of its
names, so an offline job that builds no LLM part never loads it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from benchmark.lazy import exports
from benchmark.llm.endpoint import Endpoint
from benchmark.llm.usage import CallRecord, Usage, UsageLedger

if TYPE_CHECKING:
    from benchmark.llm.client import Completion, EndpointUnreachable, LLMClient, LLMError

__all__ = [
    "CallRecord",
    "Completion",
    "Endpoint",
    "EndpointUnreachable",
    "LLMClient",
    "LLMError",
    "Usage",
    "UsageLedger",
    "client_loaded",
    "close_all",
]

_CLIENT = "benchmark.llm.client"
__getattr__, __dir__ = exports(
    __name__,
    {name: _CLIENT for name in ("Completion", "EndpointUnreachable", "LLMClient", "LLMError")},
)


def client_loaded() -> bool:
    """Whether an LLM client can exist: only a part that makes one loads the client module."""
    return _CLIENT in sys.modules


def close_all() -> None:
    """Close every LLM client and forget unreachable endpoints (``client.close_all``);
    nothing to do when no client was ever made."""
    if client_loaded():
        sys.modules[_CLIENT].close_all()
