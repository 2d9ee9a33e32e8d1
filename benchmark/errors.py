"""User-facing errors: reported as one line, never as a traceback."""

from __future__ import annotations

import re
import sys

from benchmark.user_error import UserError

__all__ = ["JobFailed", "UserError", "one_line", "print_error"]


class JobFailed(Exception):
    """The job ran and was logged, but too many probes failed (``execution.fail_on_error``);
    ``__main__`` prints the one-line reason and exits 1."""


# C0/C1 control characters (ANSI escapes start with ESC) and Unicode line separators.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Invisible format characters: bidirectional overrides and isolates (U+202E shows the rest
# of a line reversed, so an error line could read as another), zero-width spaces and joiners,
# the byte order mark. Shown as \uNNNN, so a value that differs by one is told apart.
_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def one_line(text: str) -> str:
    """``text`` as one printable line: line breaks shown as ``\\n``, control characters
    (an ANSI escape's ESC included) as ``\\xNN``, invisible format characters (a
    right-to-left override, a zero-width space) as ``\\uNNNN``, secrets scrubbed.

    Every message that quotes a value the user or a file gave goes through here before a
    terminal or a log sees it.
    """
    from benchmark.redaction import scrub_setting

    text = _LINE_BREAK.sub(r"\\n", scrub_setting(text))
    text = _INVISIBLE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m[0]):02x}", text.replace("\t", " "))


def print_error(message: object) -> None:
    """``error: <message>`` on stderr, as one line (see :func:`one_line`)."""
    text = one_line(str(message))
    print(text if text.startswith("error: ") else f"error: {text}", file=sys.stderr, flush=True)
