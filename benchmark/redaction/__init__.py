"""Credentials in transcripts become typed placeholders before anything else sees them.

Agent logs are full of real secrets: keys in tool output, ``.env`` files the
agent read, tokens in curl commands. ``load_transcripts`` redacts every
transcript as it is loaded, so probes, policies, models, caches and artifacts
only ever see ``[REDACTED:<type>#<n>]``. ``scrub`` does the same for values
that are not transcripts (config params, tags). Configured by ``redaction.*``.
"""

from benchmark.redaction.detectors import BUILTIN_NAMES, ENV_VALUE, PLACEHOLDER, compile_pattern
from benchmark.redaction.redactor import (
    Redactor,
    build_redactor,
    environment_secrets,
    json_arguments,
    redactor_for,
    scrub,
)

__all__ = [
    "BUILTIN_NAMES",
    "ENV_VALUE",
    "PLACEHOLDER",
    "Redactor",
    "build_redactor",
    "compile_pattern",
    "environment_secrets",
    "json_arguments",
    "redactor_for",
    "scrub",
]
