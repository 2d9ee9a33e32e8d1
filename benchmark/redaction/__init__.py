"""Credentials in transcripts become typed placeholders before anything else sees them.

Agent logs are full of real secrets: keys in tool output, ``.env`` files the
agent read, tokens in curl commands. ``load_transcripts`` redacts every
transcript as it is loaded, so probes, policies, models, caches and artifacts
only ever see ``[REDACTED:<type>#<n>]``. ``scrub`` does the same for values
that are not transcripts (log lines, tags); ``clip`` scrubs a message before
cutting it, and ``redact_settings`` / ``scrub_setting`` also treat config values by
their key's name (``api_key``, a URL's user part). Configured by ``redaction.*``.
"""

from benchmark.redaction.detectors import BUILTIN_NAMES, ENV_VALUE, PLACEHOLDER
from benchmark.redaction.redactor import (
    Redactor,
    build_redactor,
    environment_secrets,
    json_arguments,
    redactor_for,
    scrub,
)
from benchmark.redaction.user_patterns import compile_pattern
from benchmark.redaction.values import (
    REDACTED,
    SECRET_NAME,
    clip,
    redact_settings,
    scrub_name,
    scrub_setting,
    scrub_strings,
    strip_userinfo,
)

__all__ = [
    "BUILTIN_NAMES",
    "ENV_VALUE",
    "PLACEHOLDER",
    "REDACTED",
    "SECRET_NAME",
    "Redactor",
    "build_redactor",
    "clip",
    "compile_pattern",
    "environment_secrets",
    "json_arguments",
    "redact_settings",
    "redactor_for",
    "scrub",
    "scrub_name",
    "scrub_setting",
    "scrub_strings",
    "strip_userinfo",
]
