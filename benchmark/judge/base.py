"""The judge interface. Its input is blind: no policy name, id or telltale label."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchmark.probe.models import Gold
from benchmark.transcript.models import Message


class JudgeRequest(BaseModel):
    """The seed's judge input: question, response, compacted context, ground truth, criteria."""

    model_config = ConfigDict(frozen=True)

    probe_question: str
    model_response: str
    compacted_context: list[Message]
    ground_truth: Gold
    rubric_criteria: list[str]
    scale_max: int = 5


class CriterionResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    criterion: str
    score: float = Field(ge=0)
    reasoning: str = ""


class Judgment(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: list[CriterionResult] = Field(default_factory=list)
    failed: bool = False
    error: str | None = None
    record: dict[str, Any] | None = Field(
        None, exclude=True, description="an LLM judge's input and raw output, for tracking"
    )

    def scores(self) -> dict[str, float]:
        return {r.criterion: r.score for r in self.results}


class Judge(Protocol):
    def judge(self, request: JudgeRequest) -> Judgment: ...
