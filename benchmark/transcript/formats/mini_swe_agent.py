"""mini-swe-agent trajectories (``*.traj.json``): ``info`` and a list of ``messages``.

Both protocols are read. With tool calls (v2's default), messages are OpenAI
chat messages (assistant ``tool_calls`` of a ``bash`` tool, ``tool`` results),
or Responses API items (``function_call`` / ``function_call_output``). Without
them (v1, and v2's text-based models), the assistant writes its command in one
fenced block (```` ```bash ````, ```` ```mswea_bash_command ````, or the
``action_regex`` of the file's own config) and the next user message is its
observation: that pair becomes a tool call and its result, as SWE-agent's text
protocol does.

A trajectory ends with a message of role ``exit`` (its status and submission).
It is no chat message: its status is kept as a note of the import, as is any
other non-chat entry (a reasoning item, an unknown role), never an error.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from typing import Any

from benchmark.activity.actions import parse_command
from benchmark.transcript.formats._builder import ConversationBuilder, text_of
from benchmark.transcript.formats._document import Document, shown, unmarked

NAME = "mini_swe_agent"
_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")
# Keys of ``info`` that only mini-swe-agent writes beside ``messages``.
_INFO_KEYS = frozenset({"mini_version", "exit_status", "submission", "model_stats"})
# Its command blocks: v1's ```bash, v2's ```mswea_bash_command, the XML configs' tag.
_ACTIONS = (
    re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL),
    re.compile(r"<bash_code>(.*?)</bash_code>", re.DOTALL),
)


def claims(value: Any) -> bool:
    """A ``messages`` list with mini-swe-agent's marks: its ``trajectory_format``, its
    ``info`` keys, or an ``exit`` message. Plain ``{"messages": [...]}`` stays chat."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    version = value.get("trajectory_format")
    if isinstance(version, str) and version.startswith("mini-swe-agent"):
        return True
    info = value.get("info")
    if isinstance(info, dict) and _INFO_KEYS & info.keys():
        return True
    return any(isinstance(m, dict) and m.get("role") == "exit" for m in value["messages"])


def convert(doc: Document, out: ConversationBuilder) -> None:
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise doc.fail("expected a JSON object with a 'messages' list (a .traj.json file)")
    info = value.get("info") if isinstance(value.get("info"), dict) else {}
    messages: list[Any] = value["messages"]
    for n, item in enumerate(messages):
        if not isinstance(item, dict):
            raise doc.fail(f"messages[{n}]: expected an object, got {type(item).__name__}")
    text_protocol = not any(_is_tool_event(m) for m in messages)
    patterns = _patterns(info) if text_protocol else ()
    awaiting: str | None = None  # the text-protocol call whose observation comes next
    skipped: Counter[str] = Counter()
    exits: list[dict[str, Any]] = []
    for n, item in enumerate(messages):
        kind, role = item.get("type"), item.get("role")
        if kind == "function_call":
            call_id = _text(item.get("call_id") or item.get("id"))
            out.call(call_id, _text(item.get("name")), item.get("arguments"))
            continue
        if kind == "function_call_output":
            out.result(_text(item.get("call_id")), _content(doc, n, item.get("output")))
            continue
        if role == "exit":
            exits.append(item)
            continue
        if role not in _CHAT_ROLES:
            skipped[unmarked(shown(role) if role is not None else f"type {shown(kind)}")] += 1
            continue
        content = _content(doc, n, item.get("content"))
        if role == "user" and awaiting is not None:
            out.result(awaiting, content)
            awaiting = None
            continue
        awaiting = None
        if role != "assistant" or item.get("tool_calls"):
            out.message({**item, "content": content}, index=n)
            continue
        out.assistant(content)  # open for the calls that follow (a Responses API log's)
        action = _action(content, patterns)
        parsed = parse_command(action) if action is not None else None
        if parsed is not None:
            awaiting = f"call_{n}"
            out.call(awaiting, parsed[0], parsed[1])
    _notes(doc, info, exits, skipped)


def _is_tool_event(item: dict[str, Any]) -> bool:
    return (
        bool(item.get("tool_calls"))
        or item.get("role") == "tool"
        or (item.get("type") in ("function_call", "function_call_output"))
    )


def _patterns(info: dict[str, Any]) -> tuple[re.Pattern[str], ...]:
    """The file's own ``action_regex`` (v2: under ``model``, v1: under ``agent``) first."""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    found = []
    for part in ("model", "agent"):
        section = config.get(part)
        regex = section.get("action_regex") if isinstance(section, dict) else None
        if isinstance(regex, str) and regex:
            with contextlib.suppress(re.error):  # one Python cannot read: defaults still apply
                found.append(re.compile(regex, re.DOTALL))
    return (*found, *_ACTIONS)


def _action(content: str, patterns: tuple[re.Pattern[str], ...]) -> str | None:
    """The command of a turn that holds exactly one (the agent rejects any other turn)."""
    for pattern in patterns:
        actions = pattern.findall(content)
        if actions:
            first = actions[0]
            return first.strip() if len(actions) == 1 and isinstance(first, str) else None
    return None


def _content(doc: Document, n: int, content: Any) -> str:
    try:
        return text_of(content)
    except TypeError as exc:
        raise doc.fail(f"messages[{n}]: field 'content': {exc}") from None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""  # the builder names a missing id or name


def _notes(
    doc: Document, info: dict[str, Any], exits: list[dict[str, Any]], skipped: Counter[str]
) -> None:
    """The exit status and any other entry that is no chat message, as import notes."""
    for item in exits:
        extra = item.get("extra") if isinstance(item.get("extra"), dict) else {}
        status = extra.get("exit_status") or info.get("exit_status")
        submission = extra.get("submission", item.get("content"))
        doc.note(_exit_note(status, submission, "an 'exit' message, not imported"))
    if not exits and (info.get("exit_status") or info.get("submission")):
        doc.note(_exit_note(info.get("exit_status"), info.get("submission"), "info.exit_status"))
    for role, count in sorted(skipped.items()):
        doc.note(f"{count} {role} entr{'y' if count == 1 else 'ies'} not imported (no chat role)")


def _exit_note(status: Any, submission: Any, where: str) -> str:
    status_text = shown(status, 60) if status else "no status"
    size = f", submission of {len(submission):,} characters" if isinstance(submission, str) else ""
    return f"mini-swe-agent exit: {status_text} ({where}{size})"
