"""Bug scenarios from reports, lint, HTTP bodies and date parsing."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import cli_frames
from benchmark.transcript.synthetic.project import Func, Project

ZERO_DIV = resources.Wording("bug_code.yaml", "zero_div")
LINT = resources.Wording("bug_code.yaml", "lint_unused")
JSON = resources.Wording("bug_code.yaml", "json_empty")
DATES = resources.Wording("bug_code.yaml", "date_format")


def zero_div(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path, test_path = project.src("reports"), ZERO_DIV("test_path")
    source, tests = project.file(path), project.file(test_path)
    funcs = [
        f
        for f in source.funcs
        if "average" in f.tags and ZERO_DIV("returns", items=f.params[0][0]) in source.text
    ]
    funcs = [f for f in funcs if ZERO_DIV("test_name", func=f.name) not in tests.tests]
    if not funcs:
        return None
    chosen = rng.sample(funcs, min(2, len(funcs)))
    names = [ZERO_DIV("test_name", func=f.name) for f in chosen]
    for func, name in zip(chosen, names, strict=True):
        sc.add_user_test(tests, name, "", [ZERO_DIV("assertion", func=func.name)])
    error = ZERO_DIV("error")

    def attempt(func: Func, name: str, broad: bool) -> sc.Attempt:
        items = func.params[0][0]
        ret = ZERO_DIV("returns", items=items)
        src, line = sc.func_source(source, func, ret.strip())
        fail = sc.failed_test(tests, name, error, inner=(src, f"{path}:{line}"))
        new = ZERO_DIV("guard", items=items, ret=ret)
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
    error = LINT("error", path=path, line=line_no, mod=mod)
    frame = [error, LINT("gutter")]
    for j in range(max(i - 1, 0), min(i + 2, len(lines))):
        frame.append(LINT("numbered", number=j + 1, line=lines[j]).rstrip())
        if j == i:
            frame.append(LINT("carets", carets="^" * len(mod)))
    frame += [LINT("gutter"), LINT("help", mod=mod), ""]
    old = f"{lines[i - 1]}\n{anchor}" if i and lines[i - 1] else f"{anchor}\n{lines[i + 1]}"
    new = lines[i - 1] if i and lines[i - 1] else lines[i + 1]
    ruff = LINT("command")
    check = sc.Check(ruff, outputs.ruff_output(frame, 1, 1), error, ruff, "ruff")
    return sc.finish(project, "lint_unused", {"mod": mod}, sc.Attempt(check, path, old, new), None)


def json_empty(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path = project.src("client")
    source = project.file(path)
    anchor = source.anchors["json_return"]
    if source.text.count(anchor) != 1 or JSON("handled") in source.text:
        return None
    cmd = project.theme.commands[0]
    e = project.main
    command = JSON("command", pkg=project.pkg, cmd=cmd)
    tasks = project.file(project.src("tasks"))
    here = f"{project.root}/{path}"
    frames = cli_frames(project, cmd, run=True)
    w = {"plural": e.plural}
    task_at = tasks.line_of(JSON("task_call", **w))
    frames += [
        (
            f"{project.root}/{project.src('tasks')}",
            task_at,
            JSON("task_function", **w),
            JSON("task_line", **w),
        ),
        (
            here,
            source.line_of(JSON("list_call", **w)),
            JSON("list_function", **w),
            JSON("list_line", **w),
        ),
        (here, source.line_of(anchor), JSON("request_function"), JSON("request_line")),
    ]
    frames += outputs.library_frames(project, "json")
    error = JSON("error")
    new = JSON("guard", anchor=anchor)
    check = sc.cli_check(project, cmd, command, outputs.traceback(frames, error), error, False)
    values = {"cmd": cmd, "command": command, "test_path": project.test_path(path)}
    return sc.finish(project, "json_empty", values, sc.Attempt(check, path, anchor, new), None)


def date_format(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path, test_path = project.src("utils"), DATES("test_path")
    source, tests = project.file(path), project.file(test_path)
    anchor = source.anchors["parse_date"]
    if source.text.count(anchor) != 1:
        return None
    n1, n2 = DATES("timestamps"), DATES("slashes")
    sc.add_user_test(tests, n1, "", [DATES("timestamps_assertion")])
    sc.add_user_test(tests, n2, "", [DATES("slashes_assertion")])
    func = next(f for f in source.funcs if f.name == DATES("function"))
    version = project.python.rsplit(".", 1)[0]
    mid = DATES("iso")

    def attempt(name: str, error: str, old: str, new: str, broad: bool) -> sc.Attempt:
        src, line = sc.func_source(source, func, DATES("returns"))
        inner_loc = f"{path}:{line}" if broad else DATES("strptime", version=version)
        fail = sc.failed_test(tests, name, error, inner=(src, inner_loc))
        return sc.Attempt(sc.pytest_check(project, rng, [fail], broad), path, old, new)

    main = attempt(n1, DATES("unconverted"), anchor, mid, False)
    near = attempt(n2, DATES("invalid"), mid, DATES("iso_slashes"), True)
    values = {"test": n1, "test2": n2, "test_path": test_path}
    return sc.finish(project, "date_format", values, main, near)
