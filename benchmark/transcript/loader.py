"""Load chat-format transcripts from JSON files with errors that name file, index and field."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from benchmark.errors import UserError
from benchmark.transcript.models import Message, Transcript


def load_file(path: str | Path) -> Transcript:
    """Read ``{"messages": [...]}`` or a bare list of messages."""
    path = Path(path).expanduser()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"transcript file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return parse_messages(raw, source=str(path), transcript_id=path.stem)


def parse_messages(raw: object, *, source: str, transcript_id: str) -> Transcript:
    if isinstance(raw, dict):
        if "messages" not in raw:
            raise UserError(f"{source}: expected a 'messages' key or a bare list of messages")
        raw = raw["messages"]
    if not isinstance(raw, list):
        raise UserError(f"{source}: 'messages' must be a list, got {type(raw).__name__}")
    if not raw:
        raise UserError(f"{source}: the transcript has no messages")
    messages = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise UserError(
                f"{source}: message {index}: expected an object, got {type(item).__name__}"
            )
        try:
            messages.append(Message.model_validate(item))
        except ValidationError as exc:
            raise UserError(f"{source}: message {index}: {_first_error(exc)}") from None
    return Transcript(id=transcript_id, source=source, messages=messages)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(part) for part in err["loc"]) or "message"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "literal_error" and "input" in err:
        return f"field '{field}': {msg} (got {err['input']!r})"
    return f"field '{field}': {msg}"
