"""The ``answerer`` group's schema: each answerer's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any

from benchmark.instantiate import ComponentConfig, Settings, by_target


class ExtractiveAnswererSettings(Settings):
    target = "benchmark.answerer.extractive.ExtractiveAnswerer"

    max_answer_tokens: int
    passage_max_tokens: int
    k1: float
    b: float
    min_score_ratio: float


class LLMAnswererSettings(Settings):
    target = "benchmark.answerer.llm.LLMAnswerer"
    needs = ("ledger", "cache")

    endpoint: dict[str, Any]  # checked field by field with every endpoint (config_checks)
    max_context_tokens: int


class AnswererConfig(ComponentConfig):
    settings = by_target(ExtractiveAnswererSettings, LLMAnswererSettings)
