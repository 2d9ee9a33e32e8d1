"""Text tools for building answers of known content: a mention guard and value mutation.

Both are written for the audit alone, independently of the judges' matching
code. The guard is deliberately broader than any reasonable matcher (case
folded, half of a phrase's words, crude stems), so a text it calls clean of a
fact cannot be read as stating that fact: what an answer states stays known by
construction.
"""

from __future__ import annotations

import re

from benchmark.probe.models import Fact

# Fact kinds whose value is one exact string (a path, a name, a command); the others are phrases.
EXACT_KINDS = frozenset({"identifier", "created", "modified", "read"})

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_QUOTES = re.compile(r"[\"'`]")
_SPACE = re.compile(r"\s+")
_ESCAPE = re.compile(r"\\(.)")
_STOP_TEXT = """
    a an and are as at be by did do for from had has have in into is it its of on or our so
    that the their then this to was we were what when which while who why will with
"""
_STOP = frozenset(_STOP_TEXT.split())
# Share of a phrase's words that, present in a text, counts as touching it (a matcher
# that paraphrases needs more; this is the safe side).
TOUCH_RATIO = 0.5


def _plain(text: str) -> str:
    return _ESCAPE.sub(r"\1", text)


def _stems(text: str) -> set[str]:
    """Lowercase words and camelCase parts, cut to 4 letters (files/file, created/create)."""
    runs = _WORD.findall(_plain(text))
    words = [r.lower() for r in runs]
    for run in runs:
        words.extend(p.lower() for p in _CAMEL.findall(run))
    return {w[:4] for w in words if len(w) > 1 and w not in _STOP}


def _normal(text: str) -> str:
    return _SPACE.sub(" ", _QUOTES.sub("", _plain(text).lower())).strip()


def occurs(needle: str, text: str) -> bool:
    """``needle`` in ``text`` (case folded) with no letter, digit or ``_`` glued to either end."""
    pattern = r"(?<![A-Za-z0-9_])" + re.escape(needle.lower()) + r"(?![A-Za-z0-9_])"
    return re.search(pattern, text.lower()) is not None


def mentions(fact: Fact, text: str) -> bool:
    """Whether ``text`` might be read as stating ``fact`` (broad on purpose, see module doc)."""
    if fact.kind in EXACT_KINDS:
        return occurs(fact.text, text) or occurs(_plain(fact.text), _plain(text))
    phrase = _normal(fact.text)
    if phrase and phrase in _normal(text):
        return True
    needed = _stems(fact.text)
    return bool(needed) and len(needed & _stems(text)) >= TOUCH_RATIO * len(needed)


def touches_any(facts: list[Fact], text: str) -> bool:
    return any(mentions(f, text) for f in facts)


# -- mutation: the same statement with its exact values changed -------------------------------

# The kinds of exact value, in the order they are tried (a path before its version).
_PATTERNS = (
    ("path", r"(?<![\w./-])(?:[\w.-]+/)*[\w-]*[A-Za-z][\w-]*\.[A-Za-z]{1,5}(?![\w/])"),
    ("dir", r"(?<![\w./-])(?:[\w.-]+/)+[\w-]*[A-Za-z][\w-]*(?![\w./])"),
    ("version", r"(?<![\w.])v?\d+(?:\.\d+)+"),
    ("code", r"\b[A-Z]{1,3}\d{3,4}\b"),
    ("number", r"(?<![\w.])\d+(?![\w])"),
    ("flag", r"(?<![\w-])--?[A-Za-z][\w-]*"),
)
VALUE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _PATTERNS))
_LAST_WORD = re.compile(r"[A-Za-z]+(?=[^A-Za-z]*$)")
_SUFFIXES = ("s", "_old", "_new", "_v2")


def has_value(text: str) -> bool:
    return VALUE.search(text) is not None


def mutate(text: str, attempt: int = 0, whole: bool = False) -> str | None:
    """``text`` with every exact value changed (another path, version, number, flag, code).

    ``attempt`` picks another change of the same value (retry when a change collides
    with something). ``whole`` (exact facts): when ``text`` holds no such value, the
    name itself is changed. ``None`` when there was nothing to change.
    """
    step = attempt + 1
    changed = VALUE.sub(lambda m: _change(m, step), text)
    if changed != text:
        return changed
    if whole and _LAST_WORD.search(text):
        return _rename(text, attempt)
    return None


def _change(match: re.Match[str], step: int) -> str:
    value, kind = match.group(0), match.lastgroup
    if kind in ("path", "dir"):
        head, sep, name = value.rpartition("/")
        stem, dot, ext = name.rpartition(".") if kind == "path" else (name, "", "")
        return f"{head}{sep}{_rename(stem, step - 1)}{dot}{ext}"
    if kind == "version":
        parts = value.split(".")
        parts[-1] = str(int(parts[-1]) + step)
        return ".".join(parts)
    if kind in ("number", "code"):
        digits = re.search(r"\d+$", value)
        assert digits is not None
        width = len(digits.group(0))
        return value[: digits.start()] + str(int(digits.group(0)) + step).zfill(width)
    return _flag(value, step)


def _flag(flag: str, step: int) -> str:
    if flag.startswith("--"):
        name = flag[2:]
        if step > 1:
            return f"--{name}-{('only', 'all', 'strict')[(step - 2) % 3]}"
        return f"--{name[3:]}" if name.startswith("no-") and len(name) > 3 else f"--no-{name}"
    letter = flag[1]
    base = "a" if letter.islower() else "A"
    other = chr(ord(base) + (ord(letter) - ord(base) + step) % 26)
    return f"-{other}{flag[2:]}"


def _rename(name: str, attempt: int) -> str:
    """``name`` with its last word changed: a plural toggled, or a suffix added."""
    match = _LAST_WORD.search(name)
    if match is None:
        return f"{name}{_SUFFIXES[1 + attempt % 3]}"
    word = match.group(0)
    if attempt == 0:
        if word.endswith(("s", "S")) and len(word) > 2:
            new = word[:-1]
        else:
            new = word + ("S" if word.isupper() else "s")
    else:
        suffix = _SUFFIXES[1 + (attempt - 1) % 3]
        new = word + (suffix.upper() if word.isupper() else suffix)
    return name[: match.start()] + new + name[match.end() :]


# -- near misses: one character off --------------------------------------------------------


def near_miss(text: str, whole: bool = False) -> str | None:
    """``text`` with one exact value one character off (the last one it holds).

    A digit is stepped (``3.21.4`` -> ``3.21.5``, a 9 steps down so the length
    stays), a file or directory name loses or gains a trailing ``s``
    (``src/utils.py`` -> ``src/util.py``). ``whole`` (exact facts): a name with
    no such value gets the same plural toggle. ``None`` when nothing can change.
    """
    found = [m for m in VALUE.finditer(text) if m.lastgroup != "flag"]
    if found:
        match = found[-1]
        return text[: match.start()] + _one_off(match) + text[match.end() :]
    if whole and _LAST_WORD.search(text):
        return _rename(text, 0)
    return None


def _one_off(match: re.Match[str]) -> str:
    value, kind = match.group(0), match.lastgroup
    if kind in ("path", "dir"):
        head, sep, name = value.rpartition("/")
        stem, dot, ext = name.rpartition(".") if kind == "path" else (name, "", "")
        return f"{head}{sep}{_rename(stem, 0)}{dot}{ext}"
    last = max(i for i, c in enumerate(value) if c.isdigit())
    digit = int(value[last])
    return value[:last] + str(digit + 1 if digit < 9 else digit - 1) + value[last + 1 :]
