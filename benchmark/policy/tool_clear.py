"""Clear the oldest tool results once the context passes a token trigger."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchmark.policy.base import check_int
from benchmark.policy.spans import is_omitted, omitted_note, replaced
from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message, ToolCall


def _tool_names(value: Any) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"exclude_tools must be a list of tool names, got {value!r}")
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"exclude_tools must hold non-empty tool names, got {name!r}")
    return names


class ToolResultClearing:
    """Tool-result clearing with the defaults of Anthropic's context editing.

    Mirrors the ``clear_tool_uses_20250919`` strategy: once the context
    exceeds ``trigger_tokens`` (default 100,000 input tokens), every tool
    result older than the last ``keep_last`` (default 3 tool uses) is replaced
    by a note, except results of tools named in ``exclude_tools``. Excluded
    results still count towards ``keep_last``. With ``clear_tool_inputs`` the
    arguments of the cleared calls become ``"{}"`` as well. If clearing would
    free fewer than ``clear_at_least`` tokens (default 0), nothing is cleared.
    """

    def __init__(
        self,
        *,
        trigger_tokens: int = 100_000,
        keep_last: int = 3,
        clear_at_least: int = 0,
        exclude_tools: Iterable[str] = (),
        clear_tool_inputs: bool = False,
    ) -> None:
        self.trigger_tokens = check_int("trigger_tokens", trigger_tokens, 0)
        self.keep_last = check_int("keep_last", keep_last, 0)
        self.clear_at_least = check_int("clear_at_least", clear_at_least, 0)
        self.exclude_tools = _tool_names(exclude_tools)
        if not isinstance(clear_tool_inputs, bool):
            raise ValueError(f"clear_tool_inputs must be true or false, got {clear_tool_inputs!r}")
        self.clear_tool_inputs = clear_tool_inputs

    def compact(self, segments: Segments) -> list[Message]:
        messages = segments.messages
        if sum(m.tokens for m in messages) <= self.trigger_tokens:
            return messages
        names = {call.id: call.function.name for m in messages for call in m.tool_calls or []}
        results = [i for i, m in enumerate(messages) if m.role == "tool"]
        cleared = {
            i
            for i in results[: max(len(results) - self.keep_last, 0)]
            if names.get(messages[i].tool_call_id or "", messages[i].name) not in self.exclude_tools
        }
        cleared_ids = {messages[i].tool_call_id for i in cleared}
        out: list[Message] = []
        freed = 0
        for i, m in enumerate(messages):
            new = m
            if i in cleared and not is_omitted(m):
                new = replaced(m, content=omitted_note(m.content))
            elif self.clear_tool_inputs and any(c.id in cleared_ids for c in m.tool_calls or []):
                calls = [self._cleared_call(c, cleared_ids) for c in m.tool_calls or []]
                new = replaced(m, tool_calls=calls)
            freed += m.tokens - new.tokens
            out.append(new)
        if freed <= 0 or freed < self.clear_at_least:
            return messages
        return out

    @staticmethod
    def _cleared_call(call: ToolCall, cleared_ids: set[str | None]) -> ToolCall:
        if call.id not in cleared_ids:
            return call
        function = call.function.model_copy(update={"arguments": "{}"})
        return call.model_copy(update={"function": function})

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(trigger_tokens={self.trigger_tokens}, "
            f"keep_last={self.keep_last}, clear_at_least={self.clear_at_least}, "
            f"exclude_tools={list(self.exclude_tools)}, "
            f"clear_tool_inputs={self.clear_tool_inputs})"
        )
