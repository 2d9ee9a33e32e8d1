"""Answerers: reply to a probe question from the compacted context alone."""

from benchmark.answerer.base import Answer, Answerer, AnswerRequest
from benchmark.answerer.extractive import ExtractiveAnswerer
from benchmark.answerer.llm import LLMAnswerer

__all__ = ["Answer", "AnswerRequest", "Answerer", "ExtractiveAnswerer", "LLMAnswerer"]
