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
        r"(?<![\w/.-])(?:\.{1,2}/|/)?(?:[\w.-]+/)*[\w.-]*\w\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|"
        r"json|jsonl|ya?ml|toml|ini|cfg|conf|env|md|rst|txt|lock|sql|sh|bash|html|css|scss|xml|csv|proto|gradle|mod|sum)"
        r"(?![\w/])"
        r"|(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+/?(?=[\s:'\"`,)]|$)"
    ),
    "sha": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "issue": re.compile(r"(?:(?<=\s)|^|(?<=\())(?:[\w.-]+/[\w.-]+)?#\d{1,6}\b|\b(?:PR|issue|pull)\s+#?\d{1,6}\b", re.I),
    "version": re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?(?:[-.]?(?:rc|a|b|dev|post)\d*)?(?![\w.]*\w)"),
    "pin": re.compile(r"\b[A-Za-z][\w.-]*(?:==|>=|<=|~=|@)\d+(?:\.\d+)+(?:[-.]?(?:rc|a|b|dev|post)\d*)?\b"),
    "branch": re.compile(
        r"(?:(?<=branch )|(?<=checkout )|(?<=checkout -b )|(?<=origin/))[\w./-]*[\w-]"
    ),
    "handle": re.compile(r"(?<![\w@.])@[A-Za-z][\w-]{1,38}\b(?![.@]\w)"),
    "error": re.compile(
        r"^(?:\s*)(?:[\w.]*(?:Error|Exception|Warning)|FAILED|ERROR|E\s{2,}|fatal|error(?:\[\w+\])?)\b[^\n]{0,240}",
        re.M,
    ),
}

KINDS: tuple[str, ...] = tuple(PATTERNS)


def harvest(text: str, kinds: Iterable[str] = KINDS) -> dict[str, list[str]]:
    """Identifiers found in ``text`` per kind, in first-seen order, without duplicates."""
    found: dict[str, list[str]] = {}
    for kind in kinds:
        seen: dict[str, None] = {}
        for match in PATTERNS[kind].finditer(text):
            value = match.group(0).strip()
            if value:
                seen.setdefault(value, None)
        if seen:
            found[kind] = list(seen)
    return found


# Kinds that name one exact thing; errors are whole lines, not tokens.
TOKEN_KINDS: tuple[str, ...] = ("url", "path", "sha", "issue", "pin", "version", "branch", "handle")


def tokens(text: str) -> set[str]:
    """Every exact identifier token in ``text`` (error lines excluded)."""
    return {value for values in harvest(text, TOKEN_KINDS).values() for value in values}
