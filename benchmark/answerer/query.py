"""From a probe question to weighted search terms.

Questions and the context phrase the same thing differently ("what did we
change" / "Edited x.py", "completed" / "- [x]", "why" / "because"), and carry
scaffolding that no answer contains ("exact", "at this point", "not done").
"""

from __future__ import annotations

import re
from functools import lru_cache

from benchmark.text.terms import content_terms, identifier_terms, stem

# Scaffolding that says how or when to answer, not what about.
_QUERY_STOP_TEXT = """
exact exactly describe list tell mention specific each
point still yet already far currently moment part session
"""
QUERY_STOP_WORDS: frozenset[str] = frozenset(stem(w) for w in _QUERY_STOP_TEXT.split())

# "not done yet", "without changing them": the negated word is what the answer lacks.
_NEGATED = re.compile(r"\b(?:not|never|without|no)\s+\w+", re.I)

# A question term also searches for the other members of its group, at SYNONYM_WEIGHT.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("change", "edit", "modify", "update", "replace"),
    ("create", "new", "write", "add"),
    ("done", "complete", "finish", "close"),
    ("open", "pending", "todo", "remaining", "outstanding", "unfinished", "left"),
    ("decide", "decision", "choose", "chose", "settle", "pick"),
    ("why", "because", "reason", "rationale", "since"),
    ("fail", "error", "broke", "break"),
    ("alternative", "consider", "instead", "rejected", "option"),
)
SYNONYM_WEIGHT = 0.5
_SYNONYMS: dict[str, tuple[str, ...]] = {
    stem(w): tuple(stem(o) for o in group if o != w) for group in SYNONYMS for w in group
}

# A question naming the kind of thing it wants ("which files", "which version")
# prefers passages holding an identifier of that kind (``benchmark.text.identifiers``).
ANSWER_CUES: dict[str, str] = {"file": "path", "path": "path", "version": "version"}
_ANSWER_CUES: dict[str, str] = {stem(cue): kind for cue, kind in ANSWER_CUES.items()}


def terms(text: str) -> list[str]:
    """Index terms of ``text``: stemmed content words, then whole identifier chunks."""
    return list(_terms(text))


# The contexts of one job share most of their lines (a session's points, sessions from
# the same templates): each line is analysed once.
@lru_cache(maxsize=1 << 12)
def _terms(text: str) -> tuple[str, ...]:
    return (*content_terms(text), *identifier_terms(text))


def query_terms(question: str) -> dict[str, float]:
    """Search terms of ``question`` with weights: 1 for its own, ``SYNONYM_WEIGHT`` for synonyms."""
    query = {t: 1.0 for t in terms(_NEGATED.sub(" ", question)) if t not in QUERY_STOP_WORDS}
    for term in list(query):
        for other in _SYNONYMS.get(term, ()):
            query.setdefault(other, SYNONYM_WEIGHT)
    return query


def answer_kinds(query: dict[str, float]) -> list[str]:
    """Identifier kinds the question itself asks for ("which files" -> ``path``)."""
    return sorted({kind for cue, kind in _ANSWER_CUES.items() if query.get(cue) == 1.0})
