"""The built-in credential detectors, and user patterns checked the same way.

Each detector is a few regular expressions plus cheap guards: ``hints``
(lowercase substrings, one of which is on the line of every match, so only
those lines are searched) and each rule's ``accept`` (a last look at the
secret, which keeps ordinary words, shell references and stand-ins like
``<your-key>`` out). The secret is the match's group named ``s`` (or ``s2``, ``s3``: the first
that took part), else the whole match; only the secret is replaced, so
``DB_PASSWORD=``, ``Authorization: Bearer`` and a URL's user and host survive.

Order matters: specific token formats come first, so ``OPENAI_API_KEY=sk-...``
becomes an ``openai_key`` rather than a generic ``secret_assignment``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmark.redaction.token_formats import SERVICE_HINTS, SERVICE_TOKENS, has_generated_run
from benchmark.user_error import UserError

PLACEHOLDER_PREFIX = "[REDACTED:"
PLACEHOLDER = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+#\d+\]")
TYPE_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_SECRET_GROUPS = ("s", "s2", "s3")
# A user pattern's bound on one search (one text): a pattern that backtracks without end
# (``(a+)+$`` on a long run of a's) would otherwise hold the job for hours. The ``regex``
# engine stops a search at its ``timeout``: a base, and more for a longer text (a sane
# pattern scans a megabyte in well under a second).
USER_PATTERN_TIMEOUT_S = 2.0
USER_PATTERN_S_PER_MB = 1.0


Accept = Callable[[str], bool]


@dataclass(frozen=True)
class Rule:
    """One regex of a detector, and what its secret must look like to count."""

    pattern: Any  # re.Pattern[str], or a user pattern's regex.Pattern
    accept: Accept | None = None
    key: str | None = None  # a user pattern's config key: its searches are bounded in time

    def finditer(self, text: str, start: int, end: int) -> Iterator[Any]:
        """The matches in ``text[start:end]``; a user pattern's search ends at
        ``USER_PATTERN_TIMEOUT_S`` with a ``UserError`` naming its key."""
        if self.key is None:
            return self.pattern.finditer(text, start, end)
        return self._bounded(text, start, end)

    def _bounded(self, text: str, start: int, end: int) -> Iterator[Any]:
        limit = USER_PATTERN_TIMEOUT_S + USER_PATTERN_S_PER_MB * (end - start) / 1e6
        try:
            yield from self.pattern.finditer(text, start, end, timeout=limit)
        except TimeoutError:
            raise UserError(
                f"{self.key}: the pattern searched one text of {end - start} characters for "
                f"over {limit:.3g} s (a nested or overlapping repeat such as (a+)+ or (a|aa)+ "
                "backtracks without end); rewrite it without one"
            ) from None

    def secret_span(self, match: Any) -> tuple[int, int]:
        """Where the secret is in ``match.string``."""
        for group in _SECRET_GROUPS:
            if group in self.pattern.groupindex and match.group(group) is not None:
                return match.span(group)
        return match.span()


@dataclass(frozen=True)
class Detector:
    """``rules`` run only on the lines holding one of ``hints`` (all of the text when
    ``lines`` is False, for secrets that span lines)."""

    name: str  # the placeholder's type
    rules: tuple[Rule, ...]
    hints: tuple[str, ...] = ()
    lines: bool = True

    def windows(self, lowered: str) -> list[tuple[int, int]]:
        """Where the rules may match in a text (``lowered``: the text in lower case)."""
        if not self.hints:
            return [(0, len(lowered))]
        if not self.lines:
            return [(0, len(lowered))] if any(h in lowered for h in self.hints) else []
        spans: list[tuple[int, int]] = []
        for hint in self.hints:
            at = lowered.find(hint)
            while at != -1:
                end = lowered.find("\n", at)
                end = len(lowered) if end == -1 else end
                spans.append((lowered.rfind("\n", 0, at) + 1, end))
                at = lowered.find(hint, end)
        spans.sort()
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


_NOT_SECRETS = {"true", "false", "null", "none", "yes", "no", "required", "optional"}


def is_reference(value: str) -> bool:
    """A shell or template reference, or an obvious stand-in, is not a secret."""
    v = value.strip("\"'\\")  # a JSON-escaped quote (\\") is a quote too
    return (
        not v
        or v[0] in "$<%{*"
        or v.startswith(PLACEHOLDER_PREFIX)
        or set(v.lower()) <= set("x*.-_")
    )


def _has_classes(value: str, *tests: Callable[[str], bool]) -> bool:
    return all(any(t(c) for c in value) for t in tests)


def random_looking(value: str) -> bool:
    """Upper case, lower case and digits together: generated, not a word or an identifier."""
    return _has_classes(value, str.isupper, str.islower, str.isdigit)


def tokenish(value: str) -> bool:
    """Long enough and mixed enough to be a credential rather than a word."""
    if len(value) < 8 or is_reference(value):
        return False
    return _has_classes(value, str.isalpha, str.isdigit) or (
        len(value) >= 20 and _has_classes(value, str.isupper, str.islower)
    )


def secretish(value: str) -> bool:
    """A password-like value: not a reference, and not a bare word (``str``, ``example``)."""
    if len(value) < 4 or is_reference(value) or value.lower() in _NOT_SECRETS:
        return False
    return not value.isalpha() or _has_classes(value, str.isupper, str.islower)


def _after(prefix: str) -> Callable[[str], bool]:
    """Accept when the characters after ``prefix`` look generated."""
    return lambda value: random_looking(value[len(prefix) :]) if value.startswith(prefix) else False


def _openai_body(value: str) -> bool:
    """An ``sk-`` key: its body mixed-case and digits (OpenAI's), or a long run of letters
    and digits (the lower-case hex of DeepSeek, OpenRouter's ``sk-or-v1-``, gateways)."""
    return _after("sk-")(value) or has_generated_run(value[3:])


def not_reference(value: str) -> bool:
    return not is_reference(value)


def _r(pattern: str, accept: Accept | None = None, flags: int = 0) -> Rule:
    return Rule(re.compile(pattern, flags), accept)


def _assigned(value: str) -> bool:
    """A value assigned to a secret-named variable: anything but a reference, a flag word,
    a stand-in or code that fetches the secret from elsewhere."""
    return not (
        is_reference(value) or value.lower() in _NOT_SECRETS or is_stand_in(value) or is_code(value)
    )


# Stand-ins people write where a secret goes: your-api-key-here, sk-xxxx. Not ``changeme``:
# it is also a default password that really opens things (docker-compose files).
_STAND_IN = re.compile(
    r"placeholder|your[-_.].*|.*[-_]here"
    r"|(?:[a-z]{2,4}[-_])?[x*]{3,}|\.{3,}|…",
    re.I,
)
# Code that reads a secret from elsewhere: settings.SECRET_KEY, os.environ..., process.env.X.
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+")
_ENV_READ = re.compile(r"(?:os\.(?:environ|getenv)|process\.env|System\.getenv|ENV\[)", re.I)


def is_stand_in(value: str) -> bool:
    """A placeholder value (``<your-key>`` is a reference already)."""
    return _STAND_IN.fullmatch(value.strip("\"'\\")) is not None


def is_code(value: str) -> bool:
    """Code rather than a literal: an environment read, a dotted name without digits, or a
    "quoted value" that holds a quote and a bracket (``split('PASSWORD="')[1]``: the quotes
    matched across a string's end)."""
    if _ENV_READ.match(value) or _DOTTED_NAME.fullmatch(value):
        return True
    return any(q in value for q in "'\"") and any(b in value for b in "()[]")


_TOKEN = r"[A-Za-z0-9][A-Za-z0-9._~+/=-]"
# Where a token-format key may start and end: not inside a longer run of letters and digits.
# Not ``\b``: it counts ``_`` as part of a word, so ``run_ghp_...`` (a file name, an
# identifier) would hide the key it holds; ``_``, ``-`` and ``.`` glued to a key delimit it.
_START = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"
# Env-style names whose last part says secret (DB_PASSWORD, GITHUB_TOKEN, X_KEY; not PWD).
_ENV_NAME = (
    r"(?:[A-Z][A-Z0-9_]*_)?(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?)"
    r"|[A-Z][A-Z0-9_]*_(?:KEY|PASS|PWD)"
)
_ENV_NAME_RE = re.compile(rf"(?:{_ENV_NAME})(?<!PUBLIC_KEY)")
# How config-style names end, any case (api_key, clientSecret, "password"); what precedes
# does not matter, the key must be followed by its value.
_CONFIG_KEY = (
    r"api[_-]?key|apikey|secret|password|passwd|passphrase|token"
    r"|access[_-]?key|private[_-]?key|credentials?"
)
_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_QUOTED = r"(?:\"(?P<s>[^\"\n]+)\"|'(?P<s2>[^'\n]+)')"
_SCHEMES = ("bearer", "basic", "token", "bot", "digest")


def env_name_says_secret(name: str) -> bool:
    """``name`` is an environment variable name that by convention holds a secret."""
    return _ENV_NAME_RE.fullmatch(name) is not None


BUILTIN: dict[str, Detector] = {
    d.name: d
    for d in (
        Detector(
            "private_key",
            # Up to the END line (newlines real or JSON-escaped); a truncated key up to the end
            # of its base64 body.
            (
                _r(
                    rf"-----BEGIN {_PEM_LABEL}(?:[\s\S]{{0,16384}}?-----END {_PEM_LABEL}"
                    r"|(?:[A-Za-z0-9+/=]|\r?\n|\\r|\\n)*)"
                ),
            ),
            hints=("private key",),
            lines=False,
        ),
        Detector(
            "anthropic_key", (_r(rf"{_START}sk-ant-[A-Za-z0-9_-]{{20,}}"),), hints=("sk-ant-",)
        ),
        Detector(
            "openai_key",
            (_r(rf"{_START}sk-(?!ant-)[A-Za-z0-9_-]{{20,}}", _openai_body),),
            hints=("sk-",),
        ),
        Detector(
            "github_token",
            (
                _r(
                    rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_[A-Za-z0-9_]{{22,251}})"
                ),
            ),
            hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        ),
        Detector("slack_token", (_r(rf"{_START}xox[abposr]-[A-Za-z0-9-]{{10,}}"),), hints=("xox",)),
        Detector("google_api_key", (_r(rf"{_START}AIza[0-9A-Za-z_-]{{35}}"),), hints=("aiza",)),
        Detector(
            "stripe_key",
            (_r(rf"{_START}[rs]k_(?:live|test)_[0-9A-Za-z]{{16,}}"),),
            hints=("k_live_", "k_test_"),
        ),
        Detector(
            "huggingface_token",
            (
                _r(
                    rf"{_START}hf_[A-Za-z0-9]{{30,}}",
                    lambda v: _has_classes(v, str.isupper, str.islower),
                ),
            ),
            hints=("hf_",),
        ),
        Detector(
            "aws_access_key_id",
            (_r(rf"{_START}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{_END}"),),
            hints=("akia", "asia", "abia", "acca"),
        ),
        Detector(
            "service_token",
            tuple(Rule(re.compile(rf"{_START}(?:{p}){_END}")) for p, _ in SERVICE_TOKENS),
            hints=SERVICE_HINTS,
        ),
        Detector(
            "jwt",
            (_r(rf"{_START}eyJ[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]*"),),
            hints=("eyj",),
        ),
        Detector(
            "aws_secret_key",
            (
                _r(
                    r"(?i:(?:aws_?)?secret_?access_?key|aws_?secret_?key|aws_?session_?token"
                    r"|sessiontoken)[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40,})"
                ),
            ),
            hints=("secret", "session_token", "sessiontoken"),
        ),
        Detector(
            "http_auth",
            (
                # An explicit scheme: whatever follows it is the credential.
                _r(
                    r"(?i:(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?"
                    r"(?i:bearer|basic|token|bot|digest)\s+(?P<s>[A-Za-z0-9][^\s\"',;\\]{3,})",
                    lambda v: not is_reference(v) and v.lower() not in _SCHEMES,
                ),
                # A bare token or an API-key header: only a generated-looking value.
                _r(
                    r"(?i:(?:proxy-)?authorization|x-api-key|api-key|x-auth-token"
                    r"|x-access-token|private-token|x-goog-api-key)[\"']?\s*[:=]\s*[\"']?"
                    rf"(?P<s>{_TOKEN}{{7,}})",
                    tokenish,
                ),
                _r(rf"\bBearer\s+(?P<s>{_TOKEN}{{15,}})", tokenish),
            ),
            hints=("authorization", "bearer", "api-key", "-token"),
        ),
        Detector(
            "url_password",
            (_r(r"://[^\s:/?#@'\"<>\[\]]*:(?P<s>[^\s/?#@'\"<>]+)@", not_reference),),
            hints=("://",),
        ),
        Detector(
            "cli_secret",
            (
                _r(
                    r"\bcurl\b[^\n]*?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:(?P<s>[^\s'\"]+)",
                    secretish,
                ),
                _r(
                    r"(?:^|(?<=\s))--(?:password|passwd|pass|token|api-key|apikey|api_key"
                    r"|access-token|auth-token|secret|client-secret)(?:=|\s+)"
                    rf"(?:{_QUOTED}|(?P<s3>[^\s'\"]+))",
                    secretish,
                ),
                _r(r"\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?P<s>[^\s'\"]+)", secretish),
            ),
            hints=("--pass", "--token", "--api", "--secret", "--access", "--auth", "--client")
            + ("curl", "mysql"),
        ),
        Detector(
            "secret_assignment",
            (
                # .env and shell: NAME=value (export, docker -e, a command's prefix).
                _r(
                    rf"(?:^|(?<=[\s;&|(\"']))(?:{_ENV_NAME})(?<!PUBLIC_KEY)="
                    rf"(?:{_QUOTED}|(?P<s3>(?:[^\s'\"\\;&|()\[\]]|\\(?![nrt\"\\]))++)(?![(\[]))",
                    _assigned,
                    re.M,
                ),
                # Code and config: a quoted literal after a secret-named key (JSON, YAML,
                # Python, TOML...).
                _r(
                    rf"(?:{_CONFIG_KEY})[\"']?\s*(?::|=|:=|=>)\s*{_QUOTED}",
                    _assigned,
                    re.I,
                ),
                # YAML and INI: an unquoted value alone on its line, with a digit or a symbol
                # (so a type annotation such as `token: Token` is not one).
                _r(
                    rf"^[ \t-]*[\"']?[A-Za-z0-9_.-]*(?:{_CONFIG_KEY})[\"']?[ \t]*[:=][ \t]*"
                    r"(?P<s>(?=[^\s#]*[0-9!@$%^&*+=?~/])[^\s'\"#\[\](){}][^\s#\[\](){}]*)[ \t]*$",
                    _assigned,
                    re.I | re.M,
                ),
            ),
            hints=("key", "token", "secret", "pass", "pwd", "credential"),
        ),
    )
}
ENV_VALUE = "env_value"  # not a regex: the values of secret-named environment variables
BUILTIN_NAMES: tuple[str, ...] = (*BUILTIN, ENV_VALUE)
