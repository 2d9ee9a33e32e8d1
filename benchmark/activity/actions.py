"""Agent actions (tool calls and text command blocks) paired with their results.

Two protocols are covered. OpenAI tool calling: an assistant message carries
``tool_calls`` and ``tool`` messages answer them by ``tool_call_id``. Text
protocols (SWE-agent and kin): the assistant ends its message with a fenced
command block and the environment replies in the next ``user`` message.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

from benchmark.activity.vocabulary import TEXT_COMMANDS, shell_command, tool_key, tool_kind
from benchmark.transcript.models import Message

_BLOCK = re.compile(r"```([\w-]*)[ \t]*\n(.*?)\n?```\s*$", re.S)
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh"})
_OPEN_FILE = re.compile(r"^\(Open file: (.+?)\)\s*$", re.M)
# What Codex's ``exec_command`` prints when its command keeps running in a session.
_SESSION = re.compile(r"\bProcess running with session ID (\w+)")


@dataclass(frozen=True)
class Action:
    """One thing the agent did.

    ``index`` is the message holding the call; ``result_index`` the message
    with the environment's reply (``None`` when it is not in view).
    """

    index: int
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    command: str | None = None
    result_index: int | None = None
    result: str = ""
    session: Action | None = None  # keystrokes' call: the command that started the session

    @property
    def ran(self) -> Action:
        """The call whose command this one's output belongs to: the command that started
        the session for keystrokes or a poll sent to it (Codex ``write_stdin``), else itself."""
        return self.session if self.command is None and self.session is not None else self

    @property
    def tool(self) -> str:
        """Tool name as the vocabulary knows it (``mcp__fs__read_file`` -> ``read_file``)."""
        return tool_key(self.name)


def open_file(observation: str) -> str | None:
    """The file an SWE-agent observation names as open (``(Open file: /x.py)``)."""
    found = _OPEN_FILE.findall(observation)
    if not found or found[-1].strip() in ("n/a", ""):
        return None
    return found[-1].strip()


def extract(messages: list[Message], texts: dict[int, str], start: int, end: int) -> list[Action]:
    """Actions whose call lies in ``[start, end)``, in order, with their results."""
    results: dict[str, int] = {}
    for i in range(start, end):
        msg = messages[i]
        if msg.role == "tool" and msg.tool_call_id and msg.tool_call_id not in results:
            results[msg.tool_call_id] = i
    actions: list[Action] = []
    for i in range(start, end):
        msg = messages[i]
        if msg.role != "assistant":
            continue
        if msg.tool_calls:
            for call in msg.tool_calls:
                args = call.function.args()
                r = results.get(call.id)
                actions.append(
                    Action(
                        index=i,
                        name=call.function.name,
                        args=args,
                        command=shell_command(call.function.name, args),
                        result_index=r,
                        result=texts[r] if r is not None else "",
                    )
                )
            continue
        action = _text_action(i, msg.content or "", messages, texts, end)
        if action is not None:
            actions.append(action)
    return _sessions(actions)


def _sessions(actions: list[Action]) -> list[Action]:
    """Keystrokes and polls sent to a running session (``write_stdin`` with a ``session_id``)
    linked to the command that started it, so an error its output shows is that command's,
    not a generic ``write_stdin``'s. A session started out of view stays unlinked."""
    started: dict[str, Action] = {}
    linked: list[Action] = []
    for action in actions:
        sid = action.args.get("session_id")
        if tool_kind(action.name) == "stdin" and sid is not None and str(sid) in started:
            action = replace(action, session=started[str(sid)])
        if action.command is not None and tool_kind(action.name) == "shell":
            for found in _SESSION.finditer(action.result):
                started[found.group(1)] = action
        linked.append(action)
    return linked


def _text_action(
    index: int, content: str, messages: list[Message], texts: dict[int, str], end: int
) -> Action | None:
    match = _BLOCK.search(content)
    nxt = index + 1
    if match is None or match.group(1).lower() not in _SHELL_LANGS:
        return None
    if nxt < end and messages[nxt].role not in ("user", "tool"):
        return None  # (past ``end`` nothing is read: the reply is simply not in view)
    parsed = parse_command(match.group(2))
    if parsed is None:
        return None
    name, args, command = parsed
    result_index = nxt if nxt < end else None
    result = texts.get(nxt, "") if result_index is not None else ""
    return Action(index, name, args, command, result_index, result)


def parse_command(body: str) -> tuple[str, dict[str, Any], str | None] | None:
    """(tool name, arguments, shell command) of a text-protocol command block.

    An SWE-agent interface command (``open x.py``, ``edit 3:5 ... end_of_edit``)
    keeps its own name; anything else is a ``bash`` command. ``None`` when empty.
    """
    body = body.strip("\n")
    if not body.strip():
        return None
    first, _, rest = body.partition("\n")
    words = _split(first)
    if not words:
        return None
    word = words[0]
    if word not in TEXT_COMMANDS:
        return "bash", {"command": body}, body
    args: dict[str, Any] = {"_line": first.strip()}
    if word in ("create", "open") and len(words) > 1:
        args["path"] = words[1]
    if word in ("edit", "insert"):
        lines = rest.split("\n")
        if lines and lines[-1].strip() in ("end_of_edit", "end_of_insert"):
            lines = lines[:-1]
        args["new_str"] = "\n".join(lines)
    return word, args, None


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()
