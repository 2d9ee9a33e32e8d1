"""Task lists written on one line: "Remaining work: a; b.", "Next: x, y and z".

Agents often state what is left in a sentence rather than a checklist. A
sentence that opens with a task label and a colon is read as a list: items
split at ``;`` when there is one (an item may hold commas then), else at
``,`` and a final "and", but only when every item is short (a comma inside
a long item is more likely part of it). A bare "Next:" names one step, not a
list, so it needs two items or more; an explicit label ("TODO:", "Still to
do:") may carry one. Items come back verbatim (substrings of the line), so
they can be cited as evidence.
"""

from __future__ import annotations

import re

from benchmark.probe.text import trim

# Labels that say "what is left"; "next" alone is weaker (see the module docstring).
_LABEL = re.compile(
    r"^(?:[-*+]\s+)?(?:\*\*|__)?"
    r"(?P<label>todo|to-do|to do|still to do|left to do|remaining(?: tasks| work| items| steps)?|"
    r"next steps?|next|pending(?: tasks| items| work)?|open (?:tasks|items)|action items)"
    r"(?:\*\*|__)?\s*:(?:\*\*|__)?\s+(?P<body>\S.*)$",
    re.I,
)
_SENTENCE_START = re.compile(r"^|(?<=[.!?])\s+(?=[A-Z*_])")
_AND = re.compile(r"^\s*and\s+")
MAX_ITEM_WORDS = 6  # comma-separated items longer than this are not split at commas
MAX_ITEMS = 12


def inline_tasks(line: str) -> list[str]:
    """The items of a one-line task list in ``line`` (any sentence of it), else ``[]``."""
    for start in (m.start() for m in _SENTENCE_START.finditer(line)):
        match = _LABEL.match(line[start:].strip())
        if match is None:
            continue
        items = _items(_sentence(match.group("body")))
        weak = match.group("label").lower() == "next"
        if len(items) >= 2 or (items and not weak):
            return items[:MAX_ITEMS]
    return []


def _sentence(body: str) -> str:
    """The body up to its sentence's end (a later sentence is not part of the list)."""
    end = re.search(r"[.!?]\s+(?=[A-Z])", body)
    return body[: end.start()] if end else body


def _items(body: str) -> list[str]:
    if ";" in body:
        parts = body.split(";")
        parts[-1] = _AND.sub("", parts[-1], count=1)
    elif "," in body:
        parts = body.split(",")
        if _AND.match(parts[-1]):  # "x, y, and z"
            parts[-1] = _AND.sub("", parts[-1], count=1)
        elif " and " in parts[-1]:  # "x, y and z"
            parts[-1:] = parts[-1].rsplit(" and ", 1)
        if any(len(p.split()) > MAX_ITEM_WORDS for p in parts):
            parts = [body]
    else:
        parts = [body]
    items = [trim(p) for p in parts]
    return [item for item in items if len(item) >= 3 and any(ch.isalpha() for ch in item)]
