"""Judges: score an answer on rubric criteria, blind to the policy that produced it.

Names are imported on first use (``benchmark.lazy``): the LLM judge's stack loads only
for a job that uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmark.lazy import exports

if TYPE_CHECKING:
    from benchmark.judge.base import CriterionResult, Judge, JudgeRequest, Judgment
    from benchmark.judge.llm import LLMJudge
    from benchmark.judge.reference import ReferenceJudge

__all__ = ["CriterionResult", "Judge", "JudgeRequest", "Judgment", "LLMJudge", "ReferenceJudge"]
__getattr__, __dir__ = exports(
    __name__,
    {
        "CriterionResult": ".base",
        "Judge": ".base",
        "JudgeRequest": ".base",
        "Judgment": ".base",
        "LLMJudge": ".llm",
        "ReferenceJudge": ".reference",
    },
)
