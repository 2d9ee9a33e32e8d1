"""How a text is spelled inside a rendered message.

A tool call renders as its arguments' JSON string, exactly as the model saw
it, so a command, code or path holding ``"``, ``\\`` or a line break appears
there JSON-escaped (``grep -n \\"x\\" a.py``), and non-ASCII text may appear as
``\\uXXXX``. Gold facts and evidence must quote the message verbatim, so they
take the spelling the message actually holds.
"""

from __future__ import annotations

import json
import re

_TRAILING_ESCAPE = re.compile(r"\\+(u[0-9a-fA-F]{0,3})?$")


def spellings(text: str) -> list[str]:
    """``text`` as written, then JSON-escaped (non-ASCII kept, then ``\\u``-escaped)."""
    out = [text]
    for ascii_only in (False, True):
        escaped = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
        if escaped not in out:
            out.append(escaped)
    return out


def spelled(text: str, haystack: str) -> str | None:
    """The first spelling of ``text`` that occurs in ``haystack``; ``None`` when none does."""
    if not text or text in haystack:
        return text or None
    return next((s for s in spellings(text)[1:] if s in haystack), None)


def whole_escapes(text: str) -> str:
    """``text`` without a trailing escape sequence cut in half (``ab\\`` -> ``ab``).

    A clipped escaped spelling may end inside ``\\"`` or ``\\u00e9``; the stub
    is dropped so the clipped text is still a run of whole characters.
    """
    match = _TRAILING_ESCAPE.search(text)
    if match is None:
        return text
    run = len(match.group(0)) - len(match.group(1) or "")
    if run % 2 == 0:  # escaped backslashes; what follows them is plain text
        return text
    return text[: match.start() + run - 1]
