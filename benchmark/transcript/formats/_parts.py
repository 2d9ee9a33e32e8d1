"""Content parts -> text, for every importer: text kept, anything else a typed placeholder.

A transcript is text, so an image, a recording or an attached file cannot be
carried. Dropping the part would hide that the model saw something there, and
refusing the file would lose the session, so each becomes a placeholder the
answerer and the judge can read: ``[image omitted]``, ``[audio omitted]``,
``[file omitted: report.pdf]``. The part vocabularies of OpenAI chat
(``text``, ``image_url``, ``input_audio``, ``file``), the Responses API
(``input_text``, ``output_text``, ``input_image``, ``input_file``) and
Anthropic (``image``, ``document``) are all read here, so no importer has its own.
"""

from __future__ import annotations

from typing import Any

from benchmark.transcript.formats._document import shown

IMAGE = "[image omitted]"
AUDIO = "[audio omitted]"
FILE = "[file omitted]"
OTHER = "[{kind} omitted]"  # a part of a type none of the vocabularies above has

_IMAGES = frozenset({"image", "image_url", "input_image", "output_image", "image_file"})
_AUDIO = frozenset({"audio", "input_audio", "output_audio"})
_FILES = frozenset({"file", "input_file", "document", "file_url"})
_NAME_KEYS = ("filename", "title", "name", "file_id")
MEDIA = _IMAGES | _AUDIO | _FILES  # part types that stand for an image, a recording, a file


def text_of(content: Any) -> str:
    """Text of a content field: a string, or a list of parts (text kept, the rest named).

    A ``TypeError`` (one line) when a part is neither text nor an object with a ``type``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise TypeError(f"content must be text or a list of parts, got {type(content).__name__}")
    return "\n".join(part_text(part) for part in content)


def part_text(part: Any) -> str:
    """One content part as text: its own text, or the placeholder of its type."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        raise TypeError(f"a content part must be an object with a 'type', got {shown(part)}")
    if isinstance(part.get("text"), str):
        return part["text"]
    kind = part.get("type")
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return part["refusal"]
    if not isinstance(kind, str):
        raise TypeError(f"a content part must be an object with a 'type', got {shown(part)}")
    if kind in _IMAGES:
        return IMAGE
    if kind in _AUDIO:
        return AUDIO
    if kind in _FILES:
        name = _file_name(part, kind)
        return f"[file omitted: {name}]" if name else FILE
    return OTHER.format(kind=" ".join(kind.split()) or "part")


def _file_name(part: dict[str, Any], kind: str) -> str:
    """The attached file's name where the part gives one (``file.filename``, a document's
    ``title``...), on one line; else ``""``."""
    places = [part] + [part[k] for k in ("file", kind, "source") if isinstance(part.get(k), dict)]
    for place in places:
        for key in _NAME_KEYS:
            value = place.get(key)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())
    return ""
