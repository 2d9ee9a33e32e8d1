"""Log records scrubbed on their way to any handler (console, the job's ``.log`` file).

Messages are built from config values, file names, importer errors and server replies; each
place scrubs what it knows to be risky, and this filter is the net under all of them,
tracebacks included.
"""

from __future__ import annotations

import logging

from benchmark.redaction.redactor import scrub
from benchmark.redaction.values import strip_userinfo


class ScrubFilter(logging.Filter):
    """Replaces a record's message (and formatted traceback) by its scrubbed text."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(strip_userinfo(message))  # a database URI's password included
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


def scrub_handlers(logger: logging.Logger | None = None) -> None:
    """Put a ``ScrubFilter`` on every handler of ``logger`` (default: the root logger) that
    has none; handlers configured later (Hydra's per-job logging) need another call."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, ScrubFilter) for f in handler.filters):
            handler.addFilter(ScrubFilter())
