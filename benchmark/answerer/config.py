"""The ``answerer`` group's schema: each answerer's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any

from benchmark.instantiate import ComponentConfig, by_target, settings


class AnswererConfig(ComponentConfig):
    targets = by_target(
        settings(
            "benchmark.answerer.extractive.ExtractiveAnswerer",
            max_answer_tokens=int,
            passage_max_tokens=int,
            k1=float,
            b=float,
            min_score_ratio=float,
        ),
        settings(
            "benchmark.answerer.llm.LLMAnswerer",
            ("ledger", "cache"),
            endpoint=dict[str, Any],  # checked with every endpoint (config_checks)
            max_context_tokens=int,
        ),
    )
