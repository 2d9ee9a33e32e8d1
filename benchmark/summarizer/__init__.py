"""Summarizers: what a summarizing compaction policy calls to condense the region.

Names are imported on first use (``benchmark.lazy``): the LLM summarizer's stack loads
only for a job that uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmark.lazy import exports

if TYPE_CHECKING:
    from benchmark.summarizer.base import Summarizer, SummaryRequest
    from benchmark.summarizer.extractive import ExtractiveSummarizer
    from benchmark.summarizer.llm import LLMSummarizer

__all__ = ["ExtractiveSummarizer", "LLMSummarizer", "Summarizer", "SummaryRequest"]
__getattr__, __dir__ = exports(
    __name__,
    {
        "ExtractiveSummarizer": ".extractive",
        "LLMSummarizer": ".llm",
        "Summarizer": ".base",
        "SummaryRequest": ".base",
    },
)
