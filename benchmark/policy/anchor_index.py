"""Replace the region with an exact, bounded index of the identifiers it held.

LLM-free: identifiers (paths, error lines, pins, versions, SHAs, issue and PR
numbers, branches, handles, URLs) are copied verbatim by regex, so the
needles a summary tends to paraphrase away survive compaction exactly. The
index is built from the compacted region only; head and tail are kept as is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from benchmark import activity
from benchmark.activity.files import file_statuses
from benchmark.policy.base import check_int
from benchmark.policy.spans import tool_spans
from benchmark.run.compaction import Segments
from benchmark.text import identifiers, tokens
from benchmark.transcript.models import Message

HEADING = (
    "Exact identifiers from the earlier part of this session, which is no longer shown "
    "(copied verbatim, not paraphrased):"
)
EMPTY = "(no identifiers found)"

# Display order and neutral section titles of the harvested kinds.
SECTIONS: dict[str, str] = {
    "path": "Files",
    "error": "Error lines",
    "pin": "Package pins",
    "version": "Versions",
    "sha": "Commit hashes",
    "issue": "Issues and pull requests",
    "branch": "Branches",
    "handle": "Handles",
    "url": "URLs",
}

_PIN_SPLIT = re.compile(r"==|>=|<=|~=|@")
# Minimum budget: the heading plus a line or two must fit.
MIN_TOKENS = 64


def file_operations(messages: list[Message]) -> dict[str, list[str]]:
    """Paths that actions in ``messages`` created, modified or read, in first-seen order.

    Uses :mod:`benchmark.activity`, the same reading of tool calls, shell
    commands and text command blocks that probe extraction uses.
    """
    texts = {i: m.render() for i, m in enumerate(messages)}
    return file_statuses(
        activity.file_ops(activity.extract(messages, texts, 0, len(messages)), texts)
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def region_text(messages: list[Message]) -> str:
    """Content plus decoded tool-call argument strings (JSON escapes would break the regexes)."""
    parts: list[str] = []
    for message in messages:
        if message.content:
            parts.append(message.content)
        for call in message.tool_calls or []:
            parts.extend(_strings(call.function.args()))
    return "\n".join(parts)


@dataclass(frozen=True)
class Entry:
    kind: str
    line: str  # the rendered "- value" line
    rank: int  # 0 = most useful within its kind
    order: int  # first-seen position within its kind (display order)


def _tier(done: list[str]) -> int:
    """0 for a file created or modified, 1 for a file read, 2 for a file only mentioned."""
    return 0 if "created" in done or "modified" in done else 1 if done else 2


def entries(messages: list[Message], max_per_kind: int) -> list[Entry]:
    """Candidate index lines, at most ``max_per_kind`` per kind, ranked by usefulness.

    Files a tool call created or modified rank first, then files read, then
    files only mentioned; within that (and for every other kind) more
    frequent identifiers rank first, ties by first appearance. Redundant
    values are left out: a version that is the number of a listed pin, and a
    path without an operation that is the tail of a longer listed path.
    """
    found = identifiers.occurrences(region_text(messages))
    ops = file_operations(messages)
    paths = found.setdefault("path", {})
    for path in ops:
        paths.setdefault(path, 1)
    pinned = {_PIN_SPLIT.split(pin)[-1] for pin in found.get("pin", {})}
    tails = {path[i + 1 :] for path in paths for i, c in enumerate(path) if c == "/"}
    out: list[Entry] = []
    for kind in SECTIONS:
        counts = found.get(kind, {})
        values = [
            v
            for v in counts
            if not (kind == "version" and v in pinned)
            and not (kind == "path" and not ops.get(v) and v in tails)
        ]
        keys = [
            (_tier(ops.get(v, [])) if kind == "path" else 0, -counts[v], i)
            for i, v in enumerate(values)
        ]
        ranked = sorted(range(len(values)), key=keys.__getitem__)
        for rank, i in enumerate(ranked[:max_per_kind]):
            done = ops.get(values[i]) if kind == "path" else None
            line = f"- {values[i]} ({', '.join(done)})" if done else f"- {values[i]}"
            out.append(Entry(kind=kind, line=line, rank=rank, order=i))
    return out


def render(chosen: list[Entry]) -> str:
    blocks = [HEADING]
    for kind, title in SECTIONS.items():
        lines = sorted((e for e in chosen if e.kind == kind), key=lambda e: e.order)
        if lines:
            blocks.append("\n".join([f"{title}:", *(e.line for e in lines)]))
    if len(blocks) == 1:
        blocks.append(EMPTY)
    return "\n\n".join(blocks)


def _cost(content: str) -> int:
    return tokens.count(content) + tokens.MESSAGE_OVERHEAD


def select(candidates: list[Entry], max_tokens: int) -> list[Entry]:
    """The entries that fit ``max_tokens`` (the whole index message, framing included).

    Entries are tried in priority order: every kind's rank-0 entry (kinds in
    display order), then every rank-1 entry, and so on; each is added if it
    still fits. So when the budget binds, the deepest-ranked entries of each
    kind are the ones left out, and no kind is crowded out by another.
    """
    order = {kind: i for i, kind in enumerate(SECTIONS)}
    ranked = sorted(candidates, key=lambda e: (e.rank, order[e.kind]))
    line_costs = tokens.count_many([e.line + "\n" for e in ranked])
    title_costs = {kind: tokens.count(f"\n\n{title}:\n") for kind, title in SECTIONS.items()}
    used = _cost(HEADING)
    chosen: list[Entry] = []
    opened: set[str] = set()
    for entry, cost in zip(ranked, line_costs, strict=True):
        extra = cost + (0 if entry.kind in opened else title_costs[entry.kind])
        if used + extra <= max_tokens:
            used += extra
            chosen.append(entry)
            opened.add(entry.kind)
    # The per-line estimate can be off by a token at the joins; trim to the exact count.
    while chosen and _cost(render(chosen)) > max_tokens:
        chosen.pop()
    return chosen


class AnchorIndex:
    """Replace the region by one ``user`` message indexing its exact identifiers.

    After the LLM-free ``_build_anchor_index`` of the seed compaction harness
    (spec seed 003): a bounded index section, grouped by kind, here with each
    file's visible operation (created, modified, read). The index holds at
    most ``max_per_kind`` entries per kind and at most ``max_tokens`` tokens
    (the whole message, framing included); see :func:`entries` and
    :func:`select` for which entries go first. The defaults (4,000 tokens,
    40 per kind) are this benchmark's choice, not a published setting.
    Region messages that belong to a tool call of the head, or results of a
    call in the tail, stay verbatim so no call or result is orphaned.
    """

    def __init__(self, *, max_tokens: int = 4_000, max_per_kind: int = 40) -> None:
        self.max_tokens = check_int("max_tokens", max_tokens, MIN_TOKENS)
        self.max_per_kind = check_int("max_per_kind", max_per_kind, 1)

    def index(self, messages: list[Message]) -> Message:
        """The index message for ``messages`` (the dropped part of a region)."""
        chosen = select(entries(messages, self.max_per_kind), self.max_tokens)
        return Message(role="user", content=render(chosen))

    def compact(self, segments: Segments) -> list[Message]:
        messages = segments.messages
        start = len(segments.head)
        stop = start + len(segments.region)
        keep: set[int] = set()
        for span in tool_spans(messages):
            last = span.stop - 1
            if span.start < start <= last or span.start < stop <= last:
                keep.update(i for i in span if start <= i < stop)
        dropped = [i for i in range(start, stop) if i not in keep]
        if not dropped:
            return messages
        index = self.index([messages[i] for i in dropped])
        return [*messages[: dropped[0]], index, *messages[dropped[-1] + 1 :]]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_tokens={self.max_tokens}, max_per_kind={self.max_per_kind})"
        )
