"""What a session of API tools did: its calls, the values their JSON results held.

A customer-service agent (tau2-bench's airline and retail), an agent calling an
MCP server: its tools touch no file and run no shell (``tool_kind`` is ``None``),
their results are JSON, and what it needs later are values those results returned
(a user id, a payment method id, an order's status or amount) and which calls it
already made. This module reads them for the probes of :mod:`benchmark.probe.tool_facts`:
calls with a cue naming them, results as (key path, value) leaves, and which values
qualify as facts a right answer can state exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from benchmark.activity.actions import Action
from benchmark.activity.next_step import FINISH_TOOLS
from benchmark.activity.plans import PLAN_TOOLS
from benchmark.activity.vocabulary import tool_kind
from benchmark.probe.candidate import View

MAX_VALUE = 80  # characters of a value asked about: a longer one is text, not a value
MAX_WORDS = 6  # words of a value: "667 Highland Drive" is one, a sentence is not
MAX_CUE = 40  # characters of an argument value a question names its call by
MAX_CUE_ARGS = 3
# A value that tells itself apart: an id, an amount, a date, an email (a digit, ``_``, ``#``
# or ``@``). A plain word ("pending", "blue") is asked only as the one value under its key.
_DISTINCT = re.compile(r"\d|[_#@]")
# A dict key that is itself an id (``{"gift_card_4332117": {...}}``) is a slot, not a name.
_ID_KEY = re.compile(r"(?:\D*\d){3}")
# Words every result is full of: as a lone value they tell an answer nothing.
_EMPTY = frozenset({"none", "null", "nan", "n/a", "true", "false", "yes", "no", "unknown", "other"})
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")

Leaf = tuple[tuple[str, ...], Any]


def api_actions(view: View) -> list[Action]:
    """Native tool calls of the view to tools that are not file, shell or plan tools."""
    messages = view.transcript.messages
    return [
        a
        for a in view.actions
        if messages[a.index].tool_calls
        and tool_kind(a.name) is None
        and a.tool.replace("-", "_") not in PLAN_TOOLS
        and a.tool not in FINISH_TOOLS
    ]


def conversational(view: View) -> bool:
    """A session of API tools only: some such call in view, and no file or shell tool.

    Its user turns are a customer's: their requests and the details they give are
    asked about here; a coding session's user turns are its task extractors'.
    """
    return bool(api_actions(view)) and not any(tool_kind(a.name) for a in view.actions)


def result_data(action: Action) -> Any:
    """The call's result as JSON data; a bare one-line value (``ethan_garcia_1261``) as a
    string; ``None`` for prose, an error or no result."""
    text = action.result.strip()
    if action.result_index is None or not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    if "\n" in text or " " in text or len(text) > MAX_VALUE or text.lower().startswith("error"):
        return None
    return text


def leaves(data: Any, path: tuple[str, ...] = ()) -> Iterator[Leaf]:
    """(key path, value) of every scalar in ``data``; a list index is ``[]`` and a key that
    is an id (three digits or more) ``*``, so values in the same place share one path."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from leaves(value, (*path, "*" if _ID_KEY.match(str(key)) else str(key)))
    elif isinstance(data, list):
        for value in data:
            yield from leaves(value, (*path, "[]"))
    else:
        yield path, data


def shown_path(path: tuple[str, ...]) -> str:
    """``payment_methods.id`` for ``("payment_methods", "*", "id")``: the named keys."""
    return ".".join(k for k in path if k not in ("*", "[]"))


def value_text(value: Any) -> str | None:
    """A scalar as the JSON text spells it, when it can be a fact: a number of three
    characters or more, a short single-line string; never a boolean or null."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        text = json.dumps(value)
        return text if len(text.lstrip("-")) >= 3 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) < 3 or len(text) > MAX_VALUE or "\n" in text or text.lower() in _EMPTY:
        return None
    return text if len(text.split()) <= MAX_WORDS else None


def distinct(text: str) -> bool:
    """A value that tells itself apart (an id, an amount, a date, an email)."""
    return bool(_DISTINCT.search(text))


def argument_values(args: dict[str, Any]) -> list[str]:
    """The qualifying values a call was made with, in order, each once (lists flattened)."""
    found: list[str] = []
    for _, value in leaves(args):
        text = value_text(value)
        if text is not None and text not in found:
            found.append(text)
    return found


def cue(view: View, action: Action, siblings: list[Action]) -> str:
    """How a question names a call: its tool and short arguments, and which of the calls
    sharing that cue it is (``the second of the 2 `get_order_details` calls with ...``)."""
    args = _cue_args(action)
    named = ", ".join(f"{k} `{v}`" for k, v in args)
    same = [a for a in siblings if a.name == action.name and _cue_args(a) == _cue_args(action)]
    with_args = f" with {named}" if named else ""
    if len(same) > 1:
        place = same.index(action)
        nth = _ORDINALS[place] if place < len(_ORDINALS) else f"{place + 1}th"
        return f"the {nth} of the {len(same)} `{action.name}` calls{with_args}"
    return f"the `{action.name}` call{with_args}"


def _cue_args(action: Action) -> list[tuple[str, str]]:
    """The short scalar arguments a question names a call by (at most three)."""
    short = [(k, v) for k, v in action.args.items() if not isinstance(v, bool)]
    return [
        (k, str(v))
        for k, v in short
        if isinstance(v, str | int | float) and 0 < len(str(v)) <= MAX_CUE
    ][:MAX_CUE_ARGS]


def in_tail(view: View, text: str) -> bool:
    """Whether the tail (kept by every policy) states ``text``: then nothing can lose it."""
    return any(view.holds(i, text) for i in range(view.stop, view.end))
