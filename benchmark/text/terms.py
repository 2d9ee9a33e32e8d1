"""Terms of text: how the answerer retrieves and the judge matches, the same way.

Both stages need one notion of a "content term" (lowercase, stemmed, stop
words removed), so a paraphrase such as "created" / "create" counts the same
for retrieval and for scoring.
"""

from __future__ import annotations

import re
from functools import lru_cache

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
# From the start of an alphanumeric run only: a match always spans its whole run, and
# trying every position inside a run first costs more than the rest of ``words``.
_CAMEL_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*")
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
    if "\\" in text:
        text = _ESCAPED_SPACE.sub(" ", text)
    # Lowercasing ASCII text first gives the same runs; elsewhere str.lower can turn a
    # character into ASCII letters ("\u212a" -> "k"), so each run is lowered alone.
    if text.isascii():
        out = _ALNUM.findall(text.lower())
    else:
        out = [run.lower() for run in _ALNUM.findall(text)]
    for run in _CAMEL_RUN.findall(text):
        out.extend(part.lower() for part in _HUMP.findall(run))
    return out


def content_terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order, stop-words and 1-char words dropped."""
    return content_of(words(text))


def content_of(split: list[str]) -> list[str]:
    """:func:`content_terms` of words already split by :func:`words`."""
    return list(filter(None, map(_content_term, split)))


@lru_cache(maxsize=1 << 17)
def _content_term(word: str) -> str:
    """The stem of a content word; "" for a stop-word or a 1-char word."""
    return stem(word) if len(word) > 1 and word not in STOP_WORDS else ""


def identifier_terms(text: str) -> list[str]:
    """Whole identifier-like chunks, lowercased (``src/app/db.py``, ``0.27.2``, ``test_cache``).

    A chunk is a run of word characters and ``. / - @ + ~ # %``; it
    qualifies when, stripped of those separators at its edges, it still holds
    one inside, so it names one exact thing that its split words would not.
    """
    found = []
    for chunk in _IDENT.findall(_ESCAPED_SPACE.sub(" ", text.lower())):
        if chunk.isalnum():  # most chunks are plain words: nothing to strip, not kept
            continue
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
