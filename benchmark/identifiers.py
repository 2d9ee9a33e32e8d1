"""Regex harvesting of exact identifiers: the needles that paraphrase destroys.

Used by the ``anchor_index`` policy (to keep them), the probe extractor (to
mark gold facts as exact) and the reference judge (to spot fabricated ones).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Order matters only for display; every kind is harvested independently.
PATTERNS: dict[str, re.Pattern[str]] = {
    "url": re.compile(r"\bhttps?://[^\s<>\"'`)\]]+[^\s<>\"'`)\].,;:]"),
    "path": re.compile(
        r"(?<![\w/.-])(?:\.{1,2}/|/)?(?:[\w.-]+/)*[\w.-]*\w\."
        r"(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|json|jsonl|ya?ml|toml|"
        r"ini|cfg|conf|env|md|rst|txt|lock|sql|sh|bash|html|css|scss|xml|csv|proto|gradle|mod|sum)"
        r"(?![\w/])"
        # Extension-less paths (vetted by _plausible_path); a sentence-ending period is not
        # part of the path.
        r"|(?<![\w/.-])(?:\.{1,2}/|~/|/)?(?:[\w.-]+/)+[\w.-]*[\w-]/?(?=\.?(?:[\s:'\"`,)]|$))"
    ),
    "sha": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "issue": re.compile(
        r"(?:(?<=\s)|^|(?<=\())(?:[\w.-]+/[\w.-]+)?#\d{1,6}\b"
        r"|\b(?:PR|issue|pull)\s+#?\d{1,6}\b",
        re.I,
    ),
    "version": re.compile(
        r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?(?:[-.]?(?:rc|a|b|dev|post)\d*)?(?![\w.]*\w)"
    ),
    "pin": re.compile(
        r"\b[A-Za-z][\w.-]*(?:==|>=|<=|~=|@)\d+(?:\.\d+)+(?:[-.]?(?:rc|a|b|dev|post)\d*)?\b"
    ),
    # A branch never starts with '-' (that is an option such as ``checkout -b``).
    "branch": re.compile(
        r"(?:(?<=branch )|(?<=checkout )|(?<=checkout -b )|(?<=origin/))(?!-)[\w./-]*[\w-]"
    ),
    "handle": re.compile(r"(?<![\w@.])@[A-Za-z][\w-]{1,38}\b(?![.@]\w)"),
    # Horizontal whitespace only, so a match never swallows blank lines before it.
    "error": re.compile(
        r"^[ \t]*(?:[\w.]*(?:Error|Exception|Warning)|FAILED|ERROR|E[ \t]{2,}|fatal"
        r"|error(?:\[\w+\])?)\b[^\n]{0,240}",
        re.M,
    ),
}

KINDS: tuple[str, ...] = tuple(PATTERNS)

# Words that follow "branch " in prose ("the branch is stale") but never name one.
_BRANCH_PROSE = frozenset(
    ("a", "an", "and", "as", "at", "by", "for", "from", "in", "is", "it", "of", "on", "or")
    + ("that", "the", "this", "to", "was", "were", "which", "with")
)


def _plausible_path(value: str) -> bool:
    """Reject slash-joined prose ("and/or", "n/a", "I/O", "1/2") that the path regex admits.

    Rooted paths (``/``, ``./``, ``../``, ``~/``) and directories (trailing
    ``/``) pass; otherwise every segment needs a letter, and the path needs
    three or more segments or a ``_``, ``-`` or ``.`` somewhere.
    """
    if value.startswith(("/", "./", "../", "~/")) or value.endswith("/"):
        return any(c.isalpha() for c in value)
    segments = value.split("/")
    if not all(any(c.isalpha() for c in segment) for segment in segments):
        return False
    return len(segments) >= 3 or any(c in value for c in "_-.")


def occurrences(text: str, kinds: Iterable[str] = KINDS) -> dict[str, dict[str, int]]:
    """Per kind, each identifier found in ``text`` with its match count, in first-seen order."""
    found: dict[str, dict[str, int]] = {}
    for kind in kinds:
        counts: dict[str, int] = {}
        for match in PATTERNS[kind].finditer(text):
            value = match.group(0).strip()
            if (
                not value
                or (kind == "branch" and value.lower() in _BRANCH_PROSE)
                or (kind == "path" and not _plausible_path(value))
            ):
                continue
            counts[value] = counts.get(value, 0) + 1
        if counts:
            found[kind] = counts
    return found


def harvest(text: str, kinds: Iterable[str] = KINDS) -> dict[str, list[str]]:
    """Identifiers found in ``text`` per kind, in first-seen order, without duplicates."""
    return {kind: list(counts) for kind, counts in occurrences(text, kinds).items()}


# Kinds that name one exact thing; errors are whole lines, not tokens.
TOKEN_KINDS: tuple[str, ...] = ("url", "path", "sha", "issue", "pin", "version", "branch", "handle")


def tokens(text: str) -> set[str]:
    """Every exact identifier token in ``text`` (error lines excluded)."""
    return {value for values in harvest(text, TOKEN_KINDS).values() for value in values}
