"""Compaction policies: the interface and the LLM-free implementations."""

from benchmark.policy.anchor_index import AnchorIndex
from benchmark.policy.base import Policy
from benchmark.policy.none import NoCompaction
from benchmark.policy.observation_mask import ObservationMask
from benchmark.policy.tool_clear import ToolResultClearing
from benchmark.policy.truncate import Truncate

__all__ = [
    "AnchorIndex",
    "NoCompaction",
    "ObservationMask",
    "Policy",
    "ToolResultClearing",
    "Truncate",
]
