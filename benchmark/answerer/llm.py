"""The LLM answerer: a model replies to the probe from the compacted context alone.

It is sent the fixed system prompt, the rendered context and the question,
and nothing else, so whatever the policy dropped is really gone for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmark.answerer.base import Answer, AnswerRequest
from benchmark.judge.prompts import answerer_messages, render_context
from benchmark.llm import Endpoint, LLMError, UsageLedger
from benchmark.llm.stage import connect, token_budget


class LLMAnswerer:
    """Plain-text answers; a transport or server failure gives a failed ``Answer``."""

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        max_context_tokens: int = 60000,
        ledger: UsageLedger | None = None,
    ) -> None:
        token_budget("max_context_tokens", max_context_tokens)
        self.endpoint, self.ledger, self.client = connect(endpoint, "answerer", ledger)
        self.max_context_tokens = max_context_tokens

    def messages(self, request: AnswerRequest) -> list[dict[str, str]]:
        """The exact chat messages sent for ``request``."""
        context = render_context(request.context, self.max_context_tokens)
        return answerer_messages(request.question, context)

    def answer(self, request: AnswerRequest) -> Answer:
        try:
            completion, _ = self.client.complete(self.messages(request))
        except LLMError as exc:
            return Answer(failed=True, error=str(exc))
        return Answer(text=completion.text.strip())

    def close(self) -> None:
        self.client.close()
