"""Secrets in a model's reply are replaced before anything keeps or reads the reply.

A model may write a credential into its reply: one it read in a context (a key the
detectors missed there but see in the reply's shorter text), one it made up in a
key's shape, or one a hostile server sends. The reply goes to the reply cache, the
ledger's kept calls, traces, answer and judgment files and the tracking store, so
every reply text (answers, judgments with their rationales, summaries, the probe
writer's probes) is scrubbed once, as it arrives, with the job's redactor
(``redaction.*``: the built-in detectors, user patterns and the endpoints' keys);
with no job (a client built in code), with every built-in detector and the
environment's keys. A reply that is JSON is scrubbed string by string, decoded, so a
key or PEM block written with JSON escapes is found as well, and the JSON stays valid
(a placeholder holds no quote or backslash).

Replies are short and most hold no hint of any detector: a reply is scanned once for
the detectors' hints and the known values before any regex runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from benchmark.redaction import Redactor, build_redactor, environment_secrets, json_arguments, scrub

# The job's redactor, or what builds it on the first reply (an offline job builds none).
_JOB: list[Redactor | Callable[[], Redactor]] = []


def use_redactor(redactor: Redactor | Callable[[], Redactor] | None) -> None:
    """The redactor of the job about to run, or a function building it (None: forget it,
    the default applies)."""
    _JOB[:] = [redactor] if redactor is not None else []


def reply_redactor(key_names: Iterable[str] = ()) -> Redactor:
    """The job's redactor, or every built-in detector with the environment's keys (those
    of ``key_names`` included) when no job set one."""
    if not _JOB:
        return build_redactor(key_names=key_names)
    job = _JOB[0]
    if not isinstance(job, Redactor):
        job = _JOB[0] = job()
    return job


def scrub_reply(text: str, redactor: Redactor) -> str:
    """``text`` with every secret ``redactor`` finds replaced by its placeholder."""
    if not text or not redactor.enabled:
        return text
    if text.lstrip()[:1] in ("{", "["):
        # Most JSON replies hold no escape and no secret: one pass over the raw text shows
        # it (a decoded string is then the raw one), ~8x cheaper than string by string.
        if "\\" not in text and redactor.text(text) == text:
            return text
        return json_arguments(text, redactor.text)
    return redactor.text(text)


class ReplyScrubber:
    """One client's scrubbing of reply values: the job's redactor (taken on the first
    reply), and the endpoint's own key (``key_names``' values) whatever detectors the job
    selected: a server may echo the key it was sent."""

    def __init__(self, key_names: tuple[str, ...]) -> None:
        self._key_names = key_names
        self._secrets = tuple(environment_secrets(key_names))
        self._redactor: Redactor | None = None

    def value(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value`` (a call's reply) with its ``text`` scrubbed (a copy when it changed)."""
        text = value.get("text")
        if not isinstance(text, str) or not text:
            return value
        if self._redactor is None:
            self._redactor = reply_redactor(self._key_names)
        clean = scrub_reply(text, self._redactor)
        if any(s in clean for s in self._secrets):
            clean = scrub(clean, self._key_names)
        return value if clean == text else {**value, "text": clean}
