"""SWE-agent trajectories (``.traj``): ``history`` of role/content entries, or only
``trajectory`` steps (action / observation / thought).

Both SWE-agent generations are read. Newer ones log function calls
(``tool_calls`` on the assistant entry, ``tool`` entries with
``tool_call_ids``). Older ones use a text protocol: the assistant entry's
``action`` is a command and the next ``user`` entry is its observation. Those
become tool calls too (``bash``, or the interface command: ``open``,
``create``, ``edit`` ...), so every SWE-agent session has the same shape.

A demonstration (``is_demo`` entries: another task solved, shown before this
one) is harness text, not the session: its entries become one user message
named ``demonstration`` (what SWE-agent itself sends without
``put_demos_in_history``), part of the prelude, so its calls are never read as
the session's work and no probe asks about them.
"""

from __future__ import annotations

from typing import Any

from benchmark.activity.actions import parse_command
from benchmark.transcript.formats._builder import ConversationBuilder, text_of
from benchmark.transcript.formats._document import Document, TranscriptError, shown
from benchmark.transcript.prelude import DEMONSTRATION

NAME = "swe_agent"
_ROLES = ("system", "user", "assistant", "tool")


def claims(value: Any) -> bool:
    return isinstance(value, dict) and ("history" in value or "trajectory" in value)


def convert(doc: Document, out: ConversationBuilder) -> None:
    value = doc.value
    if not claims(value):
        raise doc.fail("expected a JSON object with 'history' or 'trajectory' (a .traj file)")
    history, steps = value.get("history"), value.get("trajectory")
    if history:
        if not isinstance(history, list):
            raise doc.fail(f"'history' must be a list, got {type(history).__name__}")
        _history(doc, history, out)
    elif steps:
        if not isinstance(steps, list):
            raise doc.fail(f"'trajectory' must be a list, got {type(steps).__name__}")
        _trajectory(doc, steps, out)
    else:
        raise doc.fail("'history' and 'trajectory' are both empty")


def _history(doc: Document, history: list[Any], out: ConversationBuilder) -> None:
    awaiting: str | None = None  # the text-protocol call whose observation comes next
    for n, entry in enumerate(history):
        if not isinstance(entry, dict):
            raise doc.fail(f"history[{n}]: expected an object, got {type(entry).__name__}")
    demos = [n for n, entry in enumerate(history) if entry.get("is_demo") is True]
    demo = "\n".join(t for t in (_demo_text(doc, n, history[n]) for n in demos) if t.strip())
    for n, entry in enumerate(history):
        if entry.get("is_demo") is True:
            if n == demos[0] and demo.strip():  # the whole demonstration, where it began
                out.user(demo, name=DEMONSTRATION)
            continue
        role = entry.get("role")
        if role not in _ROLES:
            raise doc.fail(f"history[{n}]: field 'role': unknown role {shown(role)}")
        try:
            content = text_of(entry.get("content"))
        except TypeError as exc:
            raise doc.fail(f"history[{n}]: field 'content': {exc}") from None
        if role == "assistant":
            awaiting = _assistant(doc, n, entry, content, out)
        elif role == "tool":
            ids = entry.get("tool_call_ids") or []
            if not isinstance(ids, list) or not ids or not isinstance(ids[0], str):
                raise doc.fail(
                    f"history[{n}]: field 'tool_call_ids': a tool entry needs its call id"
                )
            for call_id in ids:
                out.result(call_id, content)
        elif role == "user" and awaiting is not None:
            out.result(awaiting, content)
            awaiting = None
        elif role == "user":
            out.user(content)
        else:
            out.system(content)


def _demo_text(doc: Document, n: int, entry: dict[str, Any]) -> str:
    """One demonstration entry as SWE-agent joins them into one message: its content (an
    action the content does not already hold is added)."""
    try:
        content = text_of(entry.get("content"))
    except TypeError as exc:
        raise doc.fail(f"history[{n}]: field 'content': {exc}") from None
    action = entry.get("action")
    if isinstance(action, str) and action.strip() and action.strip() not in content:
        content = f"{content}\n{action.strip()}" if content.strip() else action.strip()
    return content


def _assistant(
    doc: Document, n: int, entry: dict[str, Any], content: str, out: ConversationBuilder
) -> str | None:
    """Adds the entry; returns the id of a text-protocol call awaiting its observation."""
    calls = entry.get("tool_calls")
    thought = entry.get("thought")
    text = thought if isinstance(thought, str) and thought.strip() else content
    if calls:
        if not isinstance(calls, list):
            raise doc.fail(f"history[{n}]: field 'tool_calls': expected a list")
        out.assistant(text)
        for k, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                raise doc.fail(f"history[{n}]: field 'tool_calls.{k}': expected a function call")
            for field, value in (("id", call.get("id")), ("function.name", function.get("name"))):
                if not isinstance(value, str) or not value:
                    where = f"history[{n}]: field 'tool_calls.{k}.{field}'"
                    raise doc.fail(f"{where}: missing or not text")
            try:
                out.call(call["id"], function["name"], function.get("arguments"))
            except TranscriptError as exc:
                raise doc.fail(f"history[{n}]: {exc.reason}") from None
        return None
    action = entry.get("action")
    parsed = parse_command(action) if isinstance(action, str) else None
    if parsed is None:
        out.assistant(content)
        return None
    name, args, _ = parsed
    call_id = f"call_{n}"
    out.assistant(text)
    out.call(call_id, name, args)
    return call_id


def _trajectory(doc: Document, steps: list[Any], out: ConversationBuilder) -> None:
    for n, step in enumerate(steps):
        if not isinstance(step, dict):
            raise doc.fail(f"trajectory[{n}]: expected an object, got {type(step).__name__}")
        thought, action = step.get("thought") or step.get("response") or "", step.get("action")
        observation = step.get("observation")
        if not isinstance(thought, str) or not isinstance(action, (str, type(None))):
            raise doc.fail(f"trajectory[{n}]: 'thought' and 'action' must be text")
        parsed = parse_command(action) if action else None
        out.assistant(thought)
        if parsed is None:
            continue
        call_id = f"call_{n}"
        out.call(call_id, parsed[0], parsed[1])
        if observation is not None:
            try:
                out.result(call_id, text_of(observation))
            except TypeError as exc:
                raise doc.fail(f"trajectory[{n}]: field 'observation': {exc}") from None
