"""OpenAI chat format: ``{"messages": [...]}``, a bare list, or JSON Lines of messages."""

from __future__ import annotations

from typing import Any

from benchmark.transcript.formats._builder import ConversationBuilder
from benchmark.transcript.formats._document import Document

NAME = "chat"


def claims(value: Any) -> bool:
    """A whole-file JSON document in this format. A list of objects none of which has a
    ``role`` (a todo list, a settings array) is no conversation, so not claimed."""
    if isinstance(value, list):
        head = value[:50]
        return not head or not all(isinstance(v, dict) and "role" not in v for v in head)
    return isinstance(value, dict) and "messages" in value


def claims_record(record: dict[str, Any]) -> bool:
    """A JSON Lines record in this format: one message per line (or, so that it can be
    refused by name, one conversation per line: a fine-tuning dataset)."""
    return "role" in record or isinstance(record.get("messages"), list)


def convert(doc: Document, out: ConversationBuilder) -> None:
    if doc.records is not None:
        for line, record in doc.records:
            if isinstance(record, dict) and "messages" in record and "role" not in record:
                raise doc.fail(
                    "one conversation per line (a fine-tuning dataset); this importer reads one "
                    "session per file, one message per line",
                    line,
                )
            out.message(record, line=line)
        return
    messages = doc.value
    if isinstance(messages, dict):
        if "messages" not in messages:
            raise doc.fail("expected a 'messages' key or a bare list of messages")
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise doc.fail(f"'messages' must be a list, got {type(messages).__name__}")
    for index, item in enumerate(messages):
        out.message(item, index=index)
