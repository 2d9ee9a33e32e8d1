"""Summarizers: what a summarizing compaction policy calls to condense the region."""

from benchmark.summarizer.base import Summarizer, SummaryRequest
from benchmark.summarizer.extractive import ExtractiveSummarizer
from benchmark.summarizer.llm import LLMSummarizer

__all__ = ["ExtractiveSummarizer", "LLMSummarizer", "Summarizer", "SummaryRequest"]
