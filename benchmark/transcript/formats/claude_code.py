"""Claude Code session logs: ``~/.claude/projects/<project>/<session-id>.jsonl``.

One event per line. Only ``user`` and ``assistant`` events are conversation;
titles, local notices, file snapshots and types added later are skipped.
Claude Code often writes one line per content block of the same API message,
so consecutive assistant lines sharing ``message.id`` form one message. A
sub-agent's (Task tool) own conversation is logged inline with
``isSidechain``: the main model never saw it (only the Task result), so it is
left out, and a file of a sub-agent alone (``subagents/agent-*.jsonl``) is
refused as one (``SubagentLog``). Thinking blocks are left out too: they are
not carried forward as text. Injected caveats (``isMeta``) are kept: they
were in the model's context. So is the summary Claude Code writes when it
compacts (``isCompactSummary``, after a ``compact_boundary`` event; older
logs open a new file with it): it is kept and marked ``summary``, so probes
never draw on it.
"""

from __future__ import annotations

from typing import Any

from benchmark.transcript.formats._builder import ConversationBuilder, text_of
from benchmark.transcript.formats._document import (
    Document,
    NotATranscript,
    SubagentLog,
    shown,
)
from benchmark.transcript.formats._parts import MEDIA, part_text

NAME = "claude_code"

_CONVERSATION = ("user", "assistant")
_OTHER_TYPES = frozenset({"summary", "file-history-snapshot"})  # may lack a sessionId
_SESSION_KEYS = ("sessionId", "parentUuid", "leafUuid")
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def claims_record(record: dict[str, Any]) -> bool:
    """A Claude Code event: not a chat message (top-level ``role``), not a Codex rollout item."""
    if "role" in record:
        return False
    kind = record.get("type")
    if kind in _CODEX_TYPES and "payload" in record:
        return False
    if kind in _CONVERSATION and isinstance(record.get("message"), dict):
        return True
    return kind in _OTHER_TYPES or any(key in record for key in _SESSION_KEYS)


def convert(doc: Document, out: ConversationBuilder) -> None:
    if doc.records is None:
        raise doc.fail(
            "expected JSON Lines (one Claude Code event per line), got one JSON document"
        )
    sidechain: list[int] = []
    unknown: set[str] = set()  # assistant block types warned about once
    conversation = 0
    for line, record in doc.records:
        if not isinstance(record, dict):
            raise doc.fail(f"expected a JSON object per line, got {type(record).__name__}", line)
        kind = record.get("type")
        if kind not in _CONVERSATION:
            continue  # titles, notices, snapshots, future event types
        conversation += 1
        if record.get("isSidechain") is True:
            sidechain.append(line)
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            raise doc.fail(f"field 'message': expected an object, got {_kind(message)}", line)
        if kind == "user":
            _user(doc, line, message.get("content"), out, record.get("isCompactSummary") is True)
        else:
            _assistant(doc, line, message, out, unknown)
    if not conversation:
        raise NotATranscript(
            doc.path,
            "no messages (no user or assistant event): Claude Code metadata (a title, a summary, a "
            "sub-agent's meta), not a session",
        )
    if sidechain:
        if len(sidechain) == conversation:
            raise SubagentLog(
                doc.path,
                f"all {conversation} conversation events are a sub-agent's (isSidechain); this "
                "is a Task sub-agent's log, import the main session file instead",
            )
        doc.warn(
            f"skipped {len(sidechain)} sub-agent (isSidechain) events: a Task tool's own "
            "conversation, which the main session only saw as the Task result",
            sidechain[0],
        )


def _user(
    doc: Document, line: int, content: Any, out: ConversationBuilder, summary: bool = False
) -> None:
    """Tool results become ``tool`` messages; the event's text follows as a user message
    (``summary``: Claude Code's own compaction summary)."""
    said = out.summary if summary else out.user
    if isinstance(content, str):
        if content.strip():
            said(content, line)
        return
    texts = []
    for n, block in enumerate(_blocks(doc, line, content)):
        where = f"message.content.{n}"
        kind = block["type"]
        if kind == "tool_result":
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                raise doc.fail(
                    f"field '{where}.tool_use_id': a tool_result needs the id of its tool_use",
                    line,
                )
            try:
                text = text_of(block.get("content"))
            except TypeError as exc:
                raise doc.fail(f"field '{where}.content': {exc}", line) from None
            out.result(call_id, text, line)
        elif kind == "text":
            texts.append(_text(doc, line, block, where))
        else:  # images, documents: named in place of their content
            texts.append(part_text(block))
    text = "\n".join(t for t in texts if t)
    if text.strip():
        said(text, line)


def _assistant(
    doc: Document, line: int, message: dict[str, Any], out: ConversationBuilder, unknown: set[str]
) -> None:
    key = message.get("id") if isinstance(message.get("id"), str) else None
    content = message.get("content")
    if isinstance(content, str):
        if content.strip():
            out.assistant(content, line, key)
        return
    for n, block in enumerate(_blocks(doc, line, content)):
        where = f"message.content.{n}"
        kind = block["type"]
        if kind == "text":
            text = _text(doc, line, block, where)
            if text.strip():
                out.assistant(text, line, key)
        elif kind == "tool_use":
            call_id, name, args = block.get("id"), block.get("name"), block.get("input")
            if not isinstance(call_id, str) or not call_id:
                raise doc.fail(f"field '{where}.id': a tool_use block needs an id", line)
            if not isinstance(name, str) or not name:
                raise doc.fail(
                    f"field '{where}.name': tool_use {shown(call_id)} has no tool name", line
                )
            if args is not None and not isinstance(args, dict):
                raise doc.fail(
                    f"field '{where}.input': expected an object, got {_kind(args)}", line
                )
            out.call(call_id, name, args, line, key)
        elif kind in MEDIA:  # named in place of its content, as in user events
            out.assistant(part_text(block), line, key)
        elif kind not in _SKIPPED_BLOCKS and kind not in unknown:
            unknown.add(kind)
            doc.warn(f"skipped assistant content blocks of type {shown(kind)} (first here)", line)


def _blocks(doc: Document, line: int, content: Any) -> list[dict[str, Any]]:
    """The content blocks of a message, each an object with a string ``type``."""
    if not isinstance(content, list):
        raise doc.fail(
            f"field 'message.content': expected text or a list of content blocks, got "
            f"{_kind(content)}",
            line,
        )
    for n, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise doc.fail(
                f"field 'message.content.{n}': expected a content block (an object with a "
                f"'type'), got {_kind(block)}",
                line,
            )
    return content


def _text(doc: Document, line: int, block: dict[str, Any], where: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise doc.fail(f"field '{where}.text': expected text, got {_kind(text)}", line)
    return text


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
