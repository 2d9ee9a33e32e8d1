"""Feature requests: a new module and its tests, a wiring edit, a dependency and a first bug.

The first version of each new module carries one small bug (written the way
people really get them wrong) that its own tests catch, so every feature
episode plants an error, a fix and a re-run. Each feature module builds the
code; :func:`finish` words the rest from :func:`tables.feature_texts`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmark.transcript.synthetic.deps import NEW_DEPENDENCIES, NewDependency
from benchmark.transcript.synthetic.project import Project, SourceFile
from benchmark.transcript.synthetic.tables import feature_texts, project_values
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


def title(project: Project, key: str) -> str:
    return feature_texts()[key].text("title", project_values(project))


def finish(
    project: Project,
    key: str,
    values: dict[str, Any],
    module: SourceFile,
    tests: SourceFile,
    wiring: tuple[str, str, str],
    bug: tuple[str, str],
) -> Feature:
    """The feature ``key``: its code (``module``, ``tests``, the ``wiring`` edit as
    (path, old, new) and the ``bug`` as (old, new)) and the words of its text entry."""
    text = feature_texts()[key]
    v = {**project_values(project), **values}
    return Feature(
        key=key,
        title=text.text("title", v),
        request=text.text("request", v),
        module=module,
        test=tests,
        dependency=NEW_DEPENDENCIES.get(key),
        wiring=Wiring(*wiring, text.text("wiring", v)),
        bug_test=text.text("bug_test", v),
        bug_error=text.text("bug_error", v),
        bug_old=bug[0],
        bug_new=bug[1],
        bug_change=text.text("bug_change", v),
        bug_diagnosis=text.text("bug_diagnosis", v),
        decision=text.decision(v),
        thing=text.text("thing", v),
        reads=text.texts("read", v),
    )


def test_module(
    path: str, target: str, header: list[str], tests: dict[str, list[str]]
) -> SourceFile:
    """A test file for module ``target``: imports and helpers (``header``), then ``tests``
    (name -> body; a body may start with its parameter list, like ``"(tmp_path)"``)."""
    lines = [f'"""Tests for {target}."""', "", "from __future__ import annotations", "", *header]
    for name, body in tests.items():
        params = body[0] if body and body[0].startswith("(") else "()"
        body = body[1:] if body and body[0].startswith("(") else body
        lines += ["", "", f"def {name}{params}:", *(f"    {b}" for b in body)]
    return SourceFile(path=path, text="\n".join(lines) + "\n", tests=list(tests))
