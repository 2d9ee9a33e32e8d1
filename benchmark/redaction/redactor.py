"""Replace credentials in transcripts by typed, numbered placeholders.

A transcript is redacted in two passes. The first runs the detectors over
every message's content and every tool call's arguments; the second replaces
the other occurrences of each secret found (a password seen once in ``.env``
and again bare in a command), plus the values of the environment's
secret-named variables (the user's own keys, should a log contain them). That
pass takes only values that could be nothing but the secret, and only where
they stand alone as a token (``propagation``): ``DB_PASSWORD=postgres`` does
not turn ``ash_postgres`` or ``psql -U postgres`` into placeholders.

Within a transcript the same secret always becomes the same placeholder
(``[REDACTED:openai_key#1]``; ``#2`` is another key of that type), so a probe
about "the key we rotated" stays answerable. Placeholders carry no part of the
secret, and no quote or backslash: tool-call arguments are redacted string
literal by string literal, so valid JSON stays valid JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from benchmark.redaction.config import RedactionConfig
from benchmark.redaction.detectors import (
    BUILTIN,
    BUILTIN_NAMES,
    ENV_VALUE,
    PLACEHOLDER,
    PLACEHOLDER_PREFIX,
    Detector,
    env_name_says_secret,
)
from benchmark.redaction.propagation import propagates, standalone_pattern
from benchmark.redaction.user_patterns import compile_pattern
from benchmark.run.storage import source_digest
from benchmark.transcript.models import FunctionCall, Message, PlantedFact, ToolCall, Transcript


class JobSettings(Protocol):
    """What ``redactor_for`` reads of a job's config (``benchmark.config.schema.BenchmarkConfig``):
    its ``redaction`` settings, and the whole config for the key names its endpoints read."""

    redaction: RedactionConfig

    def model_dump(self, **kwargs: Any) -> dict[str, Any]: ...


MIN_ENV_VALUE = 12  # nor is a shorter environment value ("unused", "sk-test")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class _Session:
    """One transcript's placeholders (secret -> placeholder) and counts per type, and the
    detector hints its text holds at all (checking fewer per message is most of the speed)."""

    def __init__(self, hints: list[str]) -> None:
        self.hints = hints
        self.placeholders: dict[str, str] = {}
        self.numbers: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()

    def replace(self, kind: str, secret: str) -> str:
        placeholder = self.placeholders.get(secret)
        if placeholder is None:
            self.numbers[kind] += 1
            placeholder = f"{PLACEHOLDER_PREFIX}{kind}#{self.numbers[kind]}]"
            self.placeholders[secret] = placeholder
        self.counts[_kind(placeholder)] += 1
        return placeholder


def _kind(placeholder: str) -> str:
    return placeholder[len(PLACEHOLDER_PREFIX) : placeholder.rindex("#")]


class Redactor:
    """Built-in detectors (``builtin``; None: all), user ``patterns`` (type -> regex) and
    ``known`` secrets (e.g. environment values: type -> values), applied in that order.

    ``anywhere``: secrets found or known are replaced inside longer tokens too (``run_<key>``),
    for text that is no transcript (names, messages), where a false match costs nothing."""

    def __init__(
        self,
        builtin: Iterable[str] | None = None,
        patterns: Mapping[str, str] | None = None,
        known: Mapping[str, Iterable[str]] | None = None,
        enabled: bool = True,
        anywhere: bool = False,
    ) -> None:
        names = list(BUILTIN_NAMES if builtin is None else builtin)
        unknown = sorted(set(names) - set(BUILTIN_NAMES))
        if unknown:
            raise ValueError(f"unknown detector {unknown[0]!r} (choose from: {BUILTIN_NAMES})")
        self.enabled = enabled
        self.anywhere = anywhere
        self.detectors: list[Detector] = [BUILTIN[n] for n in BUILTIN if n in names]
        self.detectors += [compile_pattern(k, v) for k, v in (patterns or {}).items()]
        self._hints = sorted({h for d in self.detectors for h in d.hints})
        self._hintless = any(not d.hints for d in self.detectors)
        self.known: dict[str, str] = {}  # value -> type
        for kind, values in (known or {}).items():
            for value in values:
                self.known.setdefault(value, kind)

    # -- public -------------------------------------------------------------------------------

    def transcript(self, transcript: Transcript) -> tuple[Transcript, dict[str, int]]:
        """The transcript with every secret replaced, and how many per type."""
        if not self.enabled:
            return transcript, {}
        session = _Session(self._present(_texts(transcript)))
        messages = [self._message(m, session, self._detect) for m in transcript.messages]
        facts = [self._fact(f, session, self._detect) for f in transcript.ground_truth]
        second = self._known_pass(session)
        if second is not None:
            messages = [self._message(m, session, second) for m in messages]
            facts = [self._fact(f, session, second) for f in facts]
        if not session.counts:
            return transcript, {}
        redacted = transcript.model_copy(update={"messages": messages, "ground_truth": facts})
        return redacted, dict(sorted(session.counts.items()))

    def fingerprint(self) -> str:
        """A digest that changes whenever what this redactor does could (its settings,
        detectors, known values and the redaction code): a key for caching its output.
        Known values enter only through their sha256."""
        detectors = [
            [d.name, list(d.hints), d.lines]
            + [
                [r.pattern.pattern, r.pattern.flags, getattr(r.accept, "__qualname__", None)]
                for r in d.rules
            ]
            for d in self.detectors
        ]
        known = sorted(
            hashlib.sha256(f"{kind}\0{value}".encode()).hexdigest()
            for value, kind in self.known.items()
        )
        payload = [
            self.enabled,
            self.anywhere,
            source_digest(Path(__file__).parent),
            detectors,
            known,
        ]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()

    def text(self, text: str) -> str:
        """One text on its own (a log line, a config value): its own numbering."""
        if not self.enabled or not text:
            return text
        session = _Session(self._present([text]))
        text = self._detect(text, session)
        second = self._known_pass(session)
        return second(text, session) if second is not None else text

    def _present(self, texts: Iterable[str]) -> list[str]:
        corpus = "\n".join(texts).lower().replace("\\/", "/")  # JSON may escape a slash
        return [h for h in self._hints if h in corpus]

    # -- passes ---------------------------------------------------------------------------------

    def _detect(self, text: str, session: _Session) -> str:
        lowered = text.lower()
        present = {h for h in session.hints if h in lowered}
        if not present and not self._hintless:
            return text  # most texts: no detector can match
        for detector in self.detectors:
            if detector.hints and present.isdisjoint(detector.hints):
                continue
            windows = detector.windows(lowered)
            for rule in detector.rules:
                found: list[tuple[int, int]] = []
                for start, end in windows:
                    for match in rule.finditer(text, start, end):
                        a, b = rule.secret_span(match)
                        secret = text[a:b]
                        if a == b or PLACEHOLDER_PREFIX in secret:
                            continue
                        if rule.accept is None or rule.accept(secret):
                            found.append((a, b))
                if found:
                    text = _splice(
                        text, found, lambda s, kind=detector.name: session.replace(kind, s)
                    )
                    lowered = text.lower()
                    windows = detector.windows(lowered)
        return text

    def _known_pass(self, session: _Session) -> Callable[[str, _Session], str] | None:
        """The second pass: every secret known by now that ``propagates`` (and the environment's
        values), wherever it stands alone as a token."""
        known = {s: None for s in session.placeholders if propagates(s)}
        known.update(dict.fromkeys(self.known))
        if not known:
            return None
        pattern, forms = standalone_pattern(known, PLACEHOLDER.pattern, self.anywhere)

        def second(text: str, session: _Session) -> str:
            if not any(f in text for f in forms):
                return text

            def swap(match: re.Match[str]) -> str:
                if match.group(1) is not None:  # a placeholder: leave it alone
                    return match.group(0)
                secret = forms[match.group(0)]
                kind = self.known.get(secret) or _kind(session.placeholders[secret])
                return session.replace(kind, secret)

            return pattern.sub(swap, text)

        return second

    # -- where text lives ---------------------------------------------------------------------

    def _message(self, message: Message, session: _Session, apply: _Apply) -> Message:
        update: dict[str, Any] = {}
        if message.content:
            content = apply(message.content, session)
            if content != message.content:
                update["content"] = content
        if message.tool_calls:
            calls = [_call(c, session, apply) for c in message.tool_calls]
            if any(a is not b for a, b in zip(calls, message.tool_calls, strict=True)):
                update["tool_calls"] = calls
        return message.model_copy(update=update) if update else message

    def _fact(self, fact: PlantedFact, session: _Session, apply: _Apply) -> PlantedFact:
        key, value = apply(fact.key, session), apply(fact.value, session)
        details = _strings(fact.details, lambda s: apply(s, session))
        if (key, value, details) == (fact.key, fact.value, fact.details):
            return fact
        return fact.model_copy(update={"key": key, "value": value, "details": details})


_Apply = Callable[[str, _Session], str]


def _texts(transcript: Transcript) -> Iterable[str]:
    """Every text of a transcript as stored (a hint in a JSON literal is in its raw form too:
    hints hold no character JSON escapes)."""
    for m in transcript.messages:
        yield m.content or ""
        yield from (c.function.arguments for c in m.tool_calls or [])
    for f in transcript.ground_truth:
        yield from (f.key, f.value, json.dumps(f.details))


def _splice(text: str, spans: list[tuple[int, int]], replace: Callable[[str], str]) -> str:
    """``text`` with each (non-overlapping, ordered) span replaced by ``replace(secret)``."""
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts += [text[last:start], replace(text[start:end])]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _call(call: ToolCall, session: _Session, apply: _Apply) -> ToolCall:
    arguments = json_arguments(call.function.arguments, lambda s: apply(s, session))
    if arguments == call.function.arguments:
        return call
    function = FunctionCall(name=call.function.name, arguments=arguments)
    return call.model_copy(update={"function": function})


def json_arguments(raw: str, apply: Callable[[str], str]) -> str:
    """``apply`` to each string literal of JSON text ``raw`` (decoded, so escaped newlines are
    real ones), re-encoding only the literals it changed; text that is not JSON is redacted
    as it is. Everything between the literals is kept byte for byte."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
        return apply(raw)

    def literal(match: re.Match[str]) -> str:
        value = json.loads(match.group(0))
        redacted = apply(value)
        if redacted == value:
            return match.group(0)
        encoded = json.dumps(redacted, ensure_ascii=False)
        try:
            encoded.encode()
        except UnicodeEncodeError:  # a lone surrogate the original escaped
            encoded = json.dumps(redacted)
        return encoded

    return _JSON_STRING.sub(literal, raw)


def _strings(value: Any, apply: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return apply(value)
    if isinstance(value, dict):
        return {k: _strings(v, apply) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, apply) for v in value]
    return value


def environment_secrets(
    names: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """Values of the variables ``names`` (endpoint keys) and of every secret-named variable
    (``*_API_KEY``, ``*_TOKEN``...), long enough to be worth hunting for and not a path or URL."""
    env = os.environ if environ is None else environ
    wanted = set(names) | {n for n in env if env_name_says_secret(n)}
    values = (env.get(n, "") for n in sorted(wanted))
    return sorted(
        {
            v
            for v in values
            if len(v) >= MIN_ENV_VALUE
            and not any(c.isspace() for c in v)
            and v[0] not in "/~."
            and "://" not in v
        }
    )


def endpoint_key_names(data: Any) -> set[str]:
    """Every ``api_key_env`` named anywhere in a (resolved) config."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "api_key_env" and isinstance(value, str) and value:
                found.add(value)
            else:
                found |= endpoint_key_names(value)
    elif isinstance(data, list):
        for value in data:
            found |= endpoint_key_names(value)
    return found


def build_redactor(
    builtin: Iterable[str] | None = None,
    patterns: Mapping[str, str] | None = None,
    enabled: bool = True,
    key_names: Iterable[str] = (),
) -> Redactor:
    """A redactor whose ``env_value`` detector (when selected) knows the environment's keys."""
    names = list(BUILTIN_NAMES if builtin is None else builtin)
    known = {ENV_VALUE: environment_secrets(key_names)} if ENV_VALUE in names else {}
    return Redactor(names, patterns, known, enabled)


def redactor_for(config: JobSettings) -> Redactor:
    """The job's redactor: ``config.redaction``, and the keys its endpoints read."""
    r = config.redaction
    builtin = None if r.builtin == "all" else r.builtin
    names = endpoint_key_names(config.model_dump(by_alias=True))
    return build_redactor(builtin, r.patterns, r.enabled, names)


def scrub(text: str, key_names: Iterable[str] = ()) -> str:
    """``text`` with every built-in detector and the environment's secrets applied (for values
    that are not transcripts: config params, tags, log lines), also the values of ``key_names``
    (an endpoint's ``api_key_env``, whatever it is called). Reads the environment now."""
    return _default_redactor(tuple(environment_secrets(key_names))).text(text)


@lru_cache(maxsize=4)
def _default_redactor(secrets: tuple[str, ...]) -> Redactor:
    return Redactor(None, None, {ENV_VALUE: secrets}, anywhere=True)
