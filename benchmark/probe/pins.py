"""Recall probes about pinned versions: from edits of dependency files, install commands
and the assistant's own words ("pin marshmallow to 3.21.3"); the latest pin of a package wins."""

from __future__ import annotations

import re
from collections.abc import Iterator

from benchmark.probe.candidate import Candidate, View
from benchmark.probe.models import Fact
from benchmark.probe.text import sentences
from benchmark.text import identifiers

_INSTALL = re.compile(
    r"\b(?:pip3?|uv|poetry|pipenv|conda|npm|yarn|pnpm|cargo|gem)\b[^\n]*?\b(?:install|add|i)\b"
)
_PIN_SPLIT = re.compile(r"^([A-Za-z][\w.\[\]-]*?)(==|>=|<=|~=|@)(.+)$")
_PIN_PROSE = re.compile(
    r"\bpin(?:ned|ning|s)?\s+(?:the\s+)?`?([A-Za-z][\w.-]*)`?\s+(?:to|at)\s+(?:version\s+)?"
    r"`?v?(\d+(?:\.\d+)+(?:[-.]?(?:rc|a|b|dev|post)\d*)?)`?",
    re.I,
)
_PIN_WORD = re.compile(r"\bpin", re.I)
_TOML_PIN = re.compile(r"^\s*\"?([A-Za-z][\w.-]*)\"?\s*[=:]\s*\"[\^~=]*(\d+(?:\.\d+)+)\"", re.M)


def pins(view: View) -> Iterator[Candidate]:
    """Versions pinned by edits of dependency files, install commands or the assistant's words."""
    found: dict[str, tuple[str, str, str, int]] = {}  # package -> (name, op, version, index)

    def add(name: str, op: str, version: str, index: int) -> None:
        if view.in_region(index) and version in view.texts[index]:
            key = name.lower()
            found.pop(key, None)  # the latest pin wins and moves to the end
            found[key] = (name, op, version, index)

    for op in view.file_ops:
        if op.kind in ("write", "edit") and not op.failed and op.added:
            for name, pin_op, version in _pins_in(op.changed(), op.path):
                add(name, pin_op, version, op.action_index)
    for action in view.actions:
        if action.command and _INSTALL.search(action.command):
            for name, pin_op, version in _pins_in(action.command, ""):
                add(name, pin_op, version, action.index)
    for i in view.region_indices():
        msg = view.transcript.messages[i]
        if msg.role != "assistant" or not msg.content:
            continue
        for sentence in sentences(msg.content):
            if not _PIN_WORD.search(sentence):
                continue
            for match in _PIN_PROSE.finditer(sentence):
                add(match.group(1), "==", match.group(2), i)
            for name, pin_op, version in _pins_in(sentence, ""):
                add(name, pin_op, version, i)
    for name, op, version, index in sorted(found.values(), key=lambda item: item[3]):
        exact = op in ("==", "@")
        cited = view.cite(index, version if exact else f"{op}{version}") or view.cite(
            index, version
        )
        if cited is None:
            continue
        text, evidence = cited
        question = (
            f"Which version of `{name}` did we pin?"
            if exact
            else f"What version constraint did we set for `{name}`?"
        )
        yield Candidate(
            type="recall",
            question=question,
            answer=f"`{name}` was pinned to `{text}`.",
            facts=(Fact(kind="identifier", text=text),),
            evidence=(evidence,),
            anchor=index,
        )


def _pins_in(text: str, path: str) -> Iterator[tuple[str, str, str]]:
    for pin in identifiers.PATTERNS["pin"].findall(text):
        match = _PIN_SPLIT.match(pin)
        if match and not match.group(1).endswith("."):
            yield match.group(1), match.group(2), match.group(3)
    if path.endswith((".toml", "package.json", "Pipfile")):
        for match in _TOML_PIN.finditer(text):
            if match.group(1).lower() not in ("version", "python", "requires-python"):
                yield match.group(1), "==", match.group(2)
