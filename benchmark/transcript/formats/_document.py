"""Reading a transcript file: bytes -> one JSON document or JSON Lines records.

Everything that can be wrong with the bytes themselves (missing, empty,
binary, not UTF-8, a runaway line, invalid JSON) is found here and reported
as one ``TranscriptError`` naming the file and, where there is one, the line.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.errors import UserError
from benchmark.redaction import scrub

MAX_LINE_BYTES = 32 * 1024 * 1024
# A reason is our own words plus values quoted from the file, each already cut (``shown``);
# this bound only stops a reason that quotes something unbounded (an exception's text).
MAX_REASON_CHARS = 600
MAX_QUOTED_CHARS = 40  # one value quoted from the file, in a reason or a warning
_CHUNK = 1 << 20


def cut(text: str, limit: int = MAX_REASON_CHARS, redact: Callable[[str], str] = scrub) -> str:
    """``text`` on one line, redacted, then cut to ``limit``: never a secret's first half."""
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Around each value a message quotes from the file (``shown``, ``quoted``): a reason written
# where a file was skipped says the kind of problem only (``without_quotes``), since the file
# may be anything a scan met (a link to a system file, someone's keys); private-use
# characters, dropped from every text shown (``unmarked``).
OPEN, CLOSE = "\ue000", "\ue001"
_ELIDED = "…"


def quoted(text: str) -> str:
    """``text`` (already cut and redacted) marked as quoted from the file."""
    return f"{OPEN}{text}{CLOSE}"


def shown(value: Any, limit: int = MAX_QUOTED_CHARS) -> str:
    """``value`` from the file quoted in a message (``repr``), redacted before it is cut."""
    if isinstance(value, str):
        value = scrub(value)
    return quoted(cut(repr(value), limit, redact=scrub))


def unmarked(text: str) -> str:
    """``text`` with the quote marks dropped, the quoted values kept."""
    return text.replace(OPEN, "").replace(CLOSE, "")


def without_quotes(text: str) -> str:
    """``text`` with each quoted value (nested ones, or one cut before its end, included)
    replaced by an ellipsis: what is wrong, never what the file holds."""
    out: list[str] = []
    depth = 0
    for char in text:
        if char == OPEN:
            if depth == 0:
                out.append(_ELIDED)
            depth += 1
        elif char == CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    return "".join(out)


class TranscriptError(UserError):
    """A transcript file that cannot be imported: ``<path>: line N: <reason>``, one line.

    The reason is redacted (``scrub``) before it is cut; ``located`` redacts it again with
    the job's own redactor (its user patterns) for the manifest and the log."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self._raw = " ".join(reason.split())  # one line, whatever the reason quotes (marked)
        self.reason = cut(unmarked(self._raw))
        super().__init__(f"{self.path}: {self.located()}")

    def located(self, redact: Callable[[str], str] | None = None, quotes: bool = True) -> str:
        """``line N: <reason>`` (the line when there is one), redacted by ``redact`` too;
        without ``quotes``, no value quoted from the file (a skipped file's reason)."""
        where = f"line {self.line}: " if self.line is not None else ""
        if redact is None and quotes:
            return where + self.reason
        raw = unmarked(self._raw) if quotes else without_quotes(self._raw)
        return where + cut(raw, redact=lambda text: (redact or str)(scrub(text)))


class NotATranscript(TranscriptError):
    """JSON that is no session of any format (an agent's metadata, settings, todos, a
    sub-agent's ``agent-*.meta.json``): refused when named, skipped with a note when a
    folder scan or a glob meets it. A broken session is a plain ``TranscriptError``."""


class SubagentLog(TranscriptError):
    """A sub-agent's own log (Claude Code ``subagents/agent-*.jsonl``, all ``isSidechain``):
    not a session of its own. Refused when named, skipped with a note when a folder scan
    or a glob meets it."""


@dataclass
class Document:
    """A parsed file: ``value`` when it is one JSON document, else ``records`` of JSON Lines.

    ``records`` holds ``(line number, value)`` pairs, blank lines skipped.
    """

    path: Path
    sha256: str
    size: int
    value: Any = None
    records: list[tuple[int, Any]] | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def is_lines(self) -> bool:
        return self.records is not None

    def fail(self, reason: str, line: int | None = None) -> TranscriptError:
        return TranscriptError(self.path, reason, line)

    def warn(self, reason: str, line: int | None = None) -> None:
        reason = unmarked(reason)
        self.warnings.append(f"line {line}: {reason}" if line is not None else reason)

    def note(self, text: str) -> None:
        """What the file says about the session beyond its messages (an agent's exit status):
        kept with the import, not a problem with the file."""
        self.notes.append(unmarked(text))


def not_regular(path: Path) -> str | None:
    """Why ``path`` is no regular file to read (a FIFO, a folder, a symlink loop...), else
    ``None``; found by ``stat`` alone, so a FIFO is never opened (opening one blocks)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop, not a file"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "a broken symbolic link" if os.path.islink(path) else "file not found"
        return f"cannot read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    kinds = {
        stat.S_ISFIFO: "a named pipe (FIFO)",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
    }
    kind = next((name for test, name in kinds.items() if test(mode)), "a special file")
    return f"{kind}, not a regular file; only regular files are read"


def _read(path: Path, max_line_bytes: int) -> bytes:
    """The file's bytes, read in chunks so a runaway line stops the read at the limit."""
    problem = not_regular(path)
    if problem is not None:
        raise TranscriptError(path, problem)
    try:
        # O_NONBLOCK: should a FIFO replace the file after the check, opening it cannot block
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise TranscriptError(path, f"cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TranscriptError(path, "changed into something not a regular file; not read")
        chunks, line, run = [], 1, 0  # run: bytes of the current line so far
        try:
            while chunk := file.read(_CHUNK):
                chunks.append(chunk)
                last = chunk.rfind(b"\n")
                run = run + len(chunk) if last < 0 else len(chunk) - last - 1
                line += chunk.count(b"\n")
                if run > max_line_bytes:  # stop reading: the rest cannot matter
                    raise TranscriptError(
                        path,
                        f"a line longer than the {max_line_bytes / 2**20:.3g} MB limit "
                        "(transcript.max_line_mb)",
                        line,
                    )
        except OSError as exc:
            raise TranscriptError(path, f"cannot read ({exc.strerror or exc})") from None
    return b"".join(chunks)


def read_document(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Document:
    data = _read(path, max_line_bytes)
    if not data.strip():
        raise TranscriptError(path, "empty file")
    if data.startswith(b"\x1f\x8b"):
        raise TranscriptError(path, "binary data (gzip-compressed); decompress it first")
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise TranscriptError(path, "not UTF-8 text (UTF-32, by its byte order mark)")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TranscriptError(path, "not UTF-8 text (UTF-16, by its byte order mark)")
    if b"\x00" in data:
        raise TranscriptError(
            path, "binary data (NUL bytes), not a JSON transcript", _line_at(data, data.index(0))
        )
    longest, line = _longest_line(data)
    if longest > max_line_bytes:
        raise TranscriptError(
            path,
            f"a {longest / 2**20:.1f} MB line, over the {max_line_bytes / 2**20:.3g} MB limit "
            "(transcript.max_line_mb)",
            line,
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            path, f"not UTF-8 text (invalid byte at offset {exc.start})", _line_at(data, exc.start)
        ) from None
    doc = Document(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    start = text.lstrip()[:1]
    if start not in ("{", "["):
        raise doc.fail(_not_a_transcript(text))
    try:
        doc.value = json.loads(text)
        return doc
    except json.JSONDecodeError as exc:
        if not (start == "{" and exc.msg == "Extra data"):
            raise doc.fail(f"invalid JSON at column {exc.colno}: {exc.msg}", exc.lineno) from None
    except ValueError as exc:  # e.g. a number over Python's 4300-digit limit
        raise doc.fail(f"invalid JSON: {_first_clause(exc)}") from None
    except RecursionError:
        raise doc.fail("JSON nested too deeply") from None
    doc.records = _json_lines(doc, text)
    return doc


def _json_lines(doc: Document, text: str) -> list[tuple[int, Any]]:
    records = []
    # Only "\n" ends a line: str.splitlines would also split inside a JSON string at
    # U+2028, U+2029 or U+0085, which JSON allows unescaped (JavaScript writers leave them).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise doc.fail(f"invalid JSON at column {exc.colno}: {exc.msg}", number) from None
        except ValueError as exc:
            raise doc.fail(f"invalid JSON: {_first_clause(exc)}", number) from None
        except RecursionError:
            raise doc.fail("JSON nested too deeply", number) from None
    return records


def _not_a_transcript(text: str) -> str:
    """Why a file that does not start with ``{`` or ``[`` is refused."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return f"not JSON or JSON Lines (starts with {shown(text.lstrip()[:200], 24)})"
    kind = {type(None): "null", bool: "boolean", str: "string"}.get(type(value), "number")
    return f"a JSON {kind}, not a transcript (expected an object or a list)"


def _first_clause(exc: ValueError) -> str:
    return str(exc).split(":")[0]


def _longest_line(data: bytes) -> tuple[int, int]:
    """Length of the longest line and its 1-based number."""
    longest, number, start, n = 0, 1, 0, 1
    while True:
        end = data.find(b"\n", start)
        stop = len(data) if end < 0 else end
        if stop - start > longest:
            longest, number = stop - start, n
        if end < 0:
            return longest, number
        start, n = end + 1, n + 1


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1
