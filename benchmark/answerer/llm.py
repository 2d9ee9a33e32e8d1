"""The LLM answerer: a model replies to the probe from the compacted context alone.

It is sent the fixed system prompt, the rendered context and the question,
and nothing else, so whatever the policy dropped is really gone for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmark.answerer.base import Answer, AnswerRequest
from benchmark.judge.llm import as_endpoint
from benchmark.judge.prompts import answerer_messages, render_context
from benchmark.llm import Endpoint, LLMClient, LLMError, UsageLedger


class LLMAnswerer:
    """Plain-text answers; a transport or server failure gives a failed ``Answer``."""

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        max_context_tokens: int = 60000,
        ledger: UsageLedger | None = None,
    ) -> None:
        if isinstance(max_context_tokens, bool) or not isinstance(max_context_tokens, int):
            raise ValueError(f"max_context_tokens must be an integer, got {max_context_tokens!r}")
        if max_context_tokens <= 0:
            raise ValueError(f"max_context_tokens must be > 0, got {max_context_tokens}")
        self.endpoint = as_endpoint(endpoint)
        self.max_context_tokens = max_context_tokens
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.client = LLMClient(self.endpoint, role="answerer", ledger=self.ledger)

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
