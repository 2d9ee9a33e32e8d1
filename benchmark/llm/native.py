"""Native (server-side) compaction behind the LLM client: the provider's Responses API.

A provider's compact endpoint turns messages into the user messages it keeps
plus one encrypted ``compaction`` item that only that provider can read, and
only its Responses API can continue from a context holding that item. Both
speak Responses API items (:mod:`benchmark.llm.responses_wire`); this client
takes and returns our messages, so no policy or answerer sees the wire format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchmark.llm.client import LLMClient, LLMError
from benchmark.llm.completion import Completion
from benchmark.llm.loop import _Loop
from benchmark.llm.responses_wire import from_output, provider_of, response_usage, to_items
from benchmark.llm.usage import CallPurpose
from benchmark.transcript.models import Message


class NativeClient(LLMClient):
    """An :class:`LLMClient` that also compacts through its provider and continues from
    the encrypted item that returns (the chat calls are the parent's)."""

    @property
    def provider(self) -> str:
        """Who can read an encrypted item this endpoint makes (its normalised base URL)."""
        return provider_of(self.endpoint)

    def compact(self, messages: Sequence[Message]) -> list[Message]:
        """``messages`` compacted by the provider: the messages it keeps and exactly one
        encrypted item (``messages`` as they are when they hold nothing to send).

        A failed call, an output the benchmark cannot represent, or a reply without
        exactly one compaction item raises :class:`LLMError`.
        """
        return _Loop.run(self.acompact(messages))

    async def acompact(self, messages: Sequence[Message]) -> list[Message]:
        items = to_items(messages)
        if not items:
            return list(messages)
        body: dict[str, Any] = {"model": self.endpoint.model, "input": items}

        async def send(body: dict[str, Any], _data: bytes | None) -> dict[str, Any]:
            reply = await (await self._sdk()).responses.compact(**body)
            output = [item.model_dump(exclude_none=True, warnings=False) for item in reply.output]
            text = json.dumps(output, ensure_ascii=False, sort_keys=True)
            return {"text": text, **response_usage(reply)}

        async def attempt(n: int) -> Completion:
            return Completion(**await self._exchange("responses.compact", body, n, send))

        completion, _ = await self._with_retries(attempt, None)
        name, model = self.endpoint.name, self.endpoint.model
        try:
            kept = from_output(
                json.loads(completion.text), self.provider, model, completion.output_tokens
            )
        except ValueError as exc:
            raise LLMError(f"compact endpoint {name}: {exc}") from None
        found = sum(m.compaction is not None for m in kept)
        if found != 1:
            raise LLMError(
                f"compact endpoint {name} returned {found} compaction items, expected exactly one"
            )
        return kept

    def input_items(self, context: Sequence[Message], question: str) -> list[dict[str, Any]]:
        """The exact Responses API input :meth:`respond` sends: the context, then the question."""
        return [*to_items(context), {"type": "message", "role": "user", "content": question}]

    def respond(self, instructions: str, context: Sequence[Message], question: str) -> Completion:
        """One Responses API turn (not stored server-side) continuing ``context``, which may
        hold this provider's encrypted items, with ``question`` as the last user message."""
        return _Loop.run(self.arespond(instructions, context, question))

    async def arespond(
        self,
        instructions: str,
        context: Sequence[Message],
        question: str,
        purpose: CallPurpose | None = None,
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "instructions": instructions,
            "input": self.input_items(context, question),
            "temperature": self.endpoint.temperature,
            "max_output_tokens": self.endpoint.max_tokens,
            "store": False,
        }

        async def send(body: dict[str, Any], _data: bytes | None) -> dict[str, Any]:
            reply = await (await self._sdk()).responses.create(**body)
            return {"text": reply.output_text, **response_usage(reply)}

        async def attempt(n: int) -> Completion:
            return Completion(**await self._exchange("responses", body, n, send, purpose))

        completion, _ = await self._with_retries(attempt, None)
        return completion
