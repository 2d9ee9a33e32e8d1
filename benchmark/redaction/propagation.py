"""Where a secret found once is also replaced: only where it stands alone, and only if it
could not be anything else.

A detector's own match (``DB_PASSWORD=postgres``) is always replaced. Hunting the same value
elsewhere is different: ``postgres`` is also a database, a user, a host and part of
``ash_postgres``. So a found value is hunted for only when it ``propagates`` (long enough, not
a default credential, not a word or a number), and then only where it is a token of its own
(``standalone_pattern``), never inside a longer identifier, host or file name.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

# Below 8 characters a value collides with words, numbers, versions and ports (`hunter2`,
# `5432`, `3.11.4`); 8 is also the usual minimum of generated passwords and key bodies.
MIN_PROPAGATED = 8
# A word or number whose Shannon estimate is below this many bits is too likely to appear for
# other reasons. English words stay below it up to about 20 letters (`postgres` 22 bits,
# `authentication` 43, `internationalization` 59); a passphrase (`correcthorsebatterystaple`
# 84) or a long number is above it.
MAX_WORD_BITS = 60.0
# Default credentials and the passwords people type first, compared after `_stem` (so
# `Postgres123!`, `super-secret` and `My_Password` count too). Leet spellings that are not
# word-shaped are listed as written.
COMMON_VALUES = frozenset(
    {
        "admin",
        "administrator",
        "changeit",
        "changeme",
        "default",
        "demo",
        "django",
        "docker",
        "example",
        "guest",
        "insecure",
        "letmein",
        "localhost",
        "master",
        "minioadmin",
        "mongodb",
        "mypassword",
        "mysecret",
        "mysql",
        "oracle",
        "p@ssw0rd",
        "p@ssword",
        "pass",
        "passw0rd",
        "password",
        "postgres",
        "postgresql",
        "qwerty",
        "qwertyuiop",
        "rabbitmq",
        "redis",
        "root",
        "s3cr3t",
        "sample",
        "secret",
        "secretkey",
        "secretpassword",
        "superpassword",
        "supersecret",
        "superuser",
        "test",
        "testing",
        "topsecret",
        "toor",
        "trustno",
        "user",
        "welcome",
    }
)

# One word in one case pattern (postgres, POSTGRES, Postgres) and/or digits, then at most two
# symbols: how people turn a word into a password (`Welcome1`, `admin2024!`, `12345678`).
_WORD_SHAPED = re.compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)?[0-9]*[^\sA-Za-z0-9]{0,2}")
_SEPARATORS = re.compile(r"[-_.\s]+")
_TRAILING = re.compile(r"[^a-z@]+$")
# A token goes on through letters, digits and `_`, and through `-` or `.` joining more of them
# (`postgres-db`, `db.postgres.internal`); a `-` or `.` that ends a sentence or starts a flag
# does not extend it. After a JSON/C escape (`\n`, `\t`, `\r`) a new token starts.
_BEFORE = r"(?:(?<!\w)|(?<=\\[nrt]))(?<!\w[-.])"
_AFTER = r"(?!\w)(?![-.]\w)"


def _stem(value: str) -> str:
    """Lower case, separators dropped, trailing digits and symbols dropped."""
    joined = _SEPARATORS.sub("", value.lower())
    return _TRAILING.sub("", joined) or joined


def shannon_bits(value: str) -> float:
    """Length times the Shannon entropy of the value's own characters (the usual secret-scanner
    measure of how random a string is)."""
    n = len(value)
    return -sum(c * math.log2(c / n) for c in Counter(value).values())


def word_like(value: str) -> bool:
    """A word or a number, as people write them in passwords, with little entropy."""
    return _WORD_SHAPED.fullmatch(value) is not None and shannon_bits(value) < MAX_WORD_BITS


def propagates(value: str) -> bool:
    """Whether a found secret is replaced wherever else it stands alone (True), or only where
    a detector matched it (short values, default credentials, words and numbers)."""
    if len(value) < MIN_PROPAGATED:
        return False
    if value.lower() in COMMON_VALUES or _stem(value) in COMMON_VALUES:
        return False
    return not word_like(value)


def standalone_pattern(
    values: Iterable[str], skip: str, anywhere: bool = False
) -> tuple[re.Pattern[str], dict[str, str]]:
    """A regex finding ``skip`` (group 1: text to leave alone, e.g. placeholders) or any of
    ``values`` standing alone (with ``anywhere``, also inside a longer token: for text that is
    no transcript, such as a file name), also with JSON's escaped slash (``\\/``); and the map
    from each form it matches back to its value."""
    forms: dict[str, str] = {}
    for value in values:
        forms.setdefault(value, value)
        if "/" in value:
            forms.setdefault(value.replace("/", "\\/"), value)
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    before, after = ("", "") if anywhere else (_BEFORE, _AFTER)
    return re.compile(f"({skip})|{before}(?:{alternatives}){after}"), forms
