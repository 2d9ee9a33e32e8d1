"""Shared shapes of a bug scenario: the failure the agent hits and the edit that fixes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.project import Func, Project, SourceFile
from benchmark.transcript.synthetic.topics import Decision


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
    after: Callable[[], None] = lambda: None  # bookkeeping once the edit is applied


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


SEPARATOR = "_ " * 39 + "_"


def add_user_test(source: SourceFile, name: str, params: str, body: list[str]) -> list[str]:
    """Append a test the user wrote; returns its source lines."""
    lines = [f"def {name}({params}):", *(f"    {line}" for line in body)]
    source.text = source.text.rstrip("\n") + "\n\n\n" + "\n".join(lines) + "\n"
    source.tests.append(name)
    return lines


def func_source(source: SourceFile, func: Func, until: str) -> tuple[list[str], int]:
    """Lines of ``func`` from its def up to the first line containing ``until``, and that
    line's 1-based number in the file."""
    lines = source.text.splitlines()
    start = lines.index(func.def_line)
    for offset, line in enumerate(lines[start:]):
        if until in line:
            return lines[start : start + offset + 1], start + offset + 1
    return lines[start : start + 2], start + 2


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
    for size in range(1, min(len(lines), 8) + 1):
        old = "\n".join(lines[-size:])
        if old.strip() and source.text.count(old) == 1:
            return old, f"{old}\n\n\n{addition}" if source.path.endswith(
                ".py"
            ) else f"{old}\n\n{addition}"
    old = "\n".join(lines)
    return old, f"{old}\n\n{addition}"


def cli_output(project: Project, command: str, dry: bool) -> str:
    n = 3 + len(command) % 17
    word = "would change" if dry else "changed"
    return outputs.with_exit(f"{command}: {n} {project.main.plural} {word}", 0)
