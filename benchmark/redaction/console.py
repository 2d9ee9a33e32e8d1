"""What Hydra prints before a job starts, scrubbed: ``--cfg job|hydra|all``, ``--info``,
``--help``, its own error lines (an unknown argument echoed back).

Hydra prints the composed config itself, values and all: an API key given as
``+judge.endpoint.api_key=...``, a URL's ``user:pass@``, an environment key resolved by
``--resolve ${oc.env:...}``. No hook of Hydra's sees that text, so ``scrubbed_output``
puts a filter in front of ``sys.stdout`` and ``sys.stderr`` from the start of ``main``
until a job starts (``release``), line by line: a YAML line whose key says secret
(``api_key: ...``, a block scalar's lines after it) shows ``<redacted>``, and every line
goes through ``scrub_setting`` (``key=value`` overrides, URL user parts, every detector,
the environment's keys and those the command line names). The job's own output is not
filtered here (its progress bar redraws a line in place): it scrubs what it prints.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from benchmark.redaction.values import REDACTED, SECRET_NAME, scrub_setting

# ``key: value`` in YAML (a list item's too), the key perhaps quoted.
_YAML_ITEM = re.compile(
    r"^(?P<lead>\s*(?:-\s+)?)(?P<q>[\"']?)(?P<key>[^\s:'\"]+)(?P=q):(?P<rest>.*)$"
)
_EMPTY = {"", "null", "~", "''", '""', "{}", "[]"}
# Environment variables the command line names: their values are keys wherever they show.
_NAMED_VARIABLE = re.compile(r"(?:api_key_env=|oc\.env:)\s*([A-Za-z_][A-Za-z0-9_]*)")
_PACKAGE_FLAGS = ("--package", "-p")


class _ScrubbedLines(io.TextIOBase):
    """A text stream that writes each complete line to ``target`` scrubbed.

    A logging handler made while it stood in for ``sys.<name>`` (Hydra's, for ``--info`` or
    the job's log) keeps it after ``release``: from then on it passes text through at once,
    scrubbed, to whatever ``sys.<name>`` is now."""

    def __init__(self, name: str, key_names: tuple[str, ...], leaf: bool) -> None:
        super().__init__()
        self.name = name
        self.target: TextIO = getattr(sys, name)
        self.key_names = key_names
        self.leaf = leaf  # the output is one secret-named value (``--cfg job -p x.api_key``)
        self.released = False
        self._pending = ""
        self._block: int | None = None  # indent of a secret-named block scalar's key

    def _current(self) -> TextIO:
        if not self.released:
            return self.target
        stream = getattr(sys, self.name)
        return self.target if stream is self else stream

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._current().isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._current(), "encoding", "utf-8")

    def write(self, text: str) -> int:
        if self.released:
            self._current().write(scrub_setting(text, self.key_names))
            return len(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self.target.write(self._line(line) + "\n")
        return len(text)

    def flush(self) -> None:
        self._current().flush()

    def finish(self) -> None:
        """Write what is left (a last line without its newline); pass text through after."""
        if self._pending:
            self.target.write(self._line(self._pending))
            self._pending = ""
        self.target.flush()
        self.released = True

    def _line(self, line: str) -> str:
        if self.leaf and line.strip() and not line.startswith("# @package"):
            return REDACTED
        indent = len(line) - len(line.lstrip())
        if self._block is not None:
            if not line.strip() or indent > self._block:
                return line[:indent] + REDACTED if line.strip() else line
            self._block = None
        item = _YAML_ITEM.match(line)
        if item is not None and SECRET_NAME.search(item["key"]):
            value = item["rest"].strip()
            if value[:1] in ("|", ">"):
                self._block = indent
            if value not in _EMPTY:
                return f"{item['lead']}{item['q']}{item['key']}{item['q']}: {REDACTED}"
        return scrub_setting(line, self.key_names)


def _leaf(argv: list[str]) -> bool:
    """``--package``/``-p`` names a secret-named key: Hydra prints its bare value."""
    for i, arg in enumerate(argv):
        for flag in _PACKAGE_FLAGS:
            value = None
            if arg == flag and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(flag + "=") or (flag == "-p" and arg.startswith("-p")):
                value = arg[len(flag) :].lstrip("=")
            if value and SECRET_NAME.search(value.rsplit(".", 1)[-1]):
                return True
    return False


_active: list[tuple[str, TextIO, _ScrubbedLines]] = []


@contextmanager
def scrubbed_output(argv: list[str]) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` scrubbed line by line until ``release`` (or the
    end of the block)."""
    names = tuple(sorted({m[1] for a in argv for m in _NAMED_VARIABLE.finditer(a)}))
    leaf = _leaf(argv)
    for name in ("stdout", "stderr"):
        wrapper = _ScrubbedLines(name, names, leaf and name == "stdout")
        _active.append((name, wrapper.target, wrapper))
        setattr(sys, name, wrapper)
    try:
        yield
    finally:
        release()


def release() -> None:
    """Put the original streams back (a job starts: it scrubs what it prints itself)."""
    while _active:
        name, original, wrapper = _active.pop()
        wrapper.finish()
        if getattr(sys, name) is wrapper:
            setattr(sys, name, original)
