"""Compaction policies: the interface, the LLM-free implementations, and server-side compaction.

Names are imported on first use (``benchmark.lazy``): a job loads only its own policy's
module, and the LLM stack only for a policy that calls a model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmark.lazy import exports

if TYPE_CHECKING:
    from benchmark.policy.anchor_index import AnchorIndex
    from benchmark.policy.base import Policy
    from benchmark.policy.codex import Codex
    from benchmark.policy.hermes import Hermes
    from benchmark.policy.none import NoCompaction
    from benchmark.policy.observation_mask import ObservationMask
    from benchmark.policy.opaque import Opaque
    from benchmark.policy.summarizing import AnchoredIterative, Regenerative
    from benchmark.policy.tool_clear import ToolResultClearing
    from benchmark.policy.truncate import Truncate

__all__ = [
    "AnchorIndex",
    "AnchoredIterative",
    "Codex",
    "Hermes",
    "NoCompaction",
    "ObservationMask",
    "Opaque",
    "Policy",
    "Regenerative",
    "ToolResultClearing",
    "Truncate",
]
__getattr__, __dir__ = exports(
    __name__,
    {
        "AnchorIndex": ".anchor_index",
        "AnchoredIterative": ".summarizing",
        "Codex": ".codex",
        "Hermes": ".hermes",
        "NoCompaction": ".none",
        "ObservationMask": ".observation_mask",
        "Opaque": ".opaque",
        "Policy": ".base",
        "Regenerative": ".summarizing",
        "ToolResultClearing": ".tool_clear",
        "Truncate": ".truncate",
    },
)
