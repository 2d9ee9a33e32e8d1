"""Compaction policies: the interface, the LLM-free implementations, and server-side compaction."""

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
