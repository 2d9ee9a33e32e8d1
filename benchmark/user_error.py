"""``UserError`` on its own, with no import: every module may raise it, the redaction
package included, which ``benchmark.errors`` (where callers import it from) depends on."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user (config, transcript file, option).

    The message must name the file, field or option at fault; ``__main__``
    prints it on one line and exits non-zero.
    """
