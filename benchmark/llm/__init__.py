"""The LLM layer: endpoints, the client every LLM-backed stage uses, usage and cost."""

from benchmark.llm.client import Completion, EndpointUnreachable, LLMClient, LLMError, close_all
from benchmark.llm.endpoint import Endpoint
from benchmark.llm.usage import CallRecord, Usage, UsageLedger

__all__ = [
    "CallRecord",
    "Completion",
    "Endpoint",
    "EndpointUnreachable",
    "LLMClient",
    "LLMError",
    "Usage",
    "UsageLedger",
    "close_all",
]
