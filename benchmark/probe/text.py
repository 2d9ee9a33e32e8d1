"""Text helpers for probe extraction.

Every helper returns verbatim substrings of its input: gold facts and evidence
quotes must be findable in the transcript exactly as written, so nothing here
rewrites, re-joins or normalizes the text it hands back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from benchmark.probe.models import FactKind
from benchmark.text import identifiers, tokens

MAX_FACT = 200
# A fact an answer can state: 200 characters of prose or code are some 50 tokens;
# a line costing far more is not text (garbled bytes, base64, a decoding gone
# wrong) and no answer, verbatim or paraphrased, could be expected to repeat it.
MAX_FACT_TOKENS = 100
MAX_QUOTE = 240

_FENCE = re.compile(r"```[^\n]*\n.*?(?:```|\Z)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)]|#{1,6})\s+")
# The label an agent scaffold puts before its reasoning (SWE-agent's and mini-swe-agent's
# ``THOUGHT:``, ``DISCUSSION``): a protocol word, not part of what the agent said.
_LABEL = re.compile(r"^(?:THOUGHT|DISCUSSION)\b\s*:?\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_EDGE = " \t\r\n,;:.!?"


def clip(text: str, limit: int = MAX_FACT) -> str:
    """The stripped text, or its longest prefix within ``limit`` chars cut at a word boundary
    outside any code span or bracket pair the text closes (``use `foo(`` states nothing).

    When no such cut keeps a quarter of the limit (one long call, ``python -c
    "print(...)"``), the longest word-boundary prefix past half of it (else ``limit``
    chars): a command's head is still worth asking, and a prose clause cut that way
    is refused by ``wording.is_cut``.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    inside = inside_pairs(text[: limit * 4])
    kept = [p for p in range(limit // 4, limit + 1) if not inside[p] and text[p] == " "]
    if kept:
        return text[: max(kept)].rstrip()
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut >= limit // 2 else limit].rstrip()


def inside_pairs(text: str) -> list[bool]:
    """Per offset ``p``: whether ``text[:p]`` ends inside a code span or bracket pair that
    ``text`` closes (an opener never closed pairs with nothing)."""
    inside = [0] * (len(text) + 2)
    ticks = [i for i, ch in enumerate(text) if ch == "`"]
    pairs = list(zip(ticks[::2], ticks[1::2], strict=False))
    in_code = [False] * len(text)
    for start, end in pairs:
        in_code[start : end + 1] = [True] * (end + 1 - start)
    stack: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        if in_code[i]:
            continue
        if ch in "([{":
            stack.append((ch, i))
        elif ch in ")]}":
            opener = "([{"[")]}".index(ch)]
            while stack and stack[-1][0] != opener:
                stack.pop()
            if stack:
                pairs.append((stack.pop()[1], i))
    for start, end in pairs:  # cutting after the opener, up to the closer, breaks the pair
        inside[start + 1] += 1
        inside[end + 1] -= 1
    depth, out = 0, []
    for step in inside:
        depth += step
        out.append(depth > 0)
    return out


def outside_pairs(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in ``text`` that start outside code spans and brackets:
    a "since" inside `` `f(since=3)` `` is code, not a clause of the sentence."""
    inside: list[bool] | None = None
    for match in pattern.finditer(text):
        if "`" not in text and not any(c in text for c in "([{"):
            yield match
            continue
        inside = inside if inside is not None else inside_pairs(text)
        if not inside[match.start()]:
            yield match


def balanced(text: str) -> bool:
    """Whether ``text`` opens no code span or bracket it does not close."""
    if text.count("`") % 2:
        return False
    depth = {"(": 0, "[": 0, "{": 0}
    outside = "".join(text.split("`")[::2])
    for ch in outside:
        if ch in depth:
            depth[ch] += 1
        elif ch in ")]}":
            opener = "([{"[")]}".index(ch)]
            depth[opener] = max(0, depth[opener] - 1)
    return not any(depth.values())


def stateable(text: str) -> bool:
    """Whether ``text`` is short enough, in tokens, to be asked for as a fact."""
    return tokens.count(text) <= MAX_FACT_TOKENS


def trim(text: str) -> str:
    """Strip whitespace and edge punctuation (a substring of the input stays a substring)."""
    text = text.strip(_EDGE)
    if text.count("`") == 1:
        text = text.strip("`").strip(_EDGE)
    if text.startswith("**") or text.endswith("**"):
        text = text.strip("*").strip(_EDGE)
    return text


def unquote(text: str) -> str:
    """Drop one pair of wrapping backticks or quotes (the inside is still verbatim)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "`'\"":
        return text[1:-1].strip()
    return text


def line_at(text: str, pos: int) -> str:
    """The line of ``text`` that contains offset ``pos``, without its line break."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : len(text) if end < 0 else end].rstrip("\r")


def quote_around(text: str, needle: str, width: int = MAX_QUOTE) -> str | None:
    """A verbatim quote of ``text`` holding ``needle``: its line, or a window of it."""
    pos = text.find(needle)
    if pos < 0 or not needle:
        return None
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos + len(needle))
    end = len(text) if end < 0 else end
    if end - start > max(width, len(needle)):
        start = max(start, pos - max(0, width - len(needle)) // 2)
        end = min(end, start + max(width, len(needle)))
    quote = text[start:end].strip()
    return quote if needle in quote else needle


def prose(content: str) -> Iterator[str]:
    """The stretches of ``content`` outside fenced code blocks."""
    last = 0
    for match in _FENCE.finditer(content):
        if match.start() > last:
            yield content[last : match.start()]
        last = match.end()
    if last < len(content):
        yield content[last:]


def prose_lines(content: str) -> Iterator[str]:
    """Non-empty prose lines, bullets and heading marks removed."""
    for chunk in prose(content):
        for line in chunk.splitlines():
            body = line[_BULLET.match(line).end() :] if _BULLET.match(line) else line
            body = _LABEL.sub("", body.strip())
            if body:
                yield body


def sentences(content: str) -> Iterator[str]:
    """Prose sentences of ``content``; a sentence never spans a line break."""
    for line in prose_lines(content):
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


def fact_kind(text: str) -> FactKind:
    """``identifier`` for an exact token (path, version, pin, SHA, URL, issue, code name,
    number), ``detail`` for a phrase."""
    if text in identifiers.tokens(text) or not any(ch.isspace() for ch in text):
        return "identifier"
    return "detail"


def first_line(text: str, limit: int = 100) -> str:
    """First non-empty line of ``text``, clipped; used as a cue in questions."""
    for line in text.splitlines():
        if line.strip():
            return clip(line, limit)
    return clip(text, limit)


def normalize(text: str) -> str:
    """Lower-cased, markup-free, whitespace-collapsed key for matching the same task."""
    text = re.sub(r"[`*_~]", "", text.lower())
    return re.sub(r"\s+", " ", text).strip(_EDGE)
