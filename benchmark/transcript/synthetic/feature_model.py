"""Feature requests: a new module and its tests, a wiring edit, a dependency and a first bug.

The first version of each new module carries one small bug (written the way
people really get them wrong) that its own tests catch, so every feature
episode plants an error, a fix and a re-run."""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.transcript.synthetic.deps import NewDependency
from benchmark.transcript.synthetic.project import SourceFile
from benchmark.transcript.synthetic.topics import Decision


@dataclass
class Wiring:
    path: str
    old: str
    new: str
    change: str


@dataclass
class Feature:
    key: str
    title: str
    request: str
    module: SourceFile
    test: SourceFile
    dependency: NewDependency | None
    wiring: Wiring
    bug_test: str  # failing test name
    bug_error: str  # text after " - " in the pytest summary
    bug_old: str
    bug_new: str
    bug_change: str
    bug_diagnosis: str
    decision: Decision
    thing: str
    reads: list[str]


def test_module(path: str, header: list[str], tests: dict[str, list[str]]) -> SourceFile:
    lines = list(header)
    for name, body in tests.items():
        params = body[0] if body and body[0].startswith("(") else "()"
        body = body[1:] if body and body[0].startswith("(") else body
        lines += ["", "", f"def {name}{params}:", *(f"    {b}" for b in body)]
    return SourceFile(path=path, text="\n".join(lines) + "\n", tests=list(tests))
