"""Shared shapes of a bug scenario: the failure the agent hits and the edit that fixes it.

A builder (``bugs_*`` modules) finds a place in the project where a kind of bug fits,
plants it, and describes each failure as an :class:`Attempt`: the failing command with its
output (a :class:`Check`) and the edit that fixes it. :func:`finish` words the rest from
the kind's entry in :func:`tables.bug_stories`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import benchmark.transcript.synthetic.outputs as outputs
from benchmark.transcript.synthetic.bug_helpers import cli_output, sibling_of
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Func, Project, SourceFile
from benchmark.transcript.synthetic.tables import bug_stories, project_values
from benchmark.transcript.synthetic.topics import Decision


def _nothing() -> None:
    return None


@dataclass
class Check:
    """A failing command, and how a passing run of the fix is shown."""

    command: str
    output: str
    error: str  # exact error line as it appears in ``output``
    verify: str  # command that shows the fix works
    verify_kind: str  # pytest | cli | ruff | mypy
    verify_paths: list[str] = field(default_factory=list)
    verify_note: str = ""  # stdout of a passing cli run


@dataclass
class Attempt:
    """One failure of a scenario and the edit that fixes it, before it is worded."""

    check: Check
    fix_path: str
    old: str
    new: str
    values: dict[str, Any] = field(default_factory=dict)  # for this failure's templates
    after: Callable[[], None] = _nothing  # bookkeeping once the edit is applied


@dataclass
class Problem:
    """One failing command, its exact error line, and the edit that fixes it."""

    command: str
    purpose: str
    output: str
    error: str  # exact error line as it appears in ``output``
    error_type: str
    fix_path: str
    old: str
    new: str
    change: str  # one-line description of the edit
    diagnosis: str  # the agent's reading of the failure
    verify: str  # command that shows the fix works
    verify_kind: str  # pytest | cli | ruff | mypy
    verify_paths: list[str] = field(default_factory=list)
    verify_note: str = ""  # stdout of a passing cli run
    after: Callable[[], None] = _nothing  # bookkeeping once the edit is applied


@dataclass
class Scenario:
    kind: str
    report: str  # the user's message
    target: str  # the file that gets fixed
    related: list[str]  # files read while investigating
    sibling: str  # a near-miss path that is read but not changed ("" when absent)
    grep: tuple[str, str]  # (pattern, path) searched while investigating
    main: Problem
    near: Problem | None  # a second failure differing in one detail
    decision: Decision
    thing: str  # noun phrase for follow-up tasks
    behaviour: str  # what the upstream does, for "ask X whether ..." follow-ups


def finish(
    project: Project, kind: str, values: dict[str, Any], main: Attempt, near: Attempt | None
) -> Scenario:
    """The scenario of ``kind`` around its failures, worded from its story."""
    story = bug_stories()[kind]
    path = main.fix_path
    v = {**project_values(project), "path": path, "module": dotted(path), **values}

    def problem(attempt: Attempt, is_near: bool) -> Problem:
        pv = {**v, **attempt.values}
        return Problem(
            purpose=story.text("purpose", pv),
            error_type=story.text("error_type", pv),
            change=story.variant("change", pv, is_near),
            diagnosis=story.variant("diagnosis", pv, is_near),
            fix_path=attempt.fix_path,
            old=attempt.old,
            new=attempt.new,
            after=attempt.after,
            **vars(attempt.check),
        )

    return Scenario(
        kind=kind,
        report=story.text("report", v),
        target=path,
        related=story.texts("related", v),
        sibling=story.text("sibling", v) or sibling_of(project, path),
        grep=(story.text("grep", v), story.text("grep_in", v, "src")),
        main=problem(main, False),
        near=problem(near, True) if near else None,
        decision=story.decision(v),
        thing=story.text("thing", v),
        behaviour=story.text("behaviour", v),
    )


def dotted(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").replace("/", ".")


def pytest_check(
    project: Project,
    rng: random.Random,
    failures: list[TestFailure],
    broad: bool,
    *,
    verify_all: bool = False,
    error: str = "",
) -> Check:
    """A pytest run of the first failure's node (its whole file when ``broad``)."""
    node = failures[0].test_id
    test_path = node.split("::", 1)[0]
    only = "" if broad else node
    command = f"pytest {only or test_path} -q"
    output = outputs.pytest_run(project, rng, [test_path], failures, quiet=True, only=only)[0]
    verify = f"pytest {test_path} -q" if verify_all else command
    return Check(command, output, error or failures[0].line, verify, "pytest", [test_path])


def cli_check(project: Project, cmd: str, command: str, trace: str, error: str, dry: bool) -> Check:
    """``command`` (running CLI command ``cmd``) dies with ``trace``; it passes once fixed."""
    note = cli_output(project, cmd, dry)
    return Check(command, outputs.with_exit(trace, 1), error, command, "cli", verify_note=note)


SEPARATOR = "_ " * 39 + "_"


def add_user_test(source: SourceFile, name: str, params: str, body: list[str]) -> list[str]:
    """Append a test the user wrote; returns its source lines."""
    lines = [f"def {name}({params}):", *(f"    {line}" for line in body)]
    source.text = source.text.rstrip("\n") + "\n\n\n" + "\n".join(lines) + "\n"
    source.tests.append(name)
    return lines


def function_lines(source: SourceFile, name: str) -> list[str]:
    """The lines of top-level function ``name``, from its def to the first blank line."""
    lines = source.text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = start + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[start:end]


def func_source(source: SourceFile, func: Func, until: str) -> tuple[list[str], int]:
    """Lines of ``func`` from its def up to the first line containing ``until``, and that
    line's 1-based number in the file."""
    lines = source.text.splitlines()
    start = lines.index(func.def_line)
    for offset, line in enumerate(lines[start:]):
        if until in line:
            return lines[start : start + offset + 1], start + offset + 1
    return lines[start : start + 2], start + 2


def failed_test(
    tests: SourceFile, test_id: str, error: str, at: int = -1, **section: Any
) -> TestFailure:
    """The FAILURES entry of ``test_id`` in ``tests``, failing at its line ``at``."""
    name = test_id.split("[")[0]
    lines = function_lines(tests, name)
    loc = f"{tests.path}:{tests.line_of(f'def {name}(') + at % len(lines)}"
    body = failure_section(lines, loc, error, fail_at=at, **section)
    return TestFailure(f"{tests.path}::{test_id}", error, body)


def failure_section(
    test_lines: list[str],
    test_loc: str,
    error: str,
    inner: tuple[list[str], str] | None = None,
    extra_e: tuple[str, ...] = (),
    fail_at: int = -1,
) -> list[str]:
    """A FAILURES entry: the test up to its failing line (marked ``>``), then the inner frame."""
    fail_at = fail_at % len(test_lines)
    out = [f"    {line}" for line in test_lines[:fail_at]] + [f">   {test_lines[fail_at]}"]
    etype = (
        error.split(":", 1)[0]
        if ":" in error and not error.startswith("assert")
        else "AssertionError"
    )
    e_lines = [f"E       {error}", *(f"E       {x}" for x in extra_e)]
    if inner:
        src, loc = inner
        out += ["", f"{test_loc}: ", SEPARATOR, ""]
        out += [f"    {line}" for line in src[:-1]] + [f">   {src[-1]}"]
        out += [*e_lines, "", f"{loc}: {etype}"]
    else:
        out += [*e_lines, "", f"{test_loc}: {etype}"]
    return out


def append_edit(source: SourceFile, addition: str) -> tuple[str, str]:
    """(old, new) that append ``addition`` after the file's last lines, with a unique anchor."""
    lines = source.text.rstrip("\n").splitlines()
    gap = "\n\n\n" if source.path.endswith(".py") else "\n\n"
    for size in range(1, min(len(lines), 8) + 1):
        old = "\n".join(lines[-size:])
        if old.strip() and source.text.count(old) == 1:
            return old, f"{old}{gap}{addition}"
    old = "\n".join(lines)
    return old, f"{old}\n\n{addition}"
