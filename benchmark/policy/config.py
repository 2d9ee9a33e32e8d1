"""The ``policy`` group's schema: each policy's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any

from benchmark.instantiate import ComponentConfig, by_target, settings

P = "benchmark.policy"
SUMMARIZER = ("summarizer",)
ENDPOINT = dict[str, Any]  # checked field by field with every endpoint (config_checks)


class PolicyConfig(ComponentConfig):
    targets = by_target(
        settings(f"{P}.none.NoCompaction"),
        settings(f"{P}.truncate.Truncate", recent_tokens=int),
        settings(f"{P}.observation_mask.ObservationMask", keep_last=int),
        settings(
            f"{P}.tool_clear.ToolResultClearing",
            trigger_tokens=int,
            keep_last=int,
            clear_at_least=int,
            exclude_tools=list[str],
            clear_tool_inputs=bool,
        ),
        settings(f"{P}.anchor_index.AnchorIndex", max_tokens=int, max_per_kind=int),
        settings(f"{P}.summarizing.Regenerative", SUMMARIZER, summary_tokens=int),
        settings(f"{P}.summarizing.AnchoredIterative", SUMMARIZER, summary_tokens=int),
        settings(f"{P}.codex.Codex", SUMMARIZER, summary_tokens=int, user_message_tokens=int),
        settings(
            f"{P}.hermes.Hermes",
            SUMMARIZER,
            tail_tokens=int | None,
            summary_tokens=int,
            index_tokens=int,
        ),
        settings(f"{P}.opaque.Opaque", ("ledger", "cache"), endpoint=ENDPOINT),
    )
