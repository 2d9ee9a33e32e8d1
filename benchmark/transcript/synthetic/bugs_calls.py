"""Bug scenarios about calls and payloads: missing keys, unexpected keyword arguments."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import BUG_TABLES, cli_frames, declarations
from benchmark.transcript.synthetic.project import Func, Project
from benchmark.transcript.synthetic.python_source import parse_expr
from benchmark.transcript.synthetic.testgen import call_args, snake
from benchmark.transcript.synthetic.vocab import Field

KEY_ERROR = resources.Wording("bug_code.yaml", "key_error")
KWARG = resources.Wording("bug_code.yaml", "type_kwarg")


def with_default(expr: str, f_name: str, f_type: str) -> tuple[str, str]:
    kind = f_type if f_type in ("int", "float", "bool") else "str"
    default = KEY_ERROR(f"default_{kind}")
    key = KEY_ERROR("key", field=f_name)
    return expr.replace(key, KEY_ERROR("get", field=f_name, default=default)), default


def key_error(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    ents = sorted(project.entities, key=lambda e: e.name != hint)
    for e in ents:
        path = project.service_path(e)
        source = project.file(path)
        fields = [
            f
            for f in e.fields
            if f.type in ("str", "int", "float", "bool")
            and source.text.count(KEY_ERROR("read", field=f.name, parse=parse_expr(f))) == 1
            and KEY_ERROR("error", field=f.name) not in project.taken_errors
        ]
        if len(fields) >= 2:
            break
    else:
        return None
    f1, f2 = rng.sample(fields, 2)
    cmd = rng.choice(project.theme.commands)
    month = rng.randint(1, 12)
    since = KEY_ERROR("since", month=month, day=rng.randint(1, 28))
    command = KEY_ERROR("command", pkg=project.pkg, cmd=cmd, since=since)
    creator_name, parser_name = (KEY_ERROR(k, entity=e.name) for k in ("creator", "parser"))
    creator = next(f for f in source.funcs if f.name == creator_name)
    parse = next(f for f in source.funcs if f.name == parser_name)
    count = rng.choice((480, 1250, 3400, 9800, 12000))
    here = f"{project.root}/{path}"

    def attempt(fld: Field) -> sc.Attempt:
        line = KEY_ERROR("read", field=fld.name, parse=parse_expr(fld))
        stripped = line.strip()
        new_line, default = with_default(line, fld.name, fld.type)
        _, parse_line = sc.func_source(source, parse, stripped)
        call = KEY_ERROR("call", entity=e.name)
        _, create_line = sc.func_source(source, creator, call)
        frames = cli_frames(project, cmd, run=True)
        assigned = KEY_ERROR("assigned", entity=e.name, call=call)
        frames.append((here, create_line, creator_name, assigned))
        frames.append((here, parse_line, parser_name, stripped))
        subscript = KEY_ERROR("subscript")
        col = stripped.index(subscript)
        key = KEY_ERROR("key", field=fld.name)
        caret = " " * (4 + col) + "~" * (len(subscript) - 1) + "^" * (len(key) - len(subscript) + 1)
        error = KEY_ERROR("error", field=fld.name)
        tb = outputs.traceback(frames, error)
        end = KEY_ERROR("frame_end", line=stripped)
        tb = tb.replace(end, KEY_ERROR("frame_caret", line=stripped, caret=caret))
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
            and (
                "." not in f.qual
                or KWARG("fixture_def", fixture=snake(f.qual.split(".")[0])) in tests.text
            )
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
        and KWARG("test_name", func=func.name, kw=k[0]) not in tests.tests
    ]
    if len(kws) < 2:
        return None
    chosen = rng.sample(kws, 2)
    fixture = snake(func.qual.split(".")[0]) if "." in func.qual else ""
    call = KWARG("method", fixture=fixture, func=func.name) if fixture else func.name
    args = call_args(func, source.entity or project.main, rng, project.entities)
    names = [KWARG("test_name", func=func.name, kw=kw) for kw, _, _ in chosen]
    specs = [KWARG("spec", kw=kw, kind=kind, default=default) for kw, kind, default in chosen]
    for name, (kw, kind, _) in zip(names, chosen, strict=True):
        keyword = KWARG("keyword", kw=kw, value=SAMPLE_VALUES[kind.removesuffix(" | None")])
        passed = ", ".join(a for a in (args, keyword) if a)
        sc.add_user_test(tests, name, fixture, [KWARG("call", call=call, args=passed)])
    def1 = with_param(func.def_line, specs[0])
    def2 = with_param(def1, specs[1])

    def attempt(i: int, old: str, new: str, broad: bool) -> sc.Attempt:
        kw = chosen[i][0]
        error = KWARG("error", qual=func.qual, kw=kw)
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
