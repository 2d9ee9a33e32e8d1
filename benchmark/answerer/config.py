"""The ``answerer`` group's schema: each answerer's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from benchmark.config.instantiate import ComponentConfig, by_target, settings
from benchmark.config.validators import Tokens

# BM25's term-frequency saturation: 1.2 to 2 in practice.
BM25_K1 = Annotated[float, Field(ge=0, le=1000)]


class AnswererConfig(ComponentConfig):
    targets = by_target(
        settings(
            "benchmark.answerer.extractive.ExtractiveAnswerer",
            max_answer_tokens=Tokens,
            passage_max_tokens=Tokens,
            k1=BM25_K1,
            b=float,
            min_score_ratio=float,
        ),
        settings(
            "benchmark.answerer.llm.LLMAnswerer",
            ("ledger", "cache"),
            endpoint=dict[str, Any],  # checked with every endpoint (config_checks)
            max_context_tokens=Tokens,
        ),
    )
