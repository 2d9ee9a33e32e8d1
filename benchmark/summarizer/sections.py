"""Section material of the offline summarizer: verbatim items taken from a region.

Each section heading is mapped to one kind of material by keywords, so any
policy's section list (or a user's own) gets filled without knowing the
policy. Every item is a verbatim slice of the region (clipped at a word
boundary, blank lines dropped), except the file list, which adds the
operations seen on each path in parentheses as the anchor index does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from benchmark import activity
from benchmark.activity.files import file_statuses
from benchmark.text import cues, identifiers
from benchmark.transcript.models import Message

# First match wins: "All user messages" is about users before anything else, "Open work"
# about tasks before "work"; headings match case-insensitively on substrings.
KEYWORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("user",), "user"),
    (("intent", "request", "goal"), "intent"),
    (("file",), "files"),
    (("error",), "errors"),
    (("decision", "constraint"), "decisions"),
    (("pending", "task", "todo", "open"), "tasks"),
    (("next",), "next"),
    (("current", "state"), "current"),
    (("concept",), "concepts"),
    (("progress", "problem", "command"), "progress"),
)

MAX_MESSAGE_CHARS = 1200  # a user message or the latest assistant statement
MAX_SENTENCE_CHARS = 400
MAX_COMMAND_CHARS = 200
MAX_PER_KIND = 40
CURRENT_STATEMENTS = 3  # identifiers per kind in the concepts section

_CHECK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[([ xX])\][ \t]+(\S[^\n]*?)[ \t]*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_FENCE = re.compile(r"```[^\n]*\n.*?(?:```|\Z)", re.S)
_NEXT = re.compile(
    r"\b(?:next|then I|then we|I'll|I will|we'll|we will|let me|let's|going to|plan is|"
    r"remaining|still need)\b",
    re.I,
)
_PIN_SPLIT = re.compile(r"==|>=|<=|~=|@")
_CONCEPT_KINDS = ("pin", "version", "sha", "issue", "branch", "url", "handle")


def kind_of(heading: str) -> str | None:
    """The material a heading asks for, or ``None`` when no keyword matches."""
    lowered = heading.lower()
    for words, kind in KEYWORDS:
        if any(word in lowered for word in words):
            return kind
    return None


def clip(text: str, limit: int) -> str:
    """Non-blank lines of ``text`` (right-stripped), clipped to ``limit`` characters at a space.

    Each line of the result is a verbatim slice of a line of ``text``.
    """
    text = text.strip()
    if len(text) > limit:
        cut = text.rfind(" ", 0, limit + 1)
        text = text[: cut if cut > limit // 2 else limit].rstrip()
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def sentences(content: str) -> list[str]:
    """Prose sentences outside code fences; a sentence never spans a line break."""
    out: list[str] = []
    for line in _FENCE.sub("\n", content).splitlines():
        body = re.sub(r"^\s*(?:[-*+>]|\d+[.)]|#{1,6})\s+", "", line).strip()
        out.extend(part.strip() for part in _SENTENCE_END.split(body) if part.strip())
    return out


@dataclass
class Region:
    """The messages being summarized, with their actions parsed once."""

    messages: list[Message]
    texts: dict[int, str] = field(init=False)

    def __post_init__(self) -> None:
        self.texts = {i: m.render() for i, m in enumerate(self.messages)}

    @cached_property
    def actions(self) -> list[activity.Action]:
        return activity.extract(self.messages, self.texts, 0, len(self.messages))

    @cached_property
    def observations(self) -> set[int]:
        """``user`` messages that are an environment's reply to a text command, not a person."""
        return {a.result_index for a in self.actions if a.result_index is not None}

    def user_indices(self) -> list[int]:
        return [
            i
            for i, m in enumerate(self.messages)
            if m.role == "user" and m.content and m.content.strip() and i not in self.observations
        ]

    def assistant_prose(self) -> list[str]:
        return [m.content for m in self.messages if m.role == "assistant" and m.content]

    def outputs(self) -> list[str]:
        """Tool results and environment replies: where error lines come from."""
        return [
            m.content or ""
            for i, m in enumerate(self.messages)
            if m.role == "tool" or i in self.observations
        ]


def user_messages(region: Region) -> list[str]:
    texts = [region.messages[i].content or "" for i in region.user_indices()]
    return [clip(text, MAX_MESSAGE_CHARS) for text in texts]


def intent(region: Region) -> list[str]:
    return user_messages(region)[:1]


def files(region: Region) -> list[str]:
    """Paths created, modified or read by an action, first seen first, with their operations."""
    statuses = file_statuses(activity.file_ops(region.actions, region.texts))
    return [f"{path} ({', '.join(done)})" for path, done in statuses.items()]


def errors(region: Region) -> list[str]:
    found = identifiers.harvest("\n".join(region.outputs()), ["error"])
    return found.get("error", [])


def decisions(region: Region) -> list[str]:
    """Assistant sentences that state a choice together with its reason."""
    return [
        clip(s, MAX_SENTENCE_CHARS)
        for content in region.assistant_prose()
        for s in sentences(content)
        if cues.DECISION["mention"].search(s) and cues.DECISION["rationale_mention"].search(s)
    ]


def _checklist(region: Region) -> dict[str, bool]:
    """Checklist items in first-seen order, ``True`` when their latest box is ticked."""
    state: dict[str, bool] = {}
    for message in region.messages:
        for match in _CHECK.finditer(message.content or ""):
            state[match.group(2)] = match.group(1) != " "
    return state


def tasks(region: Region) -> list[str]:
    return [item for item, done in _checklist(region).items() if not done]


def progress(region: Region) -> list[str]:
    """Ticked checklist items, then the commands run, in order."""
    done = [item for item, ticked in _checklist(region).items() if ticked]
    commands = [
        clip(a.command.strip().splitlines()[0], MAX_COMMAND_CHARS)
        for a in region.actions
        if a.command and a.command.strip()
    ]
    return [*done, *commands]


def current(region: Region) -> list[str]:
    """The latest assistant statements (up to :data:`CURRENT_STATEMENTS`), oldest first."""
    prose = region.assistant_prose()[-CURRENT_STATEMENTS:]
    return [clip(text, MAX_MESSAGE_CHARS) for text in prose]


def next_step(region: Region) -> list[str]:
    for content in reversed(region.assistant_prose()):
        stated = [s for s in sentences(content) if _NEXT.search(s)]
        if stated:
            return [clip(stated[-1], MAX_SENTENCE_CHARS)]
    return []


def concepts(region: Region) -> list[str]:
    """Exact technical identifiers other than paths (pins, versions, hashes, issues, ...)."""
    found = identifiers.harvest("\n".join(region.texts.values()), _CONCEPT_KINDS)
    pinned = {_PIN_SPLIT.split(pin)[-1] for pin in found.get("pin", [])}
    found["version"] = [v for v in found.get("version", []) if v not in pinned]
    return [v for kind in _CONCEPT_KINDS for v in found.get(kind, [])[:MAX_PER_KIND]]


EXTRACTORS: dict[str, Callable[[Region], list[str]]] = {
    "user": user_messages,
    "intent": intent,
    "files": files,
    "errors": errors,
    "decisions": decisions,
    "tasks": tasks,
    "next": next_step,
    "current": current,
    "concepts": concepts,
    "progress": progress,
}
