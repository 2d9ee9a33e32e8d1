"""The answerer interface: it sees the probe question and the compacted context, nothing else."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from benchmark.transcript.models import Message


class AnswerRequest(BaseModel):
    """Everything an answerer is allowed to see. No gold, no policy, no transcript.

    ``form`` is the reply the question asks for: free ``text``, or ``next_action``, one
    ``verb target`` line (``benchmark.activity.next_step``) that is scored by rule."""

    model_config = ConfigDict(frozen=True)

    question: str
    context: list[Message]
    form: Literal["text", "next_action"] = "text"


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str = ""
    failed: bool = False
    error: str | None = None
    truncated: bool = False  # the reply stopped at the answerer's max_tokens (used all the same)


class Answerer(Protocol):
    def answer(self, request: AnswerRequest) -> Answer: ...
