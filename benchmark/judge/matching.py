"""Gold-fact matching for the offline judge (terms come from ``benchmark.text.terms``).

Matching rules are deliberately
strict for exact facts (paths, versions, commands): a near miss such as
``db_utils.py`` for ``db.py`` is wrong, which is what compaction damage
looks like.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property, lru_cache

from benchmark.probe.models import Fact, FactKind
from benchmark.text import identifiers
from benchmark.text.terms import (
    content_of,
    content_terms,
    identifier_terms,
    normalize,
    unescape,
    words,
)
from benchmark.transcript.models import Message

EXACT_KINDS: frozenset[FactKind] = frozenset({"identifier", "created", "modified", "read"})
PHRASE_KINDS: frozenset[FactKind] = frozenset(
    {"detail", "pending", "choice", "rationale", "alternative"}
)


class Haystack:
    """Text prepared once for many fact checks: a whole compacted context is normalised,
    split into terms and scanned for exact values once, not once per fact."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def unescaped(self) -> str:
        return unescape(self.text)

    @cached_property
    def normalized(self) -> str:
        return normalize(self.text)

    @cached_property
    def words(self) -> list[str]:
        return words(self.text)

    @cached_property
    def terms(self) -> frozenset[str]:
        return frozenset(content_of(self.words))

    @cached_property
    def values(self) -> set[str]:
        return exact_values(self.text, self.words)


def _word_char(c: str) -> bool:
    return c != "" and (c.isalnum() or c in "_-")


def exact_match(needle: str, haystack: str | Haystack) -> bool:
    """``needle`` occurs as a whole token in ``haystack``, as written or both unescaped."""
    hay = haystack if isinstance(haystack, Haystack) else Haystack(haystack)
    if _exact(needle, hay.text):
        return True
    # A gold fact is decoded (``C:\\a\\b.py`` is one backslash each); a context or an
    # answer that copied a rendered call still holds it JSON-escaped.
    if hay.unescaped != hay.text and _exact(needle, hay.unescaped):
        return True
    plain_needle = unescape(needle)
    if (plain_needle, hay.unescaped) == (needle, hay.text):
        return False
    return _exact(plain_needle, hay.unescaped)


def _exact(needle: str, haystack: str) -> bool:
    """``needle`` occurs verbatim (case-sensitive) in ``haystack`` as a whole token.

    A path prefix is tolerated (``src/a/db.py`` matches ``/repo/src/a/db.py``)
    but a longer name is not (``src/a/db.py`` does not match
    ``src/a/db.py.bak`` or ``xsrc/a/db.py``), nor is a longer version
    (``0.27.2`` does not match ``0.27.21`` or ``10.27.2``).
    """
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        before = haystack[start - 1] if start else ""
        after = haystack[end] if end < len(haystack) else ""
        after2 = haystack[end + 1] if end + 1 < len(haystack) else ""
        left_ok = (
            not before or not _word_char(needle[0]) or not (_word_char(before) or before == ".")
        )
        right_ok = (
            not after
            or not _word_char(needle[-1])
            or not (_word_char(after) or after == "/" or (after == "." and _word_char(after2)))
        )
        if left_ok and right_ok:
            return True
        start = haystack.find(needle, start + 1)
    return False


def phrase_match(phrase: str, answer: str | Haystack, term_ratio: float = 0.8) -> bool:
    """``phrase`` is in ``answer`` after normalization, or enough of its content terms are
    and every exact value it names is there too.

    The term rule tolerates rewording, not a changed value: "pin marshmallow to
    3.21.4" does not state "pin marshmallow to 3.21.3" however many words they
    share. With no content terms (a phrase of stop-words only), only the
    substring rule applies.
    """
    hay = answer if isinstance(answer, Haystack) else Haystack(answer)
    norm_phrase, needed, values = _phrase(phrase)
    if norm_phrase and norm_phrase in hay.normalized:
        return True
    if not needed:
        return False
    if len(needed & hay.terms) < term_ratio * len(needed):
        return False
    return values <= hay.values


# A gold fact is matched against its context (survival) and its answer (the judge).
@lru_cache(maxsize=4096)
def _phrase(phrase: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """A phrase normalised, its content terms and its exact values."""
    return normalize(phrase), frozenset(content_terms(phrase)), frozenset(exact_values(phrase))


def exact_values(text: str, split: list[str] | None = None) -> set[str]:
    """What a phrase states exactly: identifier chunks (paths, versions, dotted names)
    and words holding a digit (``T08:30:00Z`` gives ``t08``, ``30``, ``00z``), lowercased.
    ``split`` is ``words(text)`` when the caller has it already."""
    # Words are ASCII alphanumeric runs, so one that is not all letters holds a digit.
    split = words(text) if split is None else split
    return set(identifier_terms(text)) | {w for w in split if not w.isalpha()}


def fact_matches(fact: Fact, answer: str | Haystack, term_ratio: float = 0.8) -> bool:
    """Whether ``answer`` states ``fact`` (exact rule for exact kinds, phrase rule otherwise)."""
    if fact.kind in EXACT_KINDS:
        return exact_match(fact.text, answer)
    return phrase_match(fact.text, answer, term_ratio)


def fabricated(
    answer: str, question: str, context: Sequence[Message], facts: Sequence[Fact]
) -> list[str]:
    """Identifier tokens (paths, versions, pins, SHAs, ...) of the answer that occur in neither
    the context, the gold facts nor the question: what the answer invents. The reference
    judge deducts them; the judge audit records them."""
    known = "\n".join([question, *(m.render() for m in context), *(f.text for f in facts)])
    return sorted(t for t in identifiers.tokens(answer) if t not in known)
