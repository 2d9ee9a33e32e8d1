"""Answerers: reply to a probe question from the compacted context alone."""

from benchmark.answerer.base import Answer, Answerer, AnswerRequest
from benchmark.answerer.extractive import ExtractiveAnswerer

__all__ = ["Answer", "AnswerRequest", "Answerer", "ExtractiveAnswerer"]
