"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Two generations are read. Current rollouts wrap each line in an envelope
``{"timestamp", "type", "payload"}``: ``session_meta``, ``response_item`` (a
Responses-API item), ``compacted`` (Codex's own summary, kept as the user
message Codex makes of it and marked ``summary``, so probes never draw on it;
a remote compaction's summary is encrypted and only noted) and UI records
(``event_msg``, ``turn_context``) that only repeat items, so they are
skipped. Older rollouts (mid-2025) start with the bare session meta, then
hold bare items between ``{"record_type": "state"}`` lines.

Tool calls keep the arguments the model wrote. ``apply_patch`` as a custom
(freeform) tool becomes ``{"input": <patch>}`` and ``local_shell_call`` a
``local_shell`` call with ``{"command": [...]}``, so the activity readers see
patches and commands. Older tool outputs wrap the text in JSON
(``{"output": ..., "metadata": ...}``); it is unwrapped so error lines stay lines.
"""

from __future__ import annotations

import json
from typing import Any

from benchmark.transcript.formats._builder import ConversationBuilder, text_of
from benchmark.transcript.formats._document import Document, shown
from benchmark.transcript.formats._summaries import is_summary_text

NAME = "codex"

_ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_UI_RECORDS = frozenset({"event_msg", "turn_context"})
_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
# Items that are no conversation, skipped without a word: reasoning (encrypted, or a summary
# the model is not shown again) and the harness's own undo snapshots (``ghost_snapshot``,
# a git commit id Codex writes before each turn's edits).
_SILENT_ITEMS = frozenset({"reasoning", "ghost_snapshot"})
_ROLES = {"user": "user", "assistant": "assistant", "developer": "system", "system": "system"}
_LABELS = {str: "text", dict: "an object", list: "a list"}


def claims_record(record: dict[str, Any]) -> bool:
    """A line of either rollout generation (never a chat message or a Claude Code event)."""
    if "sessionId" in record or "parentUuid" in record:
        return False
    kind = record.get("type")
    if kind in _ENVELOPES:
        return isinstance(record.get("payload"), dict)
    if kind == "message":  # a bare item: a role and Responses-API content, no nested message
        return "role" in record and not isinstance(record.get("message"), dict)
    if kind in _ITEMS:
        return True
    if "record_type" in record:
        return record["record_type"] == "state"
    return _is_legacy_meta(record)


def _is_legacy_meta(record: dict[str, Any]) -> bool:
    return (
        "type" not in record
        and "role" not in record
        and isinstance(record.get("id"), str)
        and isinstance(record.get("timestamp"), str)
        and ("instructions" in record or "git" in record)
    )


def convert(doc: Document, out: ConversationBuilder) -> None:
    _Rollout(doc, out).run()


class _Rollout:
    """One pass over the records; remembers what it skipped to report it once per type."""

    def __init__(self, doc: Document, out: ConversationBuilder) -> None:
        self.doc, self.out = doc, out
        self.meta_seen = False
        self.skipped: dict[str, list[int]] = {}  # type -> [count, first line]

    def run(self) -> None:
        for line, record in self._records():
            if not isinstance(record, dict):
                raise self.doc.fail(f"expected a JSON object, got {_kind(record)}", line)
            kind = record.get("type")
            if isinstance(kind, str) and (kind in _ENVELOPES or "payload" in record):
                self._envelope(kind, record, line)
            elif isinstance(kind, str):
                self._item(record, "", line)
            elif "record_type" in record:
                continue  # legacy state snapshots
            elif _is_legacy_meta(record):
                self._meta(record, "", line)
            else:
                got = "missing" if "type" not in record else f"got {_kind(kind)}"
                raise self.doc.fail(f"field 'type': expected a rollout record type, {got}", line)
        for kind, (count, first) in self.skipped.items():
            self.doc.warn(
                f"skipped {count} {shown(kind)} record(s) this importer does not read "
                f"(first at line {first})"
            )

    def _records(self) -> list[tuple[int, Any]]:
        if self.doc.records is not None:
            return self.doc.records
        if isinstance(self.doc.value, dict):  # a one-line rollout
            return [(1, self.doc.value)]
        raise self.doc.fail(
            f"expected JSON Lines (a Codex CLI rollout), got a JSON {_kind(self.doc.value)}"
        )

    def _skip(self, kind: str, line: int) -> None:
        self.skipped.setdefault(kind, [0, line])[0] += 1

    def _envelope(self, kind: str, record: dict[str, Any], line: int) -> None:
        if kind in _UI_RECORDS:
            return
        payload = _field(self.doc, record, "payload", dict, "", line)
        if kind == "response_item":
            self._item(payload, "payload.", line)
        elif kind == "session_meta":
            self._meta(payload, "payload.", line)
        elif kind == "compacted":
            summary = _field(self.doc, payload, "message", str, "payload.", line)
            summary = summary if summary.strip() else _replaced_summary(payload)
            if summary.strip():
                self.out.summary(summary, line)
            elif isinstance(payload.get("replacement_history"), list):
                self.doc.warn(
                    "a compaction record with no readable summary (a remote compaction: its "
                    "summary is encrypted); skipped",
                    line,
                )
            else:
                self.doc.warn("a compaction record with an empty summary; skipped", line)
        else:
            self._skip(kind, line)

    def _meta(self, meta: dict[str, Any], at: str, line: int) -> None:
        """The session's instructions as system messages (a resumed or forked log repeats
        the meta line; only the first one opens the conversation)."""
        if self.meta_seen:
            return
        self.meta_seen = True
        texts = []
        base = meta.get("base_instructions")
        if isinstance(base, dict):
            texts.append(_field(self.doc, base, "text", str, f"{at}base_instructions.", line))
        elif base is not None:
            texts.append(_field(self.doc, meta, "base_instructions", str, at, line))
        if meta.get("instructions") is not None:
            texts.append(_field(self.doc, meta, "instructions", str, at, line))
        for n, text in enumerate(texts):
            if text.strip() and text not in texts[:n]:
                self.out.system(text, line)

    def _item(self, item: dict[str, Any], at: str, line: int) -> None:
        doc, out = self.doc, self.out
        kind = _field(doc, item, "type", str, at, line)
        if kind == "message":
            role = item.get("role")
            if role not in _ROLES:
                raise doc.fail(
                    f"field '{at}role': expected one of {sorted(_ROLES)}, got {shown(role)}", line
                )
            text = _content(doc, item.get("content"), f"{at}content", line)
            if role == "assistant":
                out.assistant(text, line)
            elif role == "user":
                out.user(text, line)
            else:
                out.system(text, line)
        elif kind == "function_call":
            arguments = item.get("arguments")
            if not isinstance(arguments, (str, dict, list, type(None))):
                raise doc.fail(
                    f"field '{at}arguments': expected JSON text, got {_kind(arguments)}", line
                )
            out.call(
                _call_id(doc, item, at, line),
                _field(doc, item, "name", str, at, line),
                arguments,
                line,
            )
        elif kind == "custom_tool_call":
            freeform = _field(doc, item, "input", str, at, line)  # e.g. apply_patch's patch
            out.call(
                _call_id(doc, item, at, line),
                _field(doc, item, "name", str, at, line),
                {"input": freeform},
                line,
            )
        elif kind == "local_shell_call":
            out.call(
                _call_id(doc, item, at, line),
                "local_shell",
                _local_shell(doc, item, at, line),
                line,
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = _call_id(doc, item, at, line)
            out.result(call_id, _output(doc, item.get("output"), f"{at}output", line), line)
        elif kind not in _SILENT_ITEMS:
            self._skip(kind, line)


def _replaced_summary(payload: dict[str, Any]) -> str:
    """The summary message in a compaction's ``replacement_history`` (when the record's own
    ``message`` is empty), by the wording Codex opens it with; else ``""``."""
    history = payload.get("replacement_history")
    for item in history if isinstance(history, list) else []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            try:
                text = text_of(item.get("content"))
            except TypeError:
                continue
            if is_summary_text(text):
                return text
    return ""


def _call_id(doc: Document, item: dict[str, Any], at: str, line: int) -> str:
    call_id = item.get("call_id")
    if call_id is None and item.get("type") == "local_shell_call":
        call_id = item.get("id")  # early local_shell_call items carry only an item id
    if not isinstance(call_id, str) or not call_id:
        got = "missing" if call_id is None else f"got {shown(call_id)}"
        raise doc.fail(f"field '{at}call_id': expected the tool call's id, {got}", line)
    return call_id


def _local_shell(doc: Document, item: dict[str, Any], at: str, line: int) -> dict[str, Any]:
    action = _field(doc, item, "action", dict, at, line)
    command = action.get("command")
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        raise doc.fail(
            f"field '{at}action.command': expected a list of words, got {_kind(command)}", line
        )
    arguments: dict[str, Any] = {"command": command}
    if isinstance(action.get("working_directory"), str):
        arguments["workdir"] = action["working_directory"]
    return arguments


def _output(doc: Document, output: Any, field: str, line: int) -> str:
    """A tool's output text: a string (older ones JSON-wrapped), content parts, or an object
    holding either."""
    if isinstance(output, dict):
        for key in ("content", "output", "content_items"):
            if isinstance(output.get(key), (str, list)):
                return _output(doc, output[key], f"{field}.{key}", line)
        raise doc.fail(f"field '{field}': expected text or content parts", line)
    if isinstance(output, str):
        return _unwrap(output)
    if isinstance(output, list):
        return _content(doc, output, field, line)
    raise doc.fail(f"field '{field}': expected text, got {_kind(output)}", line)


def _unwrap(text: str) -> str:
    """The ``output`` of an older ``{"output": ..., "metadata": {...}}`` wrapper (after an
    ``Exit code: N`` line when the metadata has the exit code), else ``text``."""
    if not (text.startswith("{") and text.rstrip().endswith("}") and '"output"' in text):
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON (JSONDecodeError), or not plain JSON
        return text
    wrapped = isinstance(value, dict) and set(value) <= {"output", "metadata"}
    if not (wrapped and isinstance(value.get("output"), str)):
        return text
    # The wrapper's exit status is the call's outcome; newer rollouts print it as the
    # output's first line, so the older shape says it the same way.
    metadata = value.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if isinstance(code, int) and not isinstance(code, bool):
        return f"Exit code: {code}\n{value['output']}"
    return value["output"]


def _content(doc: Document, content: Any, field: str, line: int) -> str:
    try:
        return text_of(content)
    except TypeError as exc:
        raise doc.fail(f"field '{field}': {exc}", line) from None


def _field(doc: Document, obj: dict[str, Any], key: str, kind: type, at: str, line: int) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind):
        got = "missing" if key not in obj else f"got {_kind(value)}"
        raise doc.fail(f"field '{at}{key}': expected {_LABELS[kind]}, {got}", line)
    return value


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "text",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
