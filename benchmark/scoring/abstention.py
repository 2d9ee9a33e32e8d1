"""What counts as an abstention: an answer that declines to answer, and nothing else.

Narrow on purpose, so that a real answer is never taken for one. An answer is an
abstention when it is empty (whitespace only), or when its whole text, once
lowercased, with quotes, brackets and end punctuation stripped and spaces
collapsed, is one of the fixed phrases below ("Not in context.", "I don't
know", "NOT IN CONTEXT", "Unknown."). An answer that says "not in context" and
then guesses ("NOT IN CONTEXT\\nit was x.py") is not an abstention: its guess
is judged like any answer. Scorers give an abstention 0 on every criterion:
declining is not following the instructions, and it states no fact.
"""

from __future__ import annotations

import re

_PHRASES = r"""
not in (?:the )?(?:provided |given )?context
(?:the )?(?:provided |given )?context does not (?:say|mention it|contain it)
(?:the )?(?:provided |given )?context does not contain (?:the|an|this) answer
i (?:do not|don't|dont) know
(?:i )?(?:cannot|can't|cant|am unable to) answer(?: this| that)?(?: question)?
(?:unknown|no answer|not known|n/a|no information|not available|not stated)
"""
_ABSTAIN = re.compile("|".join(f"(?:{p})" for p in _PHRASES.split("\n") if p.strip()))
_STRIP = re.compile(r"[\s\"`*_()\[\].!:;,-]+")


def is_abstention(answer: str) -> bool:
    """Whether ``answer`` is empty or only declines to answer (see the module docstring)."""
    text = " ".join(_STRIP.sub(" ", answer.lower().replace("\u2019", "'")).split()).strip("' ")
    return not text or _ABSTAIN.fullmatch(text) is not None
