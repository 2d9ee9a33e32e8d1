"""Synthetic coding-agent sessions: the benchmark's default, offline transcript source."""

from benchmark.transcript.synthetic.generator import generate

__all__ = ["generate"]
