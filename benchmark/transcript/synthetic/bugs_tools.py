"""Bug scenarios from reports, lint, HTTP bodies and date parsing."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import cli_frames
from benchmark.transcript.synthetic.project import Func, Project


def zero_div(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
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
        sc.add_user_test(tests, name, "", [f"assert {func.name}([]) == 0.0"])
    error = "ZeroDivisionError: division by zero"

    def attempt(func: Func, name: str, broad: bool) -> sc.Attempt:
        items = func.params[0][0]
        ret = f"    return total / len({items})"
        src, line = sc.func_source(source, func, ret.strip())
        fail = sc.failed_test(tests, name, error, inner=(src, f"{path}:{line}"))
        new = f"    if not {items}:\n        return 0.0\n{ret}"
        check = sc.pytest_check(project, rng, [fail], broad)
        return sc.Attempt(check, path, ret, new, {"func": func.name, "items": items})

    main = attempt(chosen[0], names[0], False)
    near = attempt(chosen[1], names[1], True) if len(chosen) > 1 else None
    return sc.finish(project, "zero_div", {"test": names[0], "test_path": test_path}, main, near)


def lint_unused(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
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
    ruff = "ruff check src tests"
    check = sc.Check(ruff, outputs.ruff_output(frame, 1, 1), error, ruff, "ruff")
    return sc.finish(project, "lint_unused", {"mod": mod}, sc.Attempt(check, path, old, new), None)


def json_empty(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path = project.src("client")
    source = project.file(path)
    anchor = source.anchors["json_return"]
    if source.text.count(anchor) != 1 or "if not response.content:" in source.text:
        return None
    cmd = project.theme.commands[0]
    e = project.main
    command = f"python -m {project.pkg}.cli {cmd} --since 2024-06-02"
    tasks = project.file(project.src("tasks"))
    here = f"{project.root}/{path}"
    frames = cli_frames(project, cmd, run=True)
    frames += [
        (
            f"{project.root}/{project.src('tasks')}",
            tasks.line_of(f"client.list_{e.plural}("),
            f"sync_{e.plural}",
            f"payloads = client.list_{e.plural}(since=since)",
        ),
        (
            here,
            source.line_of(f'"/{e.plural}", page=page'),
            f"list_{e.plural}",
            f'batch = self._request("GET", "/{e.plural}", page=page, since=since)',
        ),
        (here, source.line_of(anchor), "_request", "return response.json()"),
    ]
    frames += outputs.library_frames(project, "json")
    error = "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    new = '        if not response.content:\n            return {"data": []}\n' + anchor
    check = sc.cli_check(project, cmd, command, outputs.traceback(frames, error), error, False)
    values = {"cmd": cmd, "command": command, "test_path": project.test_path(path)}
    return sc.finish(project, "json_empty", values, sc.Attempt(check, path, anchor, new), None)


def date_format(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path, test_path = project.src("utils"), "tests/test_utils.py"
    source, tests = project.file(path), project.file(test_path)
    anchor = source.anchors["parse_date"]
    if source.text.count(anchor) != 1:
        return None
    n1, n2 = "test_parse_date_accepts_timestamps", "test_parse_date_accepts_slashes"
    sc.add_user_test(
        tests, n1, "", ['assert parse_date("2024-06-03T08:30:00Z") == date(2024, 6, 3)']
    )
    sc.add_user_test(tests, n2, "", ['assert parse_date("2024/06/03") == date(2024, 6, 3)'])
    func = next(f for f in source.funcs if f.name == "parse_date")
    version = project.python.rsplit(".", 1)[0]
    mid = "    return date.fromisoformat(value[:10])"

    def attempt(name: str, error: str, old: str, new: str, broad: bool) -> sc.Attempt:
        src, line = sc.func_source(source, func, "return ")
        inner_loc = f"{path}:{line}" if broad else f"/usr/lib/python{version}/_strptime.py:352"
        fail = sc.failed_test(tests, name, error, inner=(src, inner_loc))
        return sc.Attempt(sc.pytest_check(project, rng, [fail], broad), path, old, new)

    unconverted = "ValueError: unconverted data remains: T08:30:00Z"
    main = attempt(n1, unconverted, anchor, mid, False)
    slashes = "ValueError: Invalid isoformat string: '2024/06/03'"
    near = attempt(
        n2, slashes, mid, '    return date.fromisoformat(value[:10].replace("/", "-"))', True
    )
    values = {"test": n1, "test2": n2, "test_path": test_path}
    return sc.finish(project, "date_format", values, main, near)
