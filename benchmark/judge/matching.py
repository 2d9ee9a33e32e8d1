"""Text normalization and gold-fact matching shared by the offline answerer and judge.

Both stages need the same notion of a "content term" (lowercase, stemmed,
stop-words removed), so a paraphrase such as "created" / "create" counts
the same for retrieval and for scoring. Matching rules are deliberately
strict for exact facts (paths, versions, commands): a near miss such as
``db_utils.py`` for ``db.py`` is wrong, which is what compaction damage
looks like.
"""

from __future__ import annotations

import re
from functools import lru_cache

from benchmark.probe.models import Fact, FactKind

EXACT_KINDS: frozenset[FactKind] = frozenset({"identifier", "created", "modified", "read"})
PHRASE_KINDS: frozenset[FactKind] = frozenset(
    {"detail", "pending", "choice", "rationale", "alternative"}
)

# Function words: they carry no retrievable content.
_STOP_TEXT = """
    a about above after again against all also am an and any are as at be been
    before being below between both but by can could did do does doing done down during
    each either else ever few for from further had has have having he her here hers him
    his how i if in into is it its itself just let like me more most much must my no nor
    not now of off on once only or other our ours out over own part same she should so
    some such than that the their theirs them then there these they this those through
    to too under until up upon us very was we were what when where which while who whom
    will with within would yet you your yours
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

_ALNUM = re.compile(r"[A-Za-z0-9]+")
_CAMEL_RUN = re.compile(r"[A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*")
_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_IDENT = re.compile(r"[\w./@+~#%-]+")
_IDENT_EDGE = "._/@+~#%-"
_QUOTES = re.compile(r"[\"'`\u2018\u2019\u201c\u201d]")
_SPACE = re.compile(r"\s+")
_ESCAPE = re.compile(r"\\(.)", re.S)
# "\n" inside JSON-rendered arguments separates words ("\ndef" is "def", not "ndef").
_ESCAPED_SPACE = re.compile(r"\\[ntr]")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_DOUBLE = re.compile(r"([b-df-hj-np-tv-z])\1$")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to join plural, past and gerund forms.

    "files"/"file" -> "fil", "created"/"create" -> "creat", "pinned"/"pin" ->
    "pin", "modified"/"modify" -> "modifi". Words of three letters or fewer and
    words with digits are returned unchanged.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if _DOUBLE.search(word) and not word.endswith(("ll", "ss", "zz")):
                word = word[:-1]
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lowercase alphanumeric runs of ``text`` (``_ / . -`` split words).

    A camelCase run also yields its parts (``AttributeError`` -> ``attributeerror``,
    ``attribute``, ``error``), so "error" finds it. JSON escapes ``\\n``, ``\\t``
    and ``\\r`` (tool call arguments) separate words.
    """
    text = _ESCAPED_SPACE.sub(" ", text)
    out = [run.lower() for run in _ALNUM.findall(text)]
    for run in _CAMEL_RUN.findall(text):
        out.extend(part.lower() for part in _HUMP.findall(run))
    return out


def content_terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order, stop-words and 1-char words dropped."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOP_WORDS]


def identifier_terms(text: str) -> list[str]:
    """Whole identifier-like chunks, lowercased (``src/app/db.py``, ``0.27.2``, ``test_cache``).

    A chunk is a run of word characters and ``. / - @ + ~ # %``; it
    qualifies when, stripped of those separators at its edges, it still holds
    one inside, so it names one exact thing that its split words would not.
    """
    found = []
    for chunk in _IDENT.findall(_ESCAPED_SPACE.sub(" ", text.lower())):
        chunk = chunk.strip(_IDENT_EDGE)
        if len(chunk) > 2 and not chunk.isalnum():
            found.append(chunk)
            # A path also yields its file name, so ``db.py`` meets ``/repo/src/db.py``.
            base = chunk.rpartition("/")[2]
            if base != chunk and len(base) > 2 and not base.isalnum():
                found.append(base)
    return found


def unescape(text: str) -> str:
    """JSON string escapes undone (``\\"`` -> ``"``, ``\\n`` -> newline).

    Tool call arguments render as JSON, so code quoted from an edit carries
    escapes that an answer written out plainly does not, or the reverse.
    """
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def normalize(text: str) -> str:
    """Unescaped, lowercase, quotes and backticks removed, whitespace collapsed."""
    return _SPACE.sub(" ", _QUOTES.sub("", unescape(text).lower())).strip()


def _word_char(c: str) -> bool:
    return c != "" and (c.isalnum() or c in "_-")


def exact_match(needle: str, haystack: str) -> bool:
    """``needle`` occurs as a whole token in ``haystack``, as written or both unescaped."""
    if _exact(needle, haystack):
        return True
    plain_needle, plain_haystack = unescape(needle), unescape(haystack)
    if (plain_needle, plain_haystack) == (needle, haystack):
        return False
    return _exact(plain_needle, plain_haystack)


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


def phrase_match(phrase: str, answer: str, term_ratio: float = 0.8) -> bool:
    """``phrase`` is in ``answer`` after normalization, or enough of its content terms are.

    With no content terms (a phrase of stop-words only), only the substring
    rule applies.
    """
    norm_phrase = normalize(phrase)
    if norm_phrase and norm_phrase in normalize(answer):
        return True
    needed = set(content_terms(phrase))
    if not needed:
        return False
    have = set(content_terms(answer))
    return len(needed & have) >= term_ratio * len(needed)


def fact_matches(fact: Fact, answer: str, term_ratio: float = 0.8) -> bool:
    """Whether ``answer`` states ``fact`` (exact rule for exact kinds, phrase rule otherwise)."""
    if fact.kind in EXACT_KINDS:
        return exact_match(fact.text, answer)
    return phrase_match(fact.text, answer, term_ratio)
