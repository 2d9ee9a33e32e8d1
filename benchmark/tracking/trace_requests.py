"""A call's request as its trace shows it: the prompt, with the bulky context as a pointer.

Every answerer and judge request carries the point's whole compacted context
(~100 KB); it is logged once already, as ``contexts/<transcript>/point_<k>.txt``.
Copying it into every span made a run's traces ~100 MB and its logging ~11 s,
and hid the question and answer in the UI. The untrusted data of a chat
request (:mod:`benchmark.llm.untrusted`) is read back, and its long texts
become one line saying what stood there and where to read it. The ledger keeps a
call's request with those texts left out already (``benchmark.llm.usage.kept_request``:
a marker of each one's length), so the ~100 KB never reaches the trace's process.
"""

from __future__ import annotations

import json
from typing import Any

from benchmark.llm.encoded import has_left_out, whole_length
from benchmark.llm.untrusted import DATA_KEY
from benchmark.llm.usage import CallPurpose

LONG = 2_000  # characters: a data text longer than this is left out of the span
CONTEXT_KEYS = frozenset({"context", "compacted_context"})


def shown_request(request: dict[str, Any], purpose: CallPurpose | None) -> dict[str, Any]:
    """``request`` with each long context or region text replaced by a pointer line."""
    shown = dict(request)
    if isinstance(request.get("messages"), list):
        shown["messages"] = [_message(m, purpose) for m in request["messages"]]
    items = request.get("input")
    if isinstance(items, list) and len(items) > 1:  # Responses API: the context as items
        shown["input"] = [f"[{len(items) - 1} context items: {_where(purpose)}]", items[-1]]
    return shown


def _message(message: Any, purpose: CallPurpose | None) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if message.get("role") != "user" or not isinstance(content, str):
        return message
    if len(content) <= LONG and not has_left_out(content):
        return message
    try:
        body = json.loads(content)
    except ValueError:
        return {**message, "content": f"[{len(content):,} chars not kept in the trace]"}
    data = body.get(DATA_KEY) if isinstance(body, dict) else None
    if not isinstance(data, dict):
        return message
    body[DATA_KEY] = {key: _value(key, value, purpose) for key, value in data.items()}
    return {**message, "content": json.dumps(body, indent=1, ensure_ascii=False)}


def _value(key: str, value: Any, purpose: CallPurpose | None) -> Any:
    """A short value as it is; a long one as ``[what: where, N chars]``."""
    if isinstance(value, str):  # with what the ledger left out already
        chars = whole_length(value)
    else:
        chars = whole_length(json.dumps(value, ensure_ascii=False), escaped=True)
    if chars <= LONG:
        return value
    if key in CONTEXT_KEYS:
        return f"[{_where(purpose)}, {chars:,} chars]"
    return f"[{key}: {chars:,} chars not kept in the trace]"


def _where(purpose: CallPurpose | None) -> str:
    """Where the context a probe was asked against can be read."""
    if purpose is None:
        return "context"
    if purpose.arm == "control":
        return f"uncompacted session {purpose.transcript} up to point {purpose.point}"
    return f"compacted context: contexts/{purpose.transcript}/point_{purpose.point}.txt"
