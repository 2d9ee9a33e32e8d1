"""Secrets in text that is not a transcript: messages, config values, command lines.

Two rules. Text is scrubbed before it is cut (``clip``): a key cut in half no
longer matches its detector, so scrubbing the cut text would let most of it
through. And config values are judged by their name as well as their shape
(``redact_settings``, ``scrub_setting``): whatever a user puts in ``api_key``
or ``+judge.endpoint.password=...`` is a secret, and so is a URL's bare user
part (``https://<token>@host``), which no detector could recognise by shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from benchmark.redaction.detectors import PLACEHOLDER
from benchmark.redaction.redactor import scrub

REDACTED = "<redacted>"
# Config keys whose values never leave the process, whatever they hold (``api_key_env`` names
# a variable, so it is not one).
SECRET_NAME = re.compile(
    r"(api_?key|secret|password|passwd|passphrase|token|credentials?|authorization"
    r"|private_?key|access_?key)$",
    re.I,
)
# A URL's user part without a password (``token@``), up to the host; ``user:pass@`` is the
# ``url_password`` detector's (the user name stays).
_USERINFO = re.compile(r"(?<=://)[^/?#\s@:'\"<>\[\]]+@")
USERINFO_PLACEHOLDER = "[REDACTED:url_userinfo#1]@"
# ``key=value`` as Hydra overrides and ``override_dirname`` write it.
_ASSIGNMENT = re.compile(
    r"(?<![\w.+~/@-])(?P<key>[+~]{0,2}[A-Za-z_][\w.@/-]*)="
    r"(?P<value>'[^']*'|\"[^\"]*\"|[^\s,]+)"
)


def clip(text: str, limit: int, *, first_line: bool = False, key_names: Iterable[str] = ()) -> str:
    """``text`` scrubbed, then (its first line, with ``first_line``) cut to ``limit`` characters.

    The one way to shorten a message that may quote a transcript, a config or a server.
    """
    text = scrub(text, key_names)
    if first_line:
        text = text.split("\n", 1)[0].rstrip("\r")
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def scrub_name(name: str, redact: Callable[[str], str] | None = None) -> str:
    """A name taken from a file or folder (a transcript's id from its file's stem) with each
    secret replaced by ``REDACTED-<type>``: the name reaches probe ids, folder and artifact
    names, tables and the store, where a placeholder's ``[``, ``#`` and ``:`` do not belong
    (``#`` starts a URI's fragment). ``redact``: the job's own redactor too (user patterns)."""
    clean = scrub(name)
    if redact is not None:
        clean = redact(clean)
    if clean == name:
        return name
    return PLACEHOLDER.sub(lambda m: "REDACTED-" + m[0][len("[REDACTED:") :].split("#")[0], clean)


def strip_userinfo(text: str) -> str:
    """A URL's bare user part (``https://<token>@host``, the way tokens ride in git URLs)
    replaced by a placeholder, whatever it looks like: no detector could tell it by shape."""
    return _USERINFO.sub(USERINFO_PLACEHOLDER, text) if "://" in text else text


def scrub_setting(text: str, key_names: Iterable[str] = ()) -> str:
    """A config value or command line: secret-named ``key=value`` values, URL user parts, and
    whatever ``scrub`` finds (with the values of the variables ``key_names`` too)."""
    if "=" in text:

        def value(match: re.Match[str]) -> str:
            name = match.group("key").rsplit(".", 1)[-1]
            return f"{match.group('key')}={REDACTED}" if SECRET_NAME.search(name) else match[0]

        text = _ASSIGNMENT.sub(value, text)
    return scrub(strip_userinfo(text), key_names)


def redact_settings(data: Any) -> Any:
    """A config tree with secret-named keys' values replaced by ``<redacted>`` and every
    string (keys included) passed through ``scrub_setting``."""
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            secret = isinstance(key, str) and SECRET_NAME.search(key) is not None
            out[_key(key)] = REDACTED if secret else redact_settings(value)
        return out
    if isinstance(data, list):
        return [redact_settings(v) for v in data]
    return scrub_setting(data) if isinstance(data, str) else data


def scrub_strings(data: Any, only: frozenset[str] | None = None) -> Any:
    """A JSON-like tree with its string values scrubbed (keys are names, kept); with ``only``,
    just the strings under those keys (e.g. ``error``), at any depth."""
    if isinstance(data, dict):
        return {
            k: scrub_strings(v, None if only is None or k in only else only)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [scrub_strings(v, only) for v in data]
    return scrub(data) if isinstance(data, str) and only is None else data


def _key(key: Any) -> Any:
    """A key that held a secret, scrubbed into characters any store accepts as a name."""
    if not isinstance(key, str):
        return key
    clean = scrub_setting(key)
    return key if clean == key else re.sub(r"[^\w.\- /]", "_", clean)
