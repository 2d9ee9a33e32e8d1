"""Gold facts restated in other words, exact values untouched: the ``paraphrase`` variant.

Each fact becomes a sentence of its own framing (not the ``full`` answer's
``- kind: text`` lines), and the words of a phrase fact are swapped for
synonyms from a small fixed table (verbs only: a word after an article is a
noun and stays). What never changes: exact facts (paths,
names, commands), every exact value inside a phrase (paths, versions, numbers,
flags, codes), code spans, quoted text, and detail facts that quote an error or
output (rewording a message changes it). The meaning is kept by construction,
so a judge that reads answers should still give full or near-full credit; one
that matches words will not, and the audit reports that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchmark.audit.answer_text import EXACT_KINDS, VALUE
from benchmark.probe.models import Fact, FactKind

# Meaning-preserving swaps, longest first so "sort out" wins over "sort".
SYNONYMS: dict[str, str] = {
    "sort out": "resolve",
    "find out": "work out",
    "look at": "inspect",
    "clean up": "tidy up",
    "patching around": "working around",
    "fix": "repair",
    "fixing": "repairing",
    "check": "verify",
    "checking": "verifying",
    "write": "author",
    "run": "execute",
    "running": "executing",
    "porting": "migrating",
    "pinning": "locking",
    "ask": "check with",
    "mention": "note",
    "wire": "hook",
    "reproduce": "recreate",
    "deserves": "merits",
    "allows": "permits",
    "removed": "dropped",
    "rejected": "discarded",
    "because": "since",
    "existing": "current",
    "deleting": "removing",
    "ignoring": "disregarding",
    "trying": "attempting",
    "add": "introduce",
    "adding": "introducing",
    "accept": "handle",
    "mixes": "combines",
    "full": "complete",
    "quickest": "fastest",
    "needs": "requires",
    "need": "require",
}
_KEYS = sorted(SYNONYMS, key=len, reverse=True)
_SWAP = re.compile(
    r"(?<![\w./`'\"-])(" + "|".join(re.escape(k) for k in _KEYS) + r")(?![\w./`'\"-])",
    re.IGNORECASE,
)
# Spans never reworded: code, quotes, and exact values.
_PROTECTED = re.compile(r"`[^`]*`|\"[^\"]*\"|'[^']*'")
# A swappable word right after one of these is a noun ("the fix", "a check"): kept.
_DETERMINER = re.compile(r"\b(?:a|an|the|its|our|their|this|that|each|every|one)\s+$", re.I)
# A detail that quotes an error or an output is kept verbatim.
_VERBATIM = re.compile(r"Error|Exception|FAILED|assert |[:`\"'\[\]{}()=<>]")

FRAMES: dict[FactKind, str] = {
    "identifier": "The exact value in question is {}",
    "detail": "What we had there: {}",
    "created": "We added the new file {}",
    "modified": "We edited {}",
    "read": "We only looked at {}, without changing it",
    "pending": "Not done yet: {}",
    "choice": "We went with {}",
    "rationale": "The reason was that {}",
    "alternative": "We ruled out {}",
}


def reword(text: str) -> str:
    """``text`` with the table's words swapped, outside protected spans and exact values."""
    keep = [m.span() for m in _PROTECTED.finditer(text)] + [m.span() for m in VALUE.finditer(text)]

    def swap(match: re.Match[str]) -> str:
        start, end = match.span()
        if any(a < end and start < b for a, b in keep) or _DETERMINER.search(text[:start]):
            return match.group(0)
        word = match.group(0)
        new = SYNONYMS[word.lower()]
        return new[:1].upper() + new[1:] if word[:1].isupper() else new

    return _SWAP.sub(swap, text)


def restate(fact: Fact) -> str:
    """One sentence stating ``fact`` in other words (its exact values verbatim)."""
    text = fact.text
    if fact.kind not in EXACT_KINDS and not (fact.kind == "detail" and _VERBATIM.search(text)):
        text = reword(text)
    sentence = FRAMES[fact.kind].format(text)
    return sentence if sentence.endswith((".", "!", "?")) else f"{sentence}."


def paraphrase(facts: Sequence[Fact]) -> str:
    return "\n".join(restate(f) for f in facts)
