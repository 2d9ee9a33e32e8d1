"""Feature requests: a new module and its tests, a wiring edit, a dependency and a first bug.

The first version of each new module carries one small bug (written the way
people really get them wrong) that its own tests catch, so every feature
episode plants an error, a fix and a re-run. Each feature module builds the
code; :func:`finish` words the rest from :func:`tables.feature_texts`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import benchmark.transcript.synthetic.resources as resources
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


def code_values(project: Project, **values: Any) -> dict[str, Any]:
    """What a feature's code templates may name: the project values, ``project``, ``e`` (the
    main entity) and the feature's own ``values``."""
    return {**project_values(project), "project": project, "e": project.main, **values}


def snippet(project: Project, key: str, name: str, **values: Any) -> str:
    """The wiring snippet ``name`` of feature ``key`` (data/feature_code.yaml), filled."""
    entry = resources.yaml_data("feature_code.yaml")[key]
    return entry["wiring"][name].format(**code_values(project, **values))


def finish(
    project: Project,
    key: str,
    values: dict[str, Any],
    wiring: tuple[str, str, str],
    **code: Any,
) -> Feature:
    """The feature ``key``: its module, tests and first bug from its code entry and module
    template (filled with ``code``), the ``wiring`` edit as (path, old, new) and the words of
    its text entry (filled with ``values``)."""
    entry = resources.yaml_data("feature_code.yaml")[key]
    cv = code_values(project, **code)
    bug_old, bug_new = (line.format(**cv) for line in entry["bug"])
    path = project.src(entry["module"])
    module = resources.render(f"feature_{key}.py.tmpl", **cv, bug_line=bug_old)
    target = f"{project.pkg}.{entry['module'].replace('/', '.')}"
    tests = {name: body.format(**cv).splitlines() for name, body in entry["tests"].items()}
    text = feature_texts()[key]
    v = {**project_values(project), **values}
    return Feature(
        key=key,
        title=text.text("title", v),
        request=text.text("request", v),
        module=SourceFile(path, module),
        test=_test_module(
            project.test_path(path), target, entry["test_head"].format(**cv).splitlines(), tests
        ),
        dependency=NEW_DEPENDENCIES.get(key),
        wiring=Wiring(*wiring, text.text("wiring", v)),
        bug_test=text.text("bug_test", v),
        bug_error=text.text("bug_error", v),
        bug_old=bug_old,
        bug_new=bug_new,
        bug_change=text.text("bug_change", v),
        bug_diagnosis=text.text("bug_diagnosis", v),
        decision=text.decision(v),
        thing=text.text("thing", v),
        reads=text.texts("read", v),
    )


def _test_module(
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
