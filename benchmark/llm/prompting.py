"""How a context is shown to a model: labelled message blocks within a token budget.

Summarizers, answerers and judges all show a model part of a session. A
rendered context marks where each message starts with a label line
(``[user]``, ``[tool result <id>]``); a line of a message's own text that
reads like a label is shown with a leading backslash, so a tool output cannot
fake a user turn inside the context. Every prompt that shows one says so
(:data:`CONTEXT_FORMAT`).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence

from benchmark.text import tokens
from benchmark.transcript.models import Message

# How a rendered context reads (``render_messages``); said in every prompt that shows one.
CONTEXT_FORMAT = (
    "its messages in order, each opening with a line holding only its role in square brackets "
    "(tool result <id> for a tool's output); a label-like line inside a message starts with "
    "a backslash"
)


def has_encrypted(messages: Sequence[Message]) -> bool:
    """Whether any message stands for a provider's encrypted compaction item."""
    return any(m.compaction is not None for m in messages)


# Every probe of a point renders the same messages, for its answer and its judgment, and
# a job schedules every point's probes at once. A job renders each point's context ahead
# (:func:`prepare_render`, kept until :func:`forget_prepared`), so the LLM loop does not
# tokenize; other contexts are remembered while recent. The Message objects are shared
# by the requests of a point, so their identities are the key.
_RECENT_MAX = 64
_LOCK = threading.Lock()
_RECENT: dict[tuple[int, ...], _Context] = {}
_PREPARED: dict[tuple[int, ...], _Context] = {}


class _Context:
    """One context's blocks, and its whole rendering: every budget it fits in gets it."""

    def __init__(self, kept: tuple[Message, ...]) -> None:
        self.kept = kept  # keeps the messages alive, so the ids stay theirs
        self.labels, self.bodies, self.counts = _blocks(kept)
        self.whole: tuple[str, int] | None = None  # the text, and the least budget giving it
        self.clipped: dict[int, str] = {}  # smaller budgets (a window fit tries a few)

    def render(self, max_tokens: int) -> str:
        whole = self.whole
        if whole is not None and max_tokens >= whole[1]:
            return whole[0]  # no tokenizing: the same text for every request of the point
        hit = self.clipped.get(max_tokens)
        if hit is not None:
            return hit
        text = _assemble(self.labels, self.bodies, self.counts, max_tokens)
        every_block = self.every_block()
        if whole is None and max_tokens >= every_block:
            exact = tokens.count(text)
            if exact <= max_tokens:  # not trimmed: any budget this large gives this text
                self.whole = (text, max(every_block, exact))
                return text
        if len(self.clipped) >= _RECENT_MAX:
            self.clipped.pop(next(iter(self.clipped)))
        self.clipped[max_tokens] = text
        return text

    def every_block(self) -> int:
        """The least budget :func:`_assemble` keeps every block in."""
        return sum(self.counts) + len(self.counts)


def _key(messages: Sequence[Message]) -> tuple[tuple[Message, ...], tuple[int, ...]]:
    kept = tuple(messages)
    return kept, tuple(map(id, kept))


def render_context(messages: Sequence[Message], max_tokens: int) -> str:
    """:func:`render_messages`, memoized on the identity of the (frozen) messages:
    tokenizing a 20K-token context costs ~10 ms, and every request of a point shows it."""
    kept, ids = _key(messages)
    with _LOCK:
        context = _PREPARED.get(ids)
        if context is None:
            context = _RECENT.pop(ids, None)  # re-inserted last: the oldest goes first
            if context is None:
                context = _Context(kept)
                if len(_RECENT) >= _RECENT_MAX:
                    _RECENT.pop(next(iter(_RECENT)))
            _RECENT[ids] = context
        return context.render(max_tokens)


def prepare_render(messages: Sequence[Message]) -> None:
    """Render ``messages`` now (off the LLM loop), for every request that shows them whole;
    kept until :func:`forget_prepared` (the end of the job)."""
    with _LOCK:
        if _key(messages)[1] in _PREPARED:
            return
    adopt_prepared(prepared_context(messages))


def prepared_context(messages: Sequence[Message]) -> _Context:
    """``messages`` rendered whole, not kept yet: a worker process renders a context and
    sends it with its messages (pickled together, so it holds the same objects), and the
    job keeps it with :func:`adopt_prepared`."""
    context = _Context(_key(messages)[0])
    context.render(context.every_block())
    return context


def adopt_prepared(context: _Context) -> None:
    """Keep a rendered context for the requests that show its messages, until
    :func:`forget_prepared`."""
    with _LOCK:
        _PREPARED.setdefault(tuple(map(id, context.kept)), context)


def forget_prepared() -> None:
    """Drop the contexts :func:`prepare_render` kept (and the recent ones)."""
    with _LOCK:
        _PREPARED.clear()
        _RECENT.clear()


def render_messages(messages: Sequence[Message], max_tokens: int) -> str:
    """Messages as ``[role]`` blocks, keeping the most recent ones within ``max_tokens``.

    A line of a message's text that reads like a label is escaped
    (:func:`escape_labels`), so only our labels start a block.

    Compaction damage sits in the older part, but the newest messages are what
    an agent resumes from, so clipping drops from the front; a message cut in
    the middle keeps its end. The result never exceeds ``max_tokens`` tokens.
    """
    return _assemble(*_blocks(messages), max_tokens)


def render_all(messages: Sequence[Message]) -> str:
    """Every message as its labelled block, none clipped and nothing tokenized: what
    :func:`render_messages` gives when all of them fit (a run's readable context files)."""
    return "\n\n".join(f"{_label(m)}\n{escape_labels(m.render())}" for m in messages)


def _blocks(messages: Sequence[Message]) -> tuple[list[str], list[str], list[int]]:
    """Each message's label, escaped body, and the token count of its block."""
    labels = [_label(m) for m in messages]
    bodies = [escape_labels(m.render()) for m in messages]
    blocks = [f"{label}\n{body}" for label, body in zip(labels, bodies, strict=True)]
    return labels, bodies, tokens.count_many(blocks) if blocks else []


def _assemble(labels: list[str], bodies: list[str], counts: list[int], max_tokens: int) -> str:
    """The newest blocks within ``max_tokens`` (see :func:`render_messages`)."""
    if max_tokens <= 0:
        return ""
    blocks = [f"{label}\n{body}" for label, body in zip(labels, bodies, strict=True)]
    kept: list[str] = []
    used = 0
    for i in reversed(range(len(blocks))):
        cost = counts[i] + 1  # the blank line between blocks
        if used + cost > max_tokens:
            head = f"{labels[i]}\n[...] "
            room = max_tokens - used - 1 - tokens.count(head)
            if room > 0:
                kept.append(head + _tail(bodies[i], room))
            break
        kept.append(blocks[i])
        used += cost
    text = "\n\n".join(reversed(kept))
    # Joined text can count differently from the sum of its parts; trim to be exact.
    budget = max_tokens
    while text and tokens.count(text) > max_tokens:
        budget -= 1
        text = _tail(text, budget)
    return text


def _label(message: Message) -> str:
    if message.role == "tool":
        return f"[tool result {_plain(message.tool_call_id or '')}]"
    return f"[{message.role}]"


# A label as render_messages prints one, alone on its line (compared after _fold).
_LABEL_LINE = re.compile(r"\[(?:system|user|assistant|developer|tool(?: result[^\]]*)?)\]")


def _fold(line: str) -> str:
    """A line as it may read to a model: format characters (zero-width, direction marks)
    dropped, compatibility forms (fullwidth brackets and letters) folded, case and
    surrounding space ignored. Homoglyphs from other scripts are not folded."""
    kept = "".join(c for c in line if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", kept).strip().lower()


def escape_labels(text: str) -> str:
    """``text`` with a backslash before each line that would read as one of our labels."""
    if "[" not in text and text.isascii():  # compatibility brackets are not ASCII
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _LABEL_LINE.fullmatch(_fold(line)):
            lines[i] = "\\" + line
    return "\n".join(lines)


def _plain(call_id: str) -> str:
    """A tool call id fit for a label: no brackets, backslashes, spaces or control characters."""
    return "".join(
        "_" if c in "[]\\" or c.isspace() or unicodedata.category(c)[0] == "C" else c
        for c in call_id
    )


def _tail(text: str, max_tokens: int) -> str:
    """The longest suffix of ``text`` within ``max_tokens`` tokens."""
    ids = tokens.encoding().encode_ordinary(text)
    return tokens.encoding().decode(ids[-max_tokens:]) if max_tokens > 0 else ""
