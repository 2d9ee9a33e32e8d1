"""Bug scenarios about calls and payloads: missing keys, unexpected keyword arguments."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import BUG_TABLES, cli_frames, declarations
from benchmark.transcript.synthetic.project import Func, Project
from benchmark.transcript.synthetic.python_source import parse_expr
from benchmark.transcript.synthetic.testgen import call_args, snake
from benchmark.transcript.synthetic.vocab import Field


def with_default(expr: str, f_name: str, f_type: str) -> tuple[str, str]:
    default = {"int": "0", "float": "0.0", "bool": "False"}.get(f_type, '""')
    key = f'payload["{f_name}"]'
    return expr.replace(key, f'payload.get("{f_name}", {default})'), default


def key_error(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    ents = sorted(project.entities, key=lambda e: e.name != hint)
    for e in ents:
        path = project.service_path(e)
        source = project.file(path)
        fields = [
            f
            for f in e.fields
            if f.type in ("str", "int", "float", "bool")
            and source.text.count(f"        {f.name}={parse_expr(f)},") == 1
            and f"KeyError: '{f.name}'" not in project.taken_errors
        ]
        if len(fields) >= 2:
            break
    else:
        return None
    f1, f2 = rng.sample(fields, 2)
    cmd = rng.choice(project.theme.commands)
    since = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    command = f"python -m {project.pkg}.cli {cmd} --since {since} --dry-run"
    creator = next(f for f in source.funcs if f.name == f"create_{e.name}")
    parse = next(f for f in source.funcs if f.name == f"parse_{e.name}_payload")
    count = rng.choice((480, 1250, 3400, 9800, 12000))
    here = f"{project.root}/{path}"

    def attempt(fld: Field) -> sc.Attempt:
        line = f"        {fld.name}={parse_expr(fld)},"
        stripped = line.strip()
        new_line, default = with_default(line, fld.name, fld.type)
        _, parse_line = sc.func_source(source, parse, stripped)
        call = f"parse_{e.name}_payload(payload)"
        _, create_line = sc.func_source(source, creator, call)
        frames = cli_frames(project, cmd, run=True)
        frames.append((here, create_line, f"create_{e.name}", f"{e.name} = {call}"))
        frames.append((here, parse_line, f"parse_{e.name}_payload", stripped))
        col = stripped.index("payload[")
        caret = " " * (4 + col) + "~" * len("payload") + "^" * (len(f'["{fld.name}"]'))
        error = f"KeyError: '{fld.name}'"
        tb = outputs.traceback(frames, error)
        tb = tb.replace(f"    {stripped}\nKeyError", f"    {stripped}\n{caret}\nKeyError")
        check = sc.cli_check(project, cmd, command, tb, error, True)
        return sc.Attempt(check, path, line, new_line, {"field": fld.name, "default": default})

    main, near = attempt(f1), attempt(f2)
    values = {
        **{"cmd": cmd, "command": command, "count": count, "others": count - 1},
        **{"entity": e.name, "plural": e.plural, "f1": f1.name},
        "test_path": project.test_path(path),
    }
    return sc.finish(project, "key_error", values, main, near)


KWARGS = declarations("call_kwargs")
SAMPLE_VALUES: dict[str, str] = BUG_TABLES["sample_values"]


def with_param(def_line: str, param: str) -> str:
    cut = def_line.rfind(")")
    inner = def_line[def_line.index("(") + 1 : cut]
    return def_line[:cut] + (", " if inner.strip() else "") + param + def_line[cut:]


def type_kwarg(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    paths = [project.service_path(e) for e in project.entities] + [
        project.src("reports"),
        project.src("utils"),
    ]
    paths.sort(key=lambda p: p != hint)
    for path in paths:
        test_path = project.test_path(path)
        if not project.exists(test_path):
            continue
        source, tests = project.file(path), project.file(test_path)
        funcs = [
            f
            for f in source.funcs
            if not f.name.startswith("_")
            and source.text.count(f.def_line) == 1
            and ("." not in f.qual or f"def {snake(f.qual.split('.')[0])}(session)" in tests.text)
        ]
        if funcs:
            break
    else:
        return None
    func: Func = rng.choice(funcs)
    kws = [
        k
        for k in KWARGS
        if k[0] not in {p for p, _ in func.params}
        and f"test_{func.name}_accepts_{k[0]}" not in tests.tests
    ]
    if len(kws) < 2:
        return None
    chosen = rng.sample(kws, 2)
    fixture = snake(func.qual.split(".")[0]) if "." in func.qual else ""
    call = f"{fixture}.{func.name}" if fixture else func.name
    args = call_args(func, source.entity or project.main, rng, project.entities)
    names = [f"test_{func.name}_accepts_{kw}" for kw, _, _ in chosen]
    specs = [f"{kw}: {kind} = {default}" for kw, kind, default in chosen]
    for name, (kw, kind, _) in zip(names, chosen, strict=True):
        passed = ", ".join(
            a for a in (args, f"{kw}={SAMPLE_VALUES[kind.removesuffix(' | None')]}") if a
        )
        sc.add_user_test(tests, name, fixture, [f"{call}({passed})"])
    def1 = with_param(func.def_line, specs[0])
    def2 = with_param(def1, specs[1])

    def attempt(i: int, old: str, new: str, broad: bool) -> sc.Attempt:
        kw = chosen[i][0]
        error = f"TypeError: {func.qual}() got an unexpected keyword argument '{kw}'"
        fail = sc.failed_test(tests, names[i], error)

        def after() -> None:
            func.def_line = new
            func.params.append((kw, specs[i]))

        check = sc.pytest_check(project, rng, [fail], broad)
        return sc.Attempt(check, path, old, new, {"kw": kw}, after)

    main = attempt(0, func.def_line, def1, broad=False)
    near = attempt(1, def1, def2, broad=True)
    values = {"qual": func.qual, "func": func.name, "test": names[0], "test_path": test_path}
    values.update(k1=chosen[0][0], d1=chosen[0][2])
    return sc.finish(project, "type_kwarg", values, main, near)
