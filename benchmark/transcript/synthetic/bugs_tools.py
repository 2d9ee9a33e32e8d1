"""Bug scenarios from reports, lint, HTTP bodies and date parsing."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.bug_helpers import (
    cli_frames,
    function_lines,
    pytest_output,
    sibling_of,
)
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.scenarios import (
    Problem,
    Scenario,
    add_user_test,
    cli_output,
    failure_section,
    func_source,
)
from benchmark.transcript.synthetic.topics import Decision


def zero_div(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    path, test_path = project.src("reports"), "tests/test_reports.py"
    source, tests = project.file(path), project.file(test_path)
    funcs = [
        f
        for f in source.funcs
        if "average" in f.tags and f"    return total / len({f.params[0][0]})" in source.text
    ]
    funcs = [f for f in funcs if f"test_{f.name}_of_empty_list" not in tests.tests]
    if not funcs:
        return None
    chosen = rng.sample(funcs, min(2, len(funcs)))
    names = [f"test_{f.name}_of_empty_list" for f in chosen]
    for func, name in zip(chosen, names, strict=True):
        add_user_test(tests, name, "", [f"assert {func.name}([]) == 0.0"])
    error = "ZeroDivisionError: division by zero"

    def problem(func, name: str, broad: bool) -> Problem:
        plural = func.params[0][0]
        ret = f"    return total / len({plural})"
        src, line = func_source(source, func, ret.strip())
        node = f"{test_path}::{name}"
        lines = function_lines(tests, name)
        fail = TestFailure(
            node,
            error,
            failure_section(
                lines,
                f"{test_path}:{tests.line_of(lines[-1])}",
                error,
                inner=(src, f"{path}:{line}"),
            ),
        )
        command = f"pytest {test_path} -q" if broad else f"pytest {node} -q"
        return Problem(
            command=command,
            purpose="run the empty-report test",
            output=pytest_output(project, rng, test_path, [fail], only="" if broad else node),
            error=fail.line,
            error_type="ZeroDivisionError",
            fix_path=path,
            old=ret,
            new=f"    if not {plural}:\n        return 0.0\n{ret}",
            change=f"{func.name} returns 0.0 for an empty list instead of dividing by zero",
            diagnosis=(
                f"`{func.name}` divides by `len({plural})` without checking for an empty list."
            ),
            verify=command,
            verify_kind="pytest",
            verify_paths=[test_path],
        )

    main = problem(chosen[0], names[0], False)
    near = problem(chosen[1], names[1], True) if len(chosen) > 1 else None
    return Scenario(
        kind="zero_div",
        report=(
            "The weekly report crashed for the new tenant that has no data yet. I added "
            f"{names[0]} to {test_path} to reproduce it."
        ),
        target=path,
        related=[test_path, project.src("tasks")],
        sibling=sibling_of(project, path),
        grep=("/ len(", "src"),
        main=main,
        near=near,
        decision=Decision(
            topic="averages over empty data",
            choice="returning 0.0 for an empty list",
            alternatives=("raising ValueError", "returning NaN"),
            rationale=(
                "an empty tenant is a normal state and the dashboard renders 0.0 without special "
                "cases"
            ),
            against="raising would make every caller add the same try/except for a normal case",
        ),
        thing="empty-tenant reports",
        behaviour="creating tenants before their first import",
    )


def lint_unused(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    path = project.src("cli")
    source = project.file(path)
    anchor = source.anchors["unused_import"]
    lines = source.text.splitlines()
    if anchor not in lines:
        return None
    i = lines.index(anchor)
    line_no, mod = i + 1, anchor.split()[1]
    error = f"{path}:{line_no}:8: F401 [*] `{mod}` imported but unused"
    frame = [error, "  |"]
    for j in range(max(i - 1, 0), min(i + 2, len(lines))):
        frame.append(f"{j + 1} | {lines[j]}".rstrip())
        if j == i:
            frame.append(f"  |        {'^' * len(mod)} F401")
    frame += ["  |", f"  = help: Remove unused import: `{mod}`", ""]
    old = f"{lines[i - 1]}\n{anchor}" if i and lines[i - 1] else f"{anchor}\n{lines[i + 1]}"
    new = lines[i - 1] if i and lines[i - 1] else lines[i + 1]
    main = Problem(
        command="ruff check src tests",
        purpose="lint the code base",
        output=outputs.ruff_output(frame, 1, 1),
        error=error,
        error_type="F401",
        fix_path=path,
        old=old,
        new=new,
        change=f"removed the unused `import {mod}`",
        diagnosis=f"Only one finding: `{mod}` is imported in cli.py but never used.",
        verify="ruff check src tests",
        verify_kind="ruff",
    )
    return Scenario(
        kind="lint_unused",
        report="The lint step of CI is red on main. Can you get `ruff check` clean?",
        target=path,
        related=["pyproject.toml"],
        sibling=project.src("api"),
        grep=(f"{mod}.", "src"),
        main=main,
        near=None,
        decision=Decision(
            topic="how to clear the lint failure",
            choice="deleting the unused import",
            alternatives=("adding `# noqa: F401`", "ignoring F401 for cli.py in pyproject.toml"),
            rationale=(
                "the import is dead code and a suppression would hide the next real unused import"
            ),
            against=(
                "a noqa comment keeps dead code around and teaches people to silence the linter"
            ),
        ),
        thing="the lint cleanup",
        behaviour="running ruff locally before pushing",
    )


def json_empty(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    path = project.src("client")
    source = project.file(path)
    anchor = source.anchors["json_return"]
    if source.text.count(anchor) != 1 or "if not response.content:" in source.text:
        return None
    cmd = project.theme.commands[0]
    e = project.main
    command = f"python -m {project.pkg}.cli {cmd} --since 2024-06-02"
    tasks, cli = project.file(project.src("tasks")), project.file(project.src("cli"))
    version = project.python.rsplit(".", 1)[0]
    site = outputs.site_packages(project)
    fn = f"{cmd.replace('-', '_')}_command"
    frames = cli_frames(project, cmd)
    frames += [
        (
            f"{project.root}/{project.src('cli')}",
            cli.line_of(f"service.run_{cmd.replace('-', '_')}("),
            fn,
            f"changed = service.run_{cmd.replace('-', '_')}(started, dry_run=dry_run)",
        ),
        (
            f"{project.root}/{project.src('tasks')}",
            tasks.line_of(f"client.list_{e.plural}("),
            f"sync_{e.plural}",
            f"payloads = client.list_{e.plural}(since=since)",
        ),
        (
            f"{project.root}/{path}",
            source.line_of(f'"/{e.plural}", page=page'),
            f"list_{e.plural}",
            f'batch = self._request("GET", "/{e.plural}", page=page, since=since)',
        ),
        (f"{project.root}/{path}", source.line_of(anchor), "_request", "return response.json()"),
        (f"{site}/httpx/_models.py", 764, "json", "return jsonlib.loads(self.content, **kwargs)"),
        (
            f"/usr/lib/python{version}/json/__init__.py",
            346,
            "loads",
            "return _default_decoder.decode(s)",
        ),
        (
            f"/usr/lib/python{version}/json/decoder.py",
            337,
            "decode",
            "obj, end = self.raw_decode(s, idx=_w(s, 0).end())",
        ),
        (
            f"/usr/lib/python{version}/json/decoder.py",
            355,
            "raw_decode",
            'raise JSONDecodeError("Expecting value", s, err.value)',
        ),
    ]
    error = "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    new = '        if not response.content:\n            return {"data": []}\n' + anchor
    main = Problem(
        command=command,
        purpose=f"run {cmd} for a quiet day",
        output=outputs.with_exit(outputs.traceback(frames, error), 1),
        error=error,
        error_type="JSONDecodeError",
        fix_path=path,
        old=anchor,
        new=new,
        change="_request treats an empty response body as an empty page",
        diagnosis=(
            f"{project.theme.vendor} answered 200 with an empty body (nothing changed since "
            "that date) and `_request` calls `response.json()` unconditionally."
        ),
        verify=command,
        verify_kind="cli",
        verify_note=cli_output(project, cmd, False),
    )
    return Scenario(
        kind="json_empty",
        report=(
            f"The nightly `{cmd}` failed on Sunday, when nothing changed upstream. "
            f"You can reproduce it with `{command}`."
        ),
        target=path,
        related=[project.src("tasks"), project.test_path(path)],
        sibling=project.src("config"),
        grep=("response.json()", "src"),
        main=main,
        near=None,
        decision=Decision(
            topic=f"empty {project.theme.vendor} responses",
            choice="treating an empty 200 body as an empty page",
            alternatives=("retrying the request", "raising UpstreamError"),
            rationale=(
                f"{project.theme.vendor} documents an empty 200 response when nothing changed "
                "since the cursor"
            ),
            against="retrying would fetch the same empty body three times and slow the job down",
        ),
        thing="empty upstream responses",
        behaviour="sending empty 200 bodies",
    )


def date_format(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    path, test_path = project.src("utils"), "tests/test_utils.py"
    source, tests = project.file(path), project.file(test_path)
    anchor = source.anchors["parse_date"]
    if source.text.count(anchor) != 1:
        return None
    n1, n2 = "test_parse_date_accepts_timestamps", "test_parse_date_accepts_slashes"
    add_user_test(tests, n1, "", ['assert parse_date("2024-06-03T08:30:00Z") == date(2024, 6, 3)'])
    add_user_test(tests, n2, "", ['assert parse_date("2024/06/03") == date(2024, 6, 3)'])
    func = next(f for f in source.funcs if f.name == "parse_date")
    version = project.python.rsplit(".", 1)[0]
    mid = "    return date.fromisoformat(value[:10])"

    def problem(name: str, error: str, old: str, new: str, broad: bool, change: str) -> Problem:
        node = f"{test_path}::{name}"
        lines = function_lines(tests, name)
        src, line = func_source(source, func, "return ")
        inner_loc = f"{path}:{line}" if broad else f"/usr/lib/python{version}/_strptime.py:352"
        fail = TestFailure(
            node,
            error,
            failure_section(
                lines, f"{test_path}:{tests.line_of(lines[-1])}", error, inner=(src, inner_loc)
            ),
        )
        command = f"pytest {test_path} -q" if broad else f"pytest {node} -q"
        return Problem(
            command=command,
            purpose="run the new date parsing test",
            output=pytest_output(project, rng, test_path, [fail], only="" if broad else node),
            error=fail.line,
            error_type="ValueError",
            fix_path=path,
            old=old,
            new=new,
            change=change,
            diagnosis=(
                "`parse_date` only accepts exactly YYYY-MM-DD"
                if not broad
                else "Slash-separated dates from the older export still fail after the first fix."
            ),
            verify=command,
            verify_kind="pytest",
            verify_paths=[test_path],
        )

    main = problem(
        n1,
        "ValueError: unconverted data remains: T08:30:00Z",
        anchor,
        mid,
        False,
        "parse_date parses the first ten characters with date.fromisoformat",
    )
    near = problem(
        n2,
        "ValueError: Invalid isoformat string: '2024/06/03'",
        mid,
        '    return date.fromisoformat(value[:10].replace("/", "-"))',
        True,
        "parse_date also accepts slash-separated dates",
    )
    return Scenario(
        kind="date_format",
        report=(
            f"CSV imports reject rows from the new export: the date columns now carry full "
            f"timestamps. I added {n1} and {n2} to {test_path}."
        ),
        target=path,
        related=[test_path],
        sibling=sibling_of(project, path),
        grep=("parse_date(", "src"),
        main=main,
        near=near,
        decision=Decision(
            topic="date parsing in imports",
            choice="parsing the first ten characters with date.fromisoformat",
            alternatives=("python-dateutil's parser", "trying a list of formats in a loop"),
            rationale=(
                "the export mixes plain dates and full timestamps and imports only need the date "
                "part"
            ),
            against=(
                "dateutil would also accept ambiguous day-first dates like 03/04 without complaint"
            ),
        ),
        thing="timestamp support in parse_date",
        behaviour="changing the export date format",
    )
