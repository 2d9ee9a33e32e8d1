"""Cutting a context into retrievable passages, each with the terms of what surrounds it.

A line alone often lacks the words a question uses: an error line does not
name the command that raised it, a bare path under ``Files created:`` does
not say "created", a command does not say how it failed. So each passage
also carries *link terms*, indexed but never returned:

* a list item or indented line under a heading line (``Files created:``,
  ``## Pending``) gets the heading's terms;
* an error line in an action's result gets the action's terms (tool name
  and short arguments for a tool call, the command for a fenced command
  block answered by the next user message); other result lines (file
  bodies, listings) do not, or they would all match any question naming
  the file;
* a task-list item gets ``done`` (``- [x]``) or ``open`` (``- [ ]``);
* a long one-line JSON tool result is cut at its members
  (:mod:`benchmark.answerer.json_passages`), each found by the keys it sits under
  and the call that returned it;
* a tool call line (every piece of it) gets the call's name and short
  one-line arguments (a path, a command) and the terms of the error lines of
  its result; a fenced command gets its result's error terms.

Each tool call also yields a *header* passage: its line (up to twice the
passage bound) indexed by those link terms alone, so "what did we change in
x.py" finds the edit by the path it acted on, however long the edit.

Everything comes from the messages given, so nothing outside the context
can reach an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from benchmark.answerer.json_passages import json_pieces
from benchmark.text import identifiers, tokens
from benchmark.transcript.models import Message, ToolCall

Analyzer = Callable[[str], list[str]]

_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
_HEADING_MAX_CHARS = 120
# Words of a result line that reports a failure ("E999 SyntaxError: ...", "FAILED ...").
_FAILURE_WORDS = ("error", "exception", "warning", "fail", "fatal", "traceback")
_FAILURE = re.compile("|".join(_FAILURE_WORDS))  # searched in the lowercased line
_CHECKBOX = re.compile(r"^(?:[-*+]\s+)?\[([ xX])\]\s")
# A fenced command block closing an assistant message (text tool protocols).
_COMMAND_BLOCK = re.compile(r"```[\w-]*[ \t]*\n(.*?)\n?```\s*$", re.S)
# Longer or multi-line arguments (file bodies, code to replace) say what was
# written, not what was acted on.
_ARG_MAX_CHARS = 120
_MAX_LINK_TERMS = 24
_MAX_ERROR_LINES = 3


@dataclass(frozen=True)
class Passage:
    """A verbatim span of the context and the extra terms it is found by."""

    text: str
    link_terms: tuple[str, ...]
    # Indexed by its link terms alone (a long action found by what it acted on).
    link_only: bool = False
    # The agent's own prose (an assistant message's text, not a tool call): where it
    # states what it decided and why.
    prose: bool = False


def passages(context: list[Message], max_tokens: int, analyze: Analyzer) -> list[Passage]:
    """Every non-blank line of the context in order, long lines cut to ``max_tokens``."""
    results = _results(context)
    calls = {
        call.id: analyze(_call_text(call))
        for message in context
        for call in message.tool_calls or []
    }
    out: list[Passage] = []
    for i, message in enumerate(context):
        text = message.render()
        result_link = _result_link(context, i, calls, analyze)
        call_links = _call_links(message, results, calls, i, context, analyze)
        own = {line.strip() for line in (message.content or "").split("\n")}
        for line, heading in _lines(text, analyze):
            link = heading + _checkbox_terms(line, analyze) + call_links.get(line, [])
            if result_link and _reports_failure(line):
                link += result_link
            members = json_pieces(line, max_tokens) if message.role == "tool" else None
            for piece, keys in members or ():  # a long JSON result: its members
                found_by = analyze(" ".join(keys)) + result_link + link
                out.append(Passage(piece, tuple(found_by[:_MAX_LINK_TERMS])))
            pieces = [] if members else _cut(line, max_tokens)
            prose = message.role == "assistant" and line in own and line not in call_links
            for piece in pieces:
                out.append(Passage(piece, tuple(link[:_MAX_LINK_TERMS]), prose=prose))
            if line in call_links:
                head = _cut(line, 2 * max_tokens)[0]
                out.append(Passage(head, tuple(call_links[line][:_MAX_LINK_TERMS]), True))
    return out


def _reports_failure(line: str) -> bool:
    return _FAILURE.search(line.lower()) is not None


def _checkbox_terms(line: str, analyze: Analyzer) -> list[str]:
    """A markdown task-list box says whether the item is done: ``- [x]`` / ``- [ ]``."""
    match = _CHECKBOX.match(line)
    if match is None:
        return []
    return analyze("done completed finished" if match.group(1) in "xX" else "open pending todo")


def _results(context: list[Message]) -> dict[str, str]:
    """Tool call id -> the text of the first tool message answering it."""
    found: dict[str, str] = {}
    for message in context:
        if message.role == "tool" and message.tool_call_id:
            found.setdefault(message.tool_call_id, message.render())
    return found


def _command_block(message: Message) -> str | None:
    if message.role != "assistant" or message.tool_calls or not message.content:
        return None
    match = _COMMAND_BLOCK.search(message.content)
    return match.group(1).strip() if match and match.group(1).strip() else None


def _call_text(call: ToolCall) -> str:
    """Tool name and short argument values: what the call did, without file bodies."""
    values = [str(v) for v in call.function.args().values()]
    short = [v for v in values if len(v) <= _ARG_MAX_CHARS and "\n" not in v]
    return " ".join([call.function.name, *short])


def _result_link(
    context: list[Message], i: int, calls: dict[str, list[str]], analyze: Analyzer
) -> list[str]:
    """Terms of the action that ``context[i]`` is the result of (none if it is not one)."""
    message = context[i]
    if message.role == "tool" and message.tool_call_id:
        return calls.get(message.tool_call_id, [])
    if message.role == "user" and i > 0:
        block = _command_block(context[i - 1])
        if block:
            return analyze(block)
    return []


def _call_links(
    message: Message,
    results: dict[str, str],
    calls: dict[str, list[str]],
    i: int,
    context: list[Message],
    analyze: Analyzer,
) -> dict[str, list[str]]:
    """Stripped action line -> terms of the error lines of its result.

    A tool call line also carries its own name and short arguments, so the
    pieces of a long call (a file body being written) keep the file's path.
    """
    links: dict[str, list[str]] = {}
    for call in message.tool_calls or []:
        result = results.get(call.id, "")
        line = f"[tool call {call.function.name}] {call.function.arguments}".strip()
        links[line] = calls.get(call.id, []) + _error_terms(result, analyze)
    block = _command_block(message)
    if block and i + 1 < len(context) and context[i + 1].role == "user":
        errors = _error_terms(context[i + 1].render(), analyze)
        for line in block.split("\n"):
            if line.strip():
                links[line.strip()] = errors
    return {k: v for k, v in links.items() if v}


def _error_terms(text: str, analyze: Analyzer) -> list[str]:
    errors = identifiers.harvest(text, ["error"]).get("error", [])[:_MAX_ERROR_LINES]
    return analyze(" ".join(errors))


def _lines(text: str, analyze: Analyzer) -> list[tuple[str, list[str]]]:
    """Non-blank lines of ``text``, stripped, with the terms of the heading they sit under."""
    out: list[tuple[str, list[str]]] = []
    heading_terms: list[str] = []
    heading_indent = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            heading_terms = []
            continue
        indent = len(line) - len(line.lstrip())
        under = bool(heading_terms) and (
            _LIST_ITEM.match(line) is not None or indent > heading_indent
        )
        out.append((stripped, heading_terms if under else []))
        if len(stripped) <= _HEADING_MAX_CHARS and (
            stripped.endswith(":") or stripped.startswith("#")
        ):
            heading_terms = analyze(stripped)
            heading_indent = indent
        elif not under:
            heading_terms = []
    return out


def _cut(line: str, max_tokens: int) -> list[str]:
    """``line`` whole when within ``max_tokens``, else pieces cut at whitespace when possible."""
    # At most one token per byte: short lines need no counting.
    if len(line.encode()) <= max_tokens or tokens.count(line) <= max_tokens:
        return [line]
    pieces: list[str] = []
    width = max_tokens * 4
    rest = line
    while rest:
        piece = _head(rest, width)
        while len(piece) > 1 and tokens.count(piece) > max_tokens:
            piece = _head(piece, len(piece) // 2)
        pieces.append(piece.strip())
        rest = rest[len(piece) :].lstrip()
    return [p for p in pieces if p]


def _head(text: str, width: int) -> str:
    """At most ``width`` leading characters, ending at whitespace when one is near."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", width // 2, width + 1)
    return text[: cut if cut > 0 else width]
