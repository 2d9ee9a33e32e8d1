"""Errors in command output, and test runs with their failing tests.

Error lines are returned as verbatim slices of the output (from the exception
name, or the ``FAILED``/``error:`` marker, to the end of the line) so they can
be gold facts as they stand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from benchmark.activity.actions import Action
from benchmark.probe.text import clip, line_at
from benchmark.text import cues

ErrorKind = Literal["exception", "failed", "error"]

TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|python\d?(?:\.\d+)?\s+-m\s+(?:pytest|unittest)|tox|nox|"
    r"(?:npm|yarn|pnpm)\s+(?:run\s+)?test|jest|vitest|mocha|go\s+test|cargo\s+test|"
    r"mvn\s+test|gradle\s+test|rspec|phpunit|make\s+test|ctest|runtests\.py)\b"
)
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - (.+?))?\s*$", re.M)
_VERBOSE_FAILED = re.compile(r"^(\S+::\S+) (?:FAILED|ERROR)\b", re.M)
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (\w+ \([\w.]+\))", re.M)
_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)", re.M)
_CARGO_FAIL = re.compile(r"^test (\S+) \.\.\. FAILED", re.M)
_COUNT_FAILED = re.compile(r"\b([1-9]\d*) (?:failed|errors?)\b")
_PASSED = re.compile(
    r"\b\d+ passed\b|^OK\b|^ok\s+\S|test result: ok\b|\bTests?:\s+\d+ passed\b|^PASS\b", re.M
)
# Code, not a report: a handler (``except KeyError: pass``) or an editor's numbered listing line.
_NOT_REPORT = re.compile(r"\bexcept\s*\(?\s*$|^\s*\d+:(?!\d)")
# Running a program or script (not a test suite, an installer or a file viewer).
RUN_COMMAND = re.compile(
    r"^(?:cd\s+\S+\s*&&\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:timeout\s+\d+\s+)?"
    r"(?:python\d?(?:\.\d+)?(?!\s+-m\s+(?:pip|venv|ensurepip))(?!\s+setup\.py)|node|ruby|perl|"
    r"php|deno\s+run|bun|Rscript|julia|java|go\s+run|cargo\s+run|dotnet\s+run|"
    r"(?:ba|z)?sh\s+\S+\.sh|\./[\w./-]+)(?:\s|$)"
)
# What the environment adds around every observation: status lines, prompts, empty-output notes.
_CHROME = re.compile(
    r"^\s*(?:\((?:Open file|Current directory): .*\)|"
    r"(?:[\w.-]+@[\w.-]+:\S*|(?:ba|z)?sh(?:-[\d.]*)?)?[$#]|>>>|\[File: .*\]|"
    r"\(\d+ more lines (?:above|below)\)|\(no output\)|<no output>|"
    r"\[?(?:exit(?: code| status)?|return code|process exited with code):?\s*-?\d+\]?|"
    r"Your command ran successfully and did not produce any output\.?|"
    r"Wall time: [\d.]+ ?\w*|Output:|Chunk ID: \w+|Original token count: \d+|"
    r"Process (?:exited with code -?\d+|running with session ID \S+))\s*$",
    re.I,
)
# A call's exit status as tools print it: Codex ``Exit code: 1``, SWE-agent/mini-swe-agent
# ``<returncode>1</returncode>``, Claude Code ``Exit code 1``, shells ``exit status 1``.
_EXIT_STATUS = re.compile(
    r"(?:^|\n)\s*\[?(?:exit(?:ed)?(?: with)?(?: code| status)|return ?code|"
    r"process exited with code)\s*:?\s*(-?\d+)\]?\s*(?:$|\n)|"
    r"<returncode>\s*(-?\d+)\s*</returncode>|"
    r"\bexit status (-?\d+)\b|\bexited with (?:code|status) (-?\d+)\b",
    re.I,
)
# What a background job prints when it starts: a notice, not its output.
_BACKGROUND = re.compile(
    r"\b(?:running|started|launched) in (?:the )?background\b|"
    r"\bProcess running with session ID\b|^\[\d+\] \d+\s*$",
    re.I | re.M,
)
_RUNNING = re.compile(r"^Process running with session ID \S+\s*$", re.M)
ENDING_LINES = 3  # without an exit status, an error a command ended on is its failure
MAX_CONTINUATION = 3  # lines an error ending in ":" may continue on


@dataclass(frozen=True)
class ErrorLine:
    kind: ErrorKind
    text: str  # verbatim slice of the output, clipped
    name: str = ""  # exception class, when kind == "exception"


def error_lines(output: str) -> list[ErrorLine]:
    """Error lines of ``output`` in order (warnings are not errors).

    An error line ending in a colon ("... due to the following issue:") runs on
    to the lines that say what the issue is (``_whole``).
    """
    found: list[tuple[int, ErrorLine]] = []
    for match in cues.ERROR["failed_line"].finditer(output):
        found.append((match.start(), ErrorLine("failed", _whole(output, match.start()))))
    for match in cues.ERROR["line"].finditer(output):
        found.append((match.start(), ErrorLine("error", _whole(output, match.start()))))
    for line_start, line in _lines(output):
        match = cues.ERROR["exception"].search(line)
        if match and not _NOT_REPORT.search(line[: match.start()]):
            text = _whole(output, line_start + match.start())
            found.append((line_start + match.start(), ErrorLine("exception", text, match.group(1))))
    found.sort(key=lambda item: item[0])
    seen: set[str] = set()
    out = []
    for _, err in found:
        if err.text and err.text not in seen:
            seen.add(err.text)
            out.append(err)
    return out


def _whole(output: str, start: int) -> str:
    """The error from ``start`` to its line's end, clipped; a line ending in ":" takes the
    lines after it (up to a blank line) along, so the message is not cut at the colon."""
    end = output.find("\n", start)
    end = len(output) if end < 0 else end
    more = 0
    while (
        output[start:end].rstrip().endswith(":") and more < MAX_CONTINUATION and end < len(output)
    ):
        nxt = output.find("\n", end + 1)
        nxt = len(output) if nxt < 0 else nxt
        line = output[end + 1 : nxt]
        if not line.strip() or _CHROME.match(line):
            break
        end, more = nxt, more + 1
    return clip(output[start:end].rstrip("\r"))


def main_error(output: str) -> ErrorLine | None:
    """The error a reader would quote: the last exception, else the first failure or error."""
    errors = error_lines(output)
    exceptions = [e for e in errors if e.kind == "exception"]
    if exceptions:
        return exceptions[-1]
    for kind in ("failed", "error"):
        for err in errors:
            if err.kind == kind:
                return err
    return None


def exit_status(output: str) -> int | None:
    """The exit status a tool printed with a call's output (the last one), if any."""
    found = _EXIT_STATUS.findall(output)
    if not found:
        return None
    return int(next(g for g in found[-1] if g))


def background_notice(output: str) -> bool:
    """Whether ``output`` only says a job started in the background (its output comes later)."""
    if _RUNNING.search(output):  # Codex: what it printed so far; the rest comes with polls
        return True
    lines = output_lines(output)
    return bool(lines) and len(lines) <= 2 and any(_BACKGROUND.search(line) for line in lines)


def call_error(action: Action) -> ErrorLine | None:
    """The error a call failed with, or ``None`` when it did not fail.

    A call failed when its status says so: a non-zero exit status, the tool's
    own error reply, a traceback, or (for a command without a printed status)
    an error it ended on. A call whose exit status is 0 did not fail, whatever
    warnings it printed; a non-shell tool's reply (a sub-agent's report, a
    file's content) is text, not an error, unless the reply itself is one.
    """
    output = action.result
    if not output.strip() or background_notice(output):
        return None
    status = exit_status(output)
    if status == 0:
        return None
    err = main_error(output)
    if cues.ERROR["reply"].match(output):  # the tool's own error reply, quoted from its first line
        start = len(output) - len(output.lstrip())
        return err or ErrorLine("error", _whole(output, start))
    if err is None or status is not None:
        return err
    if action.command is None:
        return None
    if err.kind == "exception" and cues.ERROR["traceback"].search(output):
        return err
    if err.kind in ("failed", "exception") and TEST_COMMAND.search(action.command):
        return err  # a test runner prints failures and collection errors only when they happen
    ending = output_lines(output)[-ENDING_LINES:]
    parts = [part.strip() for part in err.text.split("\n")]
    return err if any(parts[0] in line or line in parts[1:] for line in ending) else None


def reported_error(text: str) -> str | None:
    """The error a person quotes in prose (an issue, a request), if any.

    Only exceptions and marked error lines count, not a sentence that merely
    says "Permission denied"; one quoted inline (`` `KeyError: 'x'` ``) ends
    at its closing backtick.
    """
    errors = [
        e
        for e in error_lines(text)
        if e.kind in ("exception", "failed") or cues.ERROR["mark"].match(e.text)
    ]
    err = next((e for e in reversed(errors) if e.kind == "exception"), None) or next(
        iter(errors), None
    )
    if err is None:
        return None
    pos = text.find(err.text)
    if pos > 0 and text[pos - 1] == "`":
        return err.text.split("`", 1)[0].strip() or None
    return err.text


def output_lines(output: str) -> list[str]:
    """The lines a program printed (verbatim, stripped), without the environment's chrome."""
    return [line.strip() for _, line in _lines(output) if line.strip() and not _CHROME.match(line)]


def _lines(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, line.rstrip("\r")))
        pos += len(line) + 1
    return out


@dataclass(frozen=True)
class TestRun:
    """One run of a test command. ``failures`` maps test id -> (verbatim line, reason)."""

    index: int
    result_index: int
    command: str
    outcome: Literal["pass", "fail", "unknown"]
    failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    error: str = ""  # the output's main error line, verbatim

    @cached_property
    def targets(self) -> tuple[str, ...] | None:
        """Paths or node ids the command selects; ``None`` when it selects by ``-k``."""
        args = self.command.split()[1:]
        if "-k" in args:
            return None
        return tuple(
            a.removeprefix("./") for a in args if "/" in a or "::" in a or a.endswith(".py")
        )

    def covers(self, test_id: str, failing_command: str) -> bool:
        """Whether this run re-runs ``test_id`` (same command, its file, or the whole suite)."""
        if self.command.strip() == failing_command.strip():
            return True
        if self.targets is None:
            return False
        if not self.targets:
            return True  # the whole suite
        target = test_id.split("::", 1)[0].split(" ", 1)[0].removeprefix("./")
        return any(
            target == p or test_id == p or target.startswith(p.rstrip("/") + "/")
            for p in self.targets
        )


def test_runs(actions: list[Action]) -> list[TestRun]:
    """Runs of test commands (pytest, unittest, go test, npm test, ...) with results in view;
    a run kept in a session (Codex) is read from the polls that show its output."""
    runs = []
    for action in actions:
        command = action.ran.command
        if command is None or action.result_index is None or not TEST_COMMAND.search(command):
            continue
        if background_notice(action.result):
            continue  # a session's start: its output comes with the polls
        runs.append(_parse_run(action.index, action.result_index, command, action.result))
    return runs


def _parse_run(index: int, result_index: int, command: str, output: str) -> TestRun:
    failures: dict[str, tuple[str, str]] = {}
    for match in _PYTEST_FAILED.finditer(output):
        failures.setdefault(match.group(1), (match.group(0).strip(), match.group(2) or ""))
    for pattern in (_VERBOSE_FAILED, _UNITTEST, _GO_FAIL, _CARGO_FAIL):
        for match in pattern.finditer(output):
            failures.setdefault(match.group(1), (line_at(output, match.start()).strip(), ""))
    err = main_error(output)
    for test_id, (line, reason) in list(failures.items()):
        if not reason:
            failures[test_id] = (line, err.text if err and err.kind == "exception" else "")
    status = exit_status(output)
    if failures or _COUNT_FAILED.search(output):
        outcome: Literal["pass", "fail", "unknown"] = "fail"
    elif _PASSED.search(output) or status == 0:
        outcome = "pass"
    elif err is not None or status is not None:
        outcome = "fail"
    else:
        outcome = "unknown"
    return TestRun(index, result_index, command, outcome, failures, err.text if err else "")


@dataclass(frozen=True)
class StillFailing:
    """A failure seen in the region and not fixed by a later run before the point's end."""

    test_id: str  # "" for a failing command without per-test ids
    run: TestRun  # the last run inside the region where it failed
    line: str  # verbatim line of that run's output
    reason: str


def still_failing(runs: list[TestRun], start: int, stop: int, end: int) -> list[StillFailing]:
    """Failures of region runs (``[start, stop)``) still open at ``end``, in first-seen order."""
    open_: dict[str, StillFailing] = {}
    index: dict[str, set[str]] = {}  # command, file, directory or node id -> open keys
    for run in runs:
        if run.index >= end or run.index < start:
            continue
        command = run.command.strip()
        if run.targets == ():
            suspects = set(open_)
        else:
            suspects = set(index.get(command, ()))
            for target in run.targets or ():
                suspects |= index.get(target.rstrip("/"), set())
        for key in suspects:
            item = open_[key]
            if key.startswith("cmd:"):
                fixed = command == item.run.command.strip() and run.outcome == "pass"
            else:
                fixed = (
                    run.outcome in ("pass", "fail")
                    and key not in run.failures
                    and run.covers(key, item.run.command)
                )
            if fixed:
                del open_[key]
                for name in _index_names(key, item.run.command):
                    index.get(name, set()).discard(key)
        if not (run.index < stop and run.result_index < stop):
            continue
        for test_id, (line, reason) in run.failures.items():
            open_[test_id] = StillFailing(test_id, run, line, reason)
        if run.outcome == "fail" and not run.failures and run.error:
            open_[f"cmd:{command}"] = StillFailing("", run, run.error, run.error)
        for key, item in open_.items():
            if item.run is run:
                for name in _index_names(key, command):
                    index.setdefault(name, set()).add(key)
    return list(open_.values())


def _index_names(key: str, command: str) -> set[str]:
    """Everything a later run may name to re-run ``key``: its command, node id, file, dirs."""
    names = {command.strip()}
    if key.startswith("cmd:"):
        return names
    target = key.split("::", 1)[0].split(" ", 1)[0].removeprefix("./")
    parts = target.split("/")
    names |= {key, target} | {"/".join(parts[:k]) for k in range(1, len(parts))}
    return names
