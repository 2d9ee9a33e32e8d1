"""Judges: score an answer on rubric criteria, blind to the policy that produced it."""

from benchmark.judge.base import CriterionResult, Judge, JudgeRequest, Judgment
from benchmark.judge.llm import LLMJudge
from benchmark.judge.reference import ReferenceJudge

__all__ = ["CriterionResult", "Judge", "JudgeRequest", "Judgment", "LLMJudge", "ReferenceJudge"]
