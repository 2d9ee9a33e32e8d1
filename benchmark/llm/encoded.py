"""JSON text in which each long string is escaped once per process, not once per request.

Every request of a compaction point carries the same ~100 KB rendered context, as a
JSON string inside the user message, which is a JSON string inside the request body.
JSON escaping works character by character, so the escaped form of a text is the
escaped forms of its parts joined: :func:`dumps` escapes a long string it has seen
before (the same object) from memory, and returns a :class:`JsonText` that knows its
own escaped form, built from those parts, for the body that carries it.
:func:`left_out` gives the same document with each long string replaced by a short
marker saying how long it was: what a kept call (its trace) holds instead of ~100 KB.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from typing import Any

LONG = 4096  # shorter strings are escaped as they come: the memo would cost more
_MEMO_MAX = 256
_MEMO: dict[int, tuple[str, str]] = {}  # id(text) -> (text kept alive, its JSON string)
_LOCK = threading.Lock()
# Stands for a long string while the rest is encoded: private-use characters around a
# per-process random tag, which JSON leaves as they are and no input can predict.
_TAG = f"\ue000{secrets.token_hex(8)}\ue001"
# A long string left out of a kept request: its length, then its JSON-escaped length.
_LEFT_OUT = re.compile("\ue000left out: (\\d+) (\\d+)\ue001")


class JsonText(str):
    """A JSON document (a str) whose own JSON string form, ``quoted``, is built from its
    parts on first use: a message's content needs it, a request body sent as is does not."""

    _plain: list[str]
    _long: list[str]
    _texts: list[str]  # the long strings themselves (references), for their lengths
    _quoted: str | None = None

    @property
    def quoted(self) -> str:
        if self._quoted is None:
            inner = [json.encoder.encode_basestring(p)[1:-1] for p in self._plain]
            longs = [quoted(p)[1:-1] for p in self._long]
            self._quoted = '"' + "".join(_interleave(inner, longs)) + '"'
        return self._quoted


def quoted(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``: from memory for a long string seen before."""
    if isinstance(text, JsonText):
        return text.quoted
    if len(text) < LONG:
        return json.encoder.encode_basestring(text)
    with _LOCK:
        hit = _MEMO.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    value = json.encoder.encode_basestring(text)
    with _LOCK:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[id(text)] = (text, value)
    return value


def dumps(value: Any, **options: Any) -> JsonText:
    """``json.dumps(value, ensure_ascii=False, **options)``, its long strings escaped by
    :func:`quoted`; the result knows its own JSON string form."""
    longs: list[str] = []

    def swap(v: Any) -> Any:
        if isinstance(v, str) and len(v) >= LONG:
            longs.append(v)
            return f"{_TAG}{len(longs) - 1}{_TAG}"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [swap(x) for x in v]
        return v

    text = json.dumps(swap(value), ensure_ascii=False, **options)
    parts = text.split(f'"{_TAG}')
    plain, long_parts = [parts[0]], []
    for part in parts[1:]:
        index, rest = part.split(f'{_TAG}"', 1)
        long_parts.append(quoted(longs[int(index)]))
        plain.append(rest)
    out = JsonText("".join(_interleave(plain, long_parts)))
    out._plain, out._long, out._texts = plain, long_parts, longs
    return out


def prefixed(head: str, text: JsonText, drop: int = 0) -> JsonText:
    """``head + text[drop:]`` as a :class:`JsonText` (``drop`` within its first plain part)."""
    out = JsonText(head + text[drop:])
    out._plain = [head + text._plain[0][drop:], *text._plain[1:]]
    out._long = text._long
    out._texts = text._texts
    return out


def left_out(text: str) -> str:
    """``text`` with each long string (a :class:`JsonText`'s) replaced by a marker of its
    length (:func:`whole_length` reads them): still JSON, a few hundred characters, built
    without reading the long strings. Any other text is returned as it is."""
    if not isinstance(text, JsonText) or not getattr(text, "_long", None):
        return text
    marks = [
        json.dumps(f"\ue000left out: {len(t)} {len(q) - 2}\ue001", ensure_ascii=False)
        for t, q in zip(text._texts, text._long, strict=True)
    ]
    return "".join(_interleave(text._plain, marks))


def whole_length(text: str, escaped: bool = False) -> int:
    """The length ``text`` had before :func:`left_out`, each marker counted as its string
    (``escaped``: as that string's JSON-escaped form, for a marker inside JSON text)."""
    return len(text) + sum(
        int(m[2 if escaped else 1]) - len(m[0]) for m in _LEFT_OUT.finditer(text)
    )


def has_left_out(text: str) -> bool:
    """Whether ``text`` holds a :func:`left_out` marker."""
    return "\ue000left out: " in text


def _interleave(plain: list[str], long_parts: list[str]) -> list[str]:
    out = [plain[0]]
    for long_part, after in zip(long_parts, plain[1:], strict=True):
        out += [long_part, after]
    return out
