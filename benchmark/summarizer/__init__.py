"""Summarizers: what a summarizing compaction policy calls to condense the region."""

from benchmark.summarizer.base import Summarizer, SummaryRequest
from benchmark.summarizer.extractive import ExtractiveSummarizer

__all__ = ["ExtractiveSummarizer", "Summarizer", "SummaryRequest"]

from benchmark.summarizer.llm import LLMSummarizer  # noqa: E402  (after the offline parts)

__all__ += ["LLMSummarizer"]
