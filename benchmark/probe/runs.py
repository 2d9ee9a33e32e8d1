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

ErrorKind = Literal["exception", "failed", "error"]

_EXCEPTION = re.compile(
    r"\b(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt|NotFound)):[ \t]*\S"
)
_FAILED = re.compile(r"^\s*(?:FAILED|ERROR)\s+\S.*$|^\s*--- FAIL: \S.*$", re.M)
_ERROR = re.compile(
    r"^\s*(?:error|fatal|Error|ERROR|FATAL)(?:\[\w+\])?:\s*\S.*$|^npm ERR! \S.*$|"
    r"^.*\b(?:No such file or directory|command not found|Permission denied|"
    r"Segmentation fault)\b.*$",
    re.M,
)

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
_ERROR_MARK = re.compile(r"(?:error|fatal)(?:\[\w+\])?:|npm ERR!", re.I)
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
    r"Your command ran successfully and did not produce any output\.?)\s*$",
    re.I,
)


@dataclass(frozen=True)
class ErrorLine:
    kind: ErrorKind
    text: str  # verbatim slice of the output, clipped
    name: str = ""  # exception class, when kind == "exception"


def error_lines(output: str) -> list[ErrorLine]:
    """Error lines of ``output`` in order (warnings are not errors)."""
    found: list[tuple[int, ErrorLine]] = []
    for match in _FAILED.finditer(output):
        found.append((match.start(), ErrorLine("failed", clip(match.group(0)))))
    for match in _ERROR.finditer(output):
        found.append((match.start(), ErrorLine("error", clip(match.group(0)))))
    for line_start, line in _lines(output):
        match = _EXCEPTION.search(line)
        if match and not _NOT_REPORT.search(line[: match.start()]):
            text = clip(line[match.start() :])
            found.append((line_start + match.start(), ErrorLine("exception", text, match.group(1))))
    found.sort(key=lambda item: item[0])
    seen: set[str] = set()
    out = []
    for _, err in found:
        if err.text and err.text not in seen:
            seen.add(err.text)
            out.append(err)
    return out


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


def reported_error(text: str) -> str | None:
    """The error a person quotes in prose (an issue, a request), if any.

    Only exceptions and marked error lines count, not a sentence that merely
    says "Permission denied"; one quoted inline (`` `KeyError: 'x'` ``) ends
    at its closing backtick.
    """
    errors = [
        e
        for e in error_lines(text)
        if e.kind in ("exception", "failed") or _ERROR_MARK.match(e.text)
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
    """Runs of test commands (pytest, unittest, go test, npm test, ...) with results in view."""
    runs = []
    for action in actions:
        command = action.command
        if command is None or action.result_index is None or not TEST_COMMAND.search(command):
            continue
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
    if failures or _COUNT_FAILED.search(output):
        outcome: Literal["pass", "fail", "unknown"] = "fail"
    elif _PASSED.search(output):
        outcome = "pass"
    elif err is not None:
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
