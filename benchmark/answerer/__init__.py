"""Answerers: reply to a probe question from the compacted context alone.

Names are imported on first use (``benchmark.lazy``): the LLM answerer's stack loads
only for a job that uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmark.lazy import exports

if TYPE_CHECKING:
    from benchmark.answerer.base import Answer, Answerer, AnswerRequest
    from benchmark.answerer.extractive import ExtractiveAnswerer
    from benchmark.answerer.llm import LLMAnswerer

__all__ = ["Answer", "AnswerRequest", "Answerer", "ExtractiveAnswerer", "LLMAnswerer"]
__getattr__, __dir__ = exports(
    __name__,
    {
        "Answer": ".base",
        "AnswerRequest": ".base",
        "Answerer": ".base",
        "ExtractiveAnswerer": ".extractive",
        "LLMAnswerer": ".llm",
    },
)
