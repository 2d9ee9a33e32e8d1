"""JSON replies: the object pulled out of a model's reply, and the strict schema asking for one.

Judges and the probe writer ask for JSON; a model may still wrap it in a
fence or in prose, so the reply is searched rather than parsed whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchmark.redaction import clip

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S | re.I)


def extract_json(text: str) -> Any:
    """The JSON object in a reply: bare, inside a ```json fence, or amid prose.

    Raises ``ValueError`` (which makes the client ask again) when none parses.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ValueError(f"reply is not a JSON object: {clip(stripped, 80)!r}")


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema for an object with exactly ``properties``, every one required
    (what strict structured output demands)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
