"""A long one-line JSON tool result cut into its members, each with the keys it sits under.

An API tool (a customer-service agent's ``get_user_details``, an MCP server's lookup)
answers with one line of JSON, often thousands of characters. Cut at whitespace into
passages of a few hundred tokens, the piece holding ``"payment_methods": {...}`` is
found by nothing a question says about it (the call that returned it, the key), and a
right answer was missed on the uncompacted context itself. Cut at its members instead,
each piece is verbatim text of the line, and the caller indexes it by the keys above it
and the call that returned it, as a question names them.
"""

from __future__ import annotations

import json

from benchmark.text import tokens

Piece = tuple[str, tuple[str, ...]]  # verbatim text, the keys it sits under
_MAX_PIECES = 2000  # a result of more members is cut no finer


def json_pieces(line: str, max_tokens: int) -> list[Piece] | None:
    """Members of ``line`` (a JSON object or array over ``max_tokens``), as verbatim
    substrings with their key paths; a member still too long is cut into its own.
    ``None`` when ``line`` is not such JSON: it is then cut as any line is."""
    text = line.strip()
    if not text or text[0] not in "{[" or tokens.count(text) <= max_tokens:
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    out: list[Piece] = []
    _split(text, (), max_tokens, out)
    return out if len(out) > 1 else None


def _split(text: str, path: tuple[str, ...], max_tokens: int, out: list[Piece]) -> None:
    """Append ``text`` (a JSON value) whole when it fits, else its members, recursively."""
    if len(out) >= _MAX_PIECES or tokens.count(text) <= max_tokens or text[0] not in "{[":
        out.append((text, path))
        return
    for member in _members(text[1:-1]):
        key, value = _key_value(member) if text[0] == "{" else (None, member)
        inner = (*path, key) if key is not None else path
        if tokens.count(member) <= max_tokens or not value or value[0] not in "{[":
            out.append((member, inner))
        else:
            _split(value, inner, max_tokens, out)


def _members(body: str) -> list[str]:
    """The comma-separated members of an object's or array's body, stripped."""
    found: list[str] = []
    depth, start, quoted, escaped = 0, 0, False, False
    for i, ch in enumerate(body):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            found.append(body[start:i].strip())
            start = i + 1
    found.append(body[start:].strip())
    return [m for m in found if m]


def _key_value(member: str) -> tuple[str | None, str]:
    """(key, value text) of an object member ``"key": value``."""
    if not member.startswith('"'):
        return None, member
    escaped = False
    for i, ch in enumerate(member[1:], 1):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            try:
                key = json.loads(member[: i + 1])
            except ValueError:
                return None, member
            return str(key), member[i + 1 :].lstrip().removeprefix(":").strip()
    return None, member
