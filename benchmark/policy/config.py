"""The ``policy`` group's schema: each policy's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any

from benchmark.instantiate import ComponentConfig, Settings, by_target


class _Summarizing(Settings):
    needs = ("summarizer",)

    summary_tokens: int


class NoCompactionSettings(Settings):
    target = "benchmark.policy.none.NoCompaction"


class TruncateSettings(Settings):
    target = "benchmark.policy.truncate.Truncate"

    recent_tokens: int


class ObservationMaskSettings(Settings):
    target = "benchmark.policy.observation_mask.ObservationMask"

    keep_last: int


class ToolClearSettings(Settings):
    target = "benchmark.policy.tool_clear.ToolResultClearing"

    trigger_tokens: int
    keep_last: int
    clear_at_least: int
    exclude_tools: list[str]
    clear_tool_inputs: bool


class AnchorIndexSettings(Settings):
    target = "benchmark.policy.anchor_index.AnchorIndex"

    max_tokens: int
    max_per_kind: int


class RegenerativeSettings(_Summarizing):
    target = "benchmark.policy.summarizing.Regenerative"


class AnchoredIterativeSettings(_Summarizing):
    target = "benchmark.policy.summarizing.AnchoredIterative"


class CodexSettings(_Summarizing):
    target = "benchmark.policy.codex.Codex"

    user_message_tokens: int


class HermesSettings(_Summarizing):
    target = "benchmark.policy.hermes.Hermes"

    tail_tokens: int | None
    index_tokens: int


class OpaqueSettings(Settings):
    target = "benchmark.policy.opaque.Opaque"
    needs = ("ledger", "cache")

    endpoint: dict[str, Any]  # checked field by field with every endpoint (config_checks)


class PolicyConfig(ComponentConfig):
    settings = by_target(
        NoCompactionSettings,
        TruncateSettings,
        ObservationMaskSettings,
        ToolClearSettings,
        AnchorIndexSettings,
        RegenerativeSettings,
        AnchoredIterativeSettings,
        CodexSettings,
        HermesSettings,
        OpaqueSettings,
    )
