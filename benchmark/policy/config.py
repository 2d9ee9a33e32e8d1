"""The ``policy`` group's schema: each policy's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any

from benchmark.config.instantiate import ComponentConfig, by_target, settings
from benchmark.config.validators import Count, Tokens

P = "benchmark.policy"
SUMMARIZER = ("summarizer",)
ENDPOINT = dict[str, Any]  # checked field by field with every endpoint (config_checks)


class PolicyConfig(ComponentConfig):
    targets = by_target(
        settings(f"{P}.none.NoCompaction"),
        settings(f"{P}.truncate.Truncate", recent_tokens=Tokens),
        settings(f"{P}.observation_mask.ObservationMask", keep_last=Count),
        settings(
            f"{P}.tool_clear.ToolResultClearing",
            trigger_tokens=Tokens,
            keep_last=Count,
            clear_at_least=Tokens,
            exclude_tools=list[str],
            clear_tool_inputs=bool,
        ),
        settings(f"{P}.anchor_index.AnchorIndex", max_tokens=Tokens, max_per_kind=Count),
        settings(f"{P}.summarizing.Regenerative", SUMMARIZER, summary_tokens=Tokens),
        settings(f"{P}.summarizing.AnchoredIterative", SUMMARIZER, summary_tokens=Tokens),
        settings(f"{P}.codex.Codex", SUMMARIZER, summary_tokens=Tokens, user_message_tokens=Tokens),
        settings(
            f"{P}.hermes.Hermes",
            SUMMARIZER,
            tail_tokens=Tokens | None,
            summary_tokens=Tokens,
            index_tokens=Tokens,
        ),
        settings(f"{P}.opaque.Opaque", ("ledger", "cache"), endpoint=ENDPOINT),
    )
