"""The LLM answerer: a model replies to the probe from the compacted context alone.

It is sent the fixed system prompt, the rendered context and the question,
and nothing else, so whatever the policy dropped is really gone for it. The
context and the question are untrusted (they come from the session), so they
travel as JSON data in the user message (:mod:`benchmark.llm.untrusted`).

A next-action question (``AnswerRequest.form``) asks for one ``verb target`` line.
The reply is checked as the judge's JSON is: ``parse`` refuses a reply with no such
line, so the client asks again within the endpoint's retries; a reply still
unreadable after them is the answer all the same (scored 0 by rule, never a
failed answer): the model answered, only not in the format, which is what the
score measures. Only a transport or server failure fails the answer.

A context holding a provider's encrypted compaction item cannot be rendered:
only that provider can read the item. Then the answerer continues through
the provider's Responses API instead, with the context as input items (the
item included as is) and the question as the last user message. That path is
the one exception to the data rule: the item must sit in the conversation it
came from, so the session's messages go back in their own roles, as they
would for the agent itself; only our instructions are in ``instructions``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.activity.next_step import parse_answer, verb_of
from benchmark.answerer.base import Answer, AnswerRequest
from benchmark.answerer.prompts import answerer_messages, items_system, question_text
from benchmark.llm import Endpoint, LLMError, UsageLedger
from benchmark.llm.client import InvalidReplies
from benchmark.llm.connect import LLMStage, token_budget
from benchmark.llm.loop import run
from benchmark.llm.native import NativeClient
from benchmark.llm.prompting import has_encrypted, render_context
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.usage import CallPurpose
from benchmark.text import tokens
from benchmark.transcript.models import Message


class LLMAnswerer(LLMStage):
    """Plain-text answers; a transport or server failure gives a failed ``Answer``."""

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        max_context_tokens: int = 60000,
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        token_budget("max_context_tokens", max_context_tokens)
        super().__init__(endpoint, "answerer", ledger, cache, kind=NativeClient)
        self.client: NativeClient
        self.max_context_tokens = max_context_tokens
        self.provider = self.client.provider

    def messages(self, request: AnswerRequest) -> list[dict[str, str]]:
        """The exact chat messages sent for ``request`` (a context with no encrypted item):
        as much of the context as ``max_context_tokens`` and the endpoint's window allow."""
        return self.window.fit(
            self.max_context_tokens,
            lambda budget: render_context(request.context, budget),
            lambda context: answerer_messages(request.question, context, request.form),
        )

    def resumed(self, request: AnswerRequest) -> tuple[list[Message], str]:
        """What is sent for a context holding an encrypted item: the kept context and the
        question (the client's ``input_items`` gives the exact Responses API input).

        The newest messages within ``max_context_tokens`` and the endpoint's window
        (whole messages, never starting on a tool result), then the question. An
        encrypted item is counted by its message's ``tokens``: only its provider
        can count it exactly.
        """
        question = question_text(request.question)
        kept = self.window.fit(
            self.max_context_tokens,
            lambda budget: recent(request.context, budget),
            lambda context: context,
            measure=lambda context: _items_tokens(context, question, request.form),
        )
        return kept, question

    def answer(self, request: AnswerRequest) -> Answer:
        return run(self.aanswer(request))

    async def aanswer(self, request: AnswerRequest, purpose: CallPurpose | None = None) -> Answer:
        """The answer; ``purpose`` (the probe served) is recorded with the call, never sent."""
        if has_encrypted(request.context):
            return await self._answer_items(request, purpose)
        replies: list[str] = []
        check = None
        if request.form == "next_action":
            tools = context_tools(request.context)

            def check(text: str) -> None:
                replies.append(text)
                if parse_answer(text, tools) is None:
                    raise ValueError("the reply's first line is not 'verb target'")

        try:
            completion, _ = await self.client.acomplete(
                self.messages(request), parse=check, purpose=purpose
            )
        except InvalidReplies:
            return Answer(text=replies[-1].strip()) if replies else Answer(failed=True)
        except LLMError as exc:
            return Answer(failed=True, error=str(exc))
        return Answer(text=completion.text.strip(), truncated=completion.truncated)

    async def _answer_items(
        self, request: AnswerRequest, purpose: CallPurpose | None = None
    ) -> Answer:
        foreign = sorted(
            {
                m.compaction.provider
                for m in request.context
                if m.compaction is not None and m.compaction.provider != self.provider
            }
        )
        if foreign:
            return Answer(
                failed=True,
                error=(
                    f"the context holds an encrypted compaction item from provider {foreign[0]!r}, "
                    f"which only that provider can read; answerer endpoint '{self.endpoint.name}' "
                    f"is provider {self.provider!r} (point it at the same base_url)"
                ),
            )
        try:
            completion = await self.client.arespond(
                items_system(request.form), *self.resumed(request), purpose=purpose
            )
        except LLMError as exc:
            return Answer(failed=True, error=str(exc))
        return Answer(text=completion.text.strip(), truncated=completion.truncated)


def _items_tokens(context: Sequence[Message], question: str, form: str) -> int:
    """Prompt tokens of the Responses API request: instructions, messages, question."""
    framing = (len(context) + 2) * tokens.MESSAGE_OVERHEAD
    texts = [items_system(form), question]
    return sum(m.tokens for m in context) + sum(map(tokens.count, texts)) + framing


def context_tools(context: Sequence[Message]) -> frozenset[str]:
    """The verbs of the tools the context calls: a tool no verb covers is a valid verb too."""
    return frozenset(verb_of(c.function.name) for m in context for c in m.tool_calls or ())


def recent(messages: Sequence[Message], max_tokens: int) -> list[Message]:
    """The newest whole messages within ``max_tokens``, not opening on an orphaned tool result."""
    start, used = len(messages), 0
    while start > 0 and used + messages[start - 1].tokens <= max_tokens:
        start -= 1
        used += messages[start].tokens
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    return list(messages[start:])
