"""Assembling chat messages from any log format, with tool calls paired to results.

Every importer describes a session as a sequence of events (a system or user
message, assistant text, a tool call, a tool result); the builder turns them
into OpenAI chat messages: calls go on the assistant message as
``tool_calls``, results become ``tool`` messages with the call's id. A call
whose result never comes, and a result whose call is not in the log, are
reported as warnings; an orphaned result is kept as a user message with its
text verbatim (a ``tool`` message must answer a call), never dropped.

A system or user message logged between a call and its result (Codex's
"Approved command prefix saved", a harness notice) does not end the wait:
it is held and placed right after the results, so every ``tool`` message
still follows its call as chat format requires. Only the next assistant
message (or the log's end) gives up on calls still pending.

Some logs reuse a call id (SWE-agent function-calling logs do). A result
answers the nearest unanswered call of its id: calls of earlier turns are
closed when the next assistant message comes, so that is a call of the
current turn, the first still waiting when one turn holds several (results
come in call order).
Every later call of a used id is renamed ``<id>#2``, ``<id>#3`` ... with its
result, so ids are unique in the transcript and everything downstream that
pairs by id (activity, policies, answerers, the Responses API) pairs them as
the log did. One warning per file names the reused ids and where.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from benchmark.transcript.formats._document import Document, shown
from benchmark.transcript.formats._parts import text_of
from benchmark.transcript.models import Message

__all__ = ["ConversationBuilder", "text_of"]
# Half of a surrogate pair (a log cut inside an emoji, JSON's "\\ud83d" alone): valid JSON,
# but not writable as UTF-8, so it would fail the job far from the file at fault.
_SURROGATE = re.compile("[\ud800-\udfff]")
# What tool-call arguments may be: the wire format's JSON text, or (some logs) the object.
_ARGUMENTS = (str, dict, list, type(None))
# Deeper tool-call arguments are refused: every later reader parses them, and Python's own
# recursion limit (about 1,000 frames) would end that reader, far from the file at fault.
# No tool's arguments come near it.
MAX_ARGUMENT_DEPTH = 100
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class ConversationBuilder:
    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._messages: list[tuple[dict[str, Any], int | None, str]] = []
        # call id as logged -> its unanswered calls, oldest first: (unique id, tool name, where)
        self._pending: dict[str, list[tuple[str, str, str]]] = {}
        self._ids: set[str] = set()  # the unique ids given so far
        self._reused: list[tuple[str, str]] = []  # (id as logged, where) of each later use
        self._open: int | None = None  # the assistant message that may still take calls
        # system/user messages logged while calls wait for results: placed after the results
        self._held: list[tuple[dict[str, Any], int | None, str]] = []
        self._merge_key: object = None

    # --- events ---------------------------------------------------------------------------

    def system(self, text: str, line: int | None = None) -> None:
        self._plain("system", text, line)

    def user(self, text: str, line: int | None = None, name: str | None = None) -> None:
        self._plain("user", text, line, name)

    def summary(self, text: str, line: int | None = None) -> None:
        """A summary of earlier messages the agent itself put in its log (its compaction),
        handed to the model as a user message; marked so probes never draw on it."""
        self._plain("user", text, line)
        self._messages[-1][0]["summary"] = True

    def assistant(
        self, text: str | None, line: int | None = None, merge_key: object = None
    ) -> None:
        """Assistant text; with ``merge_key`` equal to the previous assistant event's, it
        continues that message (logs that write one line per content block)."""
        if merge_key is not None and merge_key == self._merge_key and self._open is not None:
            message = self._messages[self._open][0]
            if text:
                message["content"] = f"{message['content']}\n{text}" if message["content"] else text
            return
        self._close_pending(line)
        self._append({"role": "assistant", "content": text or None}, line)
        self._open = len(self._messages) - 1
        self._merge_key = merge_key

    def call(
        self,
        call_id: str,
        name: str,
        arguments: str | dict[str, Any] | list[Any] | None,
        line: int | None = None,
        merge_key: object = None,
    ) -> None:
        """A tool call: on the open assistant message, or on a new one."""
        if not isinstance(call_id, str) or not call_id:
            raise self._doc.fail("a tool call without an id", line)
        if not isinstance(name, str) or not name:
            raise self._doc.fail(f"tool call {shown(call_id)} has no tool name", line)
        if not isinstance(arguments, _ARGUMENTS):
            raise self._doc.fail(
                f"tool call {shown(call_id)}: field 'arguments': expected JSON text or an object, "
                f"got {type(arguments).__name__}",
                line,
            )
        if self._open is None or (merge_key is not None and merge_key != self._merge_key):
            self.assistant(None, line, merge_key)
        arguments = self._arguments(arguments, f"tool call {shown(call_id)}: ", line)
        message = self._messages[self._open][0]  # type: ignore[index]
        unique = self._called(call_id, name, _where(line, len(self._messages) - 1))
        message.setdefault("tool_calls", []).append(
            {"id": unique, "type": "function", "function": {"name": name, "arguments": arguments}}
        )

    def result(self, call_id: str, text: str, line: int | None = None) -> None:
        """A tool's result; its call must be pending, or it is kept as an orphan."""
        unique = self._answered(call_id)
        if unique is not None:
            self._append({"role": "tool", "tool_call_id": unique, "content": text}, line)
            self._open = None
            self._release()
            return
        self._doc.warn(
            f"tool result for call {call_id!r}, which is not in the log; kept as a user message",
            line,
        )
        self._plain("user", text, line, name="orphaned_tool_result")

    def message(self, item: Any, line: int | None = None, index: int | None = None) -> None:
        """An OpenAI chat-format message (``role``, ``content``, ``tool_calls``, ...)."""
        where = f"message {index}: " if index is not None else ""
        if not isinstance(item, dict):
            raise self._doc.fail(f"{where}expected an object, got {type(item).__name__}", line)
        item = dict(item)
        if isinstance(item.get("content"), list):  # content parts: multimodal ones named
            try:
                item["content"] = text_of(item["content"])
            except TypeError as exc:
                raise self._doc.fail(f"{where}field 'content': {exc}", line) from None
        if item.get("role") == "developer":
            item["role"] = "system"
        role = item.get("role")
        if role == "tool" and isinstance(item.get("tool_call_id"), str) and item["tool_call_id"]:
            unique = self._answered(item["tool_call_id"])
            if unique is None:
                self.result(item["tool_call_id"], _text_field(item), line)
                return
            item["tool_call_id"] = unique
            self._append(item, line, where)
            self._open = None
            self._release()
            return
        if role in ("system", "user") and self._pending:
            self._held.append((item, line, where))
            return
        if role != "tool":
            self._close_pending(line)
        self._append(item, line, where)
        calls = item.get("tool_calls")
        self._open = None
        if role == "assistant" and isinstance(calls, list):
            item["tool_calls"] = calls = [dict(c) if isinstance(c, dict) else c for c in calls]
            for k, call in enumerate(calls):
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict):
                    continue  # validation names the field
                at = f"{where}field 'tool_calls.{k}.function.arguments': "
                if not isinstance(function.get("arguments"), _ARGUMENTS):
                    raise self._doc.fail(
                        f"{at}expected JSON text or an object, got "
                        f"{type(function['arguments']).__name__}",
                        line,
                    )
                if isinstance(function["arguments"], str):
                    self._arguments(function["arguments"], at, line)
                if isinstance(call.get("id"), str):
                    name = str(function.get("name", "?"))
                    at = _where(line, len(self._messages) - 1)
                    call["id"] = self._called(call["id"], name, at)

    # --- result ---------------------------------------------------------------------------

    def finish(self) -> list[Message]:
        for unique, name, where in self._unanswered():
            self._doc.warn(f"tool call {name!r} ({unique}) at {where} has no result (the log ends)")
        self._pending.clear()
        self._release()
        if self._reused:
            self._doc.warn(_reuse_warning(self._reused))
        messages, mended, first = [], 0, ""
        for item, line, where in self._messages:
            try:
                message, count = _mended(Message.model_validate(item))
            except ValidationError as exc:
                raise self._doc.fail(f"{where}{_first_error(exc)}", line) from None
            if count and not mended:
                first = f"line {line}" if line is not None else f"message {len(messages)}"
            mended += count
            messages.append(message)
        if not messages:
            raise self._doc.fail("no messages")
        if mended:
            self._doc.warn(
                f"replaced {mended} broken character(s) (unpaired UTF-16 surrogates) with "
                f"U+FFFD, the first at {first or 'an event'}"
            )
        return messages

    # --- internals ------------------------------------------------------------------------

    def _arguments(
        self, arguments: str | dict[str, Any] | list[Any] | None, at: str, line: int | None
    ) -> str:
        """A call's arguments as JSON text, refused (one line) when nested too deeply."""
        if not isinstance(arguments, str):
            try:
                arguments = json.dumps({} if arguments is None else arguments, ensure_ascii=False)
            except RecursionError:
                arguments = None
        if arguments is None or _depth(arguments) > MAX_ARGUMENT_DEPTH:
            raise self._doc.fail(
                f"{at}arguments nested more than {MAX_ARGUMENT_DEPTH} levels deep", line
            )
        return arguments

    def _plain(self, role: str, text: str, line: int | None, name: str | None = None) -> None:
        item: dict[str, Any] = {"role": role, "content": text}
        if name:
            item["name"] = name
        if self._pending:  # calls still wait: the message goes after their results
            self._held.append((item, line, ""))
            return
        self._append(item, line)
        self._open = None

    def _append(self, item: dict[str, Any], line: int | None, where: str = "") -> None:
        self._messages.append((item, line, where))
        self._merge_key = None

    def _close_pending(self, line: int | None) -> None:
        """Calls still pending when the conversation moves on will get no result."""
        for unique, name, where in self._unanswered():
            self._doc.warn(f"tool call {name!r} ({unique}) at {where} has no result", line)
        self._pending.clear()
        self._release()

    def _release(self) -> None:
        """Places the held messages once no call waits any more."""
        if self._pending or not self._held:
            return
        for item, line, where in self._held:
            self._append(item, line, where)
        self._held.clear()
        self._open = None

    def _called(self, call_id: str, name: str, where: str) -> str:
        """Registers a call awaiting its result; returns its id, made unique if reused."""
        unique, n = call_id, 1
        while unique in self._ids:
            n += 1
            unique = f"{call_id}#{n}"
        if n > 1:
            self._reused.append((call_id, where))
        self._ids.add(unique)
        self._pending.setdefault(call_id, []).append((unique, name, where))
        return unique

    def _answered(self, call_id: str) -> str | None:
        """The unique id of the nearest unanswered call of ``call_id`` (now answered)."""
        calls = self._pending.get(call_id)
        if not calls:
            return None
        unique = calls.pop(0)[0]
        if not calls:
            del self._pending[call_id]
        return unique

    def _unanswered(self) -> list[tuple[str, str, str]]:
        return [call for calls in self._pending.values() for call in calls]


def _reuse_warning(reused: list[tuple[str, str]]) -> str:
    """One line for every reused call id of a file: which ids, where, what was done."""
    firsts: dict[str, str] = {}
    for call_id, where in reused:
        firsts.setdefault(call_id, where)
    shown = ", ".join(f"{call_id!r} at {where}" for call_id, where in list(firsts.items())[:3])
    more = f" and {len(firsts) - 3} more id(s)" if len(firsts) > 3 else ""
    return (
        f"{len(reused)} tool call(s) reuse an earlier call's id (first reuse of {shown}{more}): "
        "each result is paired with the nearest unanswered call of its id, and the later "
        "calls are renamed '<id>#2', '<id>#3'... with their results"
    )


def _depth(text: str) -> int:
    """How deeply JSON text nests (brackets in strings do not count), without parsing it;
    0 when it has too few brackets to pass the limit."""
    if text.count("[") + text.count("{") <= MAX_ARGUMENT_DEPTH:
        return 0  # cannot be too deep: the usual case, no scan
    depth = deepest = 0
    for bracket in _BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _where(line: int | None, index: int) -> str:
    return f"line {line}" if line is not None else f"message {index}"


def _text_field(item: dict[str, Any]) -> str:
    content = item.get("content")
    if content is None or isinstance(content, (str, list)):
        return text_of(content)
    return json.dumps(content)


def _mended(message: Message) -> tuple[Message, int]:
    """The message with unpaired surrogates replaced, and how many there were."""
    calls = message.tool_calls or []
    texts = [message.content, message.name, message.tool_call_id]
    texts += [t for c in calls for t in (c.id, c.function.name, c.function.arguments)]
    if not any(text and _SURROGATE.search(text) for text in texts):
        return message, 0
    data, count = _mend(message.model_dump(exclude_none=True))
    return Message.model_validate(data), count


def _mend(value: Any) -> tuple[Any, int]:
    """``value`` (a message's plain data) with unpaired surrogates replaced, and how many."""
    if isinstance(value, str):
        return _SURROGATE.subn("\ufffd", value)
    if isinstance(value, dict):
        pairs = [(key, *_mend(item)) for key, item in value.items()]
        return {key: item for key, item, _ in pairs}, sum(n for *_, n in pairs)
    if isinstance(value, list):
        pairs = [_mend(item) for item in value]
        return [item for item, _ in pairs], sum(n for _, n in pairs)
    return value, 0


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(part) for part in err["loc"]) or "message"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "literal_error" and "input" in err:
        return f"field '{field}': {msg} (got {shown(err['input'])})"
    return f"field '{field}': {msg}"
