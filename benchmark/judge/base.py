"""The judge interface. Its input is blind: no policy name, id or telltale label."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

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


class MemberScores(BaseModel):
    """One panel member's part in a judgment: its own scores, or why it failed."""

    model_config = ConfigDict(frozen=True)

    scores: dict[str, float] = Field(default_factory=dict)
    failed: bool = False
    error: str | None = None


class Judgment(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: list[CriterionResult] = Field(default_factory=list)
    failed: bool = False
    error: str | None = None
    record: dict[str, Any] | None = Field(
        None, exclude=True, description="an LLM judge's input and raw output, for tracking"
    )
    members: dict[str, MemberScores] | None = Field(
        None, description="a judge panel's members by name (None: not a panel; see judge/panel.py)"
    )

    def scores(self) -> dict[str, float]:
        return {r.criterion: r.score for r in self.results}

    @model_serializer(mode="wrap")
    def _omit_members(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A single judge's dump stays as it was: ``members`` appears only for a panel."""
        data = handler(self)
        if self.members is None:
            data.pop("members", None)
        return data


class Judge(Protocol):
    def judge(self, request: JudgeRequest) -> Judgment: ...
