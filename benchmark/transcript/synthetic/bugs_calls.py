"""Bug scenarios about calls and payloads: missing keys, unexpected keyword arguments."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.bug_helpers import (
    cli_frames,
    pytest_output,
    sibling_of,
)
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Func, Project
from benchmark.transcript.synthetic.scenarios import (
    Problem,
    Scenario,
    add_user_test,
    cli_output,
    failure_section,
    func_source,
)
from benchmark.transcript.synthetic.testgen import call_args, snake
from benchmark.transcript.synthetic.topics import Decision
from benchmark.transcript.synthetic.writer import parse_expr


def with_default(expr: str, f_name: str, f_type: str) -> tuple[str, str]:
    default = {"int": "0", "float": "0.0", "bool": "False"}.get(f_type, '""')
    key = f'payload["{f_name}"]'
    return expr.replace(key, f'payload.get("{f_name}", {default})'), default


def key_error(project: Project, rng: random.Random, hint: str) -> Scenario | None:
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
    cli = project.file(project.src("cli"))
    creator = next(f for f in source.funcs if f.name == f"create_{e.name}")
    parse = next(f for f in source.funcs if f.name == f"parse_{e.name}_payload")
    count = rng.choice((480, 1250, 3400, 9800, 12000))

    def problem(fld, near: bool) -> Problem:
        line = f"        {fld.name}={parse_expr(fld)},"
        new_line, default = with_default(line, fld.name, fld.type)
        _, parse_line = func_source(source, parse, line.strip())
        _, create_line = func_source(source, creator, f"parse_{e.name}_payload(payload)")
        frames = cli_frames(project, cmd)
        frames.append(
            (
                f"{project.root}/{project.src('cli')}",
                cli.line_of(f"service.run_{cmd.replace('-', '_')}("),
                f"{cmd.replace('-', '_')}_command",
                f"changed = service.run_{cmd.replace('-', '_')}(started, dry_run=dry_run)",
            )
        )
        frames.append(
            (
                f"{project.root}/{path}",
                create_line,
                f"create_{e.name}",
                f"{e.name} = parse_{e.name}_payload(payload)",
            )
        )
        stripped = line.strip()
        frames.append((f"{project.root}/{path}", parse_line, f"parse_{e.name}_payload", stripped))
        col = stripped.index("payload[")
        caret = " " * (4 + col) + "~" * len("payload") + "^" * (len(f'["{fld.name}"]'))
        tb = outputs.traceback(frames, f"KeyError: '{fld.name}'")
        tb = tb.replace(f"    {stripped}\nKeyError", f"    {stripped}\n{caret}\nKeyError")
        return Problem(
            command=command,
            purpose=f"dry-run the {cmd} command",
            output=outputs.with_exit(tb, 1),
            error=f"KeyError: '{fld.name}'",
            error_type="KeyError",
            fix_path=path,
            old=line,
            new=new_line,
            change=f"parse_{e.name}_payload now defaults a missing `{fld.name}` to {default}",
            diagnosis=(
                f'`parse_{e.name}_payload` indexes `payload["{fld.name}"]` directly, and '
                f"{'another record in ' if near else ''}this {project.theme.vendor} export has "
                f"{e.plural} without the `{fld.name}` key."
            ),
            verify=command,
            verify_kind="cli",
            verify_note=cli_output(project, cmd, True),
        )

    return Scenario(
        kind="key_error",
        report=(
            f"`{cmd}` crashes on last night's {project.theme.vendor} export (about {count} "
            f"{e.plural}). Can you figure out why? The command I ran is `{command}`."
        ),
        target=path,
        related=[project.src("cli"), project.test_path(path)],
        sibling=sibling_of(project, path),
        grep=(f"parse_{e.name}_payload", "src"),
        main=problem(f1, False),
        near=problem(f2, True),
        decision=Decision(
            topic=f"missing `{f1.name}` in {project.theme.vendor} payloads",
            choice=f"defaulting a missing `{f1.name}` instead of rejecting the record",
            alternatives=(
                "failing the whole import",
                "validating every payload with a strict schema first",
            ),
            rationale=(
                f"{project.theme.vendor} omits optional fields from v2 payloads and one incomplete "
                f"{e.name} should not abort a batch of {count}"
            ),
            against=(
                f"failing the import would throw away the other {count - 1} {e.plural} in the batch"
            ),
        ),
        thing=f"the missing-`{f1.name}` fallback",
        behaviour=f"omitting `{f1.name}` from {e.plural}",
    )


KWARGS = (
    ("timeout", "float", "10.0"),
    ("strict", "bool", "False"),
    ("limit", "int", "100"),
    ("tz", "str", '"UTC"'),
    ("dry_run", "bool", "False"),
    ("batch_size", "int", "500"),
    ("currency", "str", '"EUR"'),
    ("retries", "int", "3"),
    ("include_archived", "bool", "False"),
)


def with_param(def_line: str, param: str) -> str:
    cut = def_line.rfind(")")
    inner = def_line[def_line.index("(") + 1 : cut]
    return def_line[:cut] + (", " if inner.strip() else "") + param + def_line[cut:]


def type_kwarg(project: Project, rng: random.Random, hint: str) -> Scenario | None:
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
    (k1, t1_, d1), (k2, t2_, d2) = rng.sample(kws, 2)
    fixture = snake(func.qual.split(".")[0]) if "." in func.qual else ""
    call = f"{fixture}.{func.name}" if fixture else func.name
    args = call_args(func, source.entity or project.main, rng, project.entities)
    value = {"float": "2.5", "bool": "True", "int": "25", "str": '"Europe/Lisbon"'}
    n1, n2 = f"test_{func.name}_accepts_{k1}", f"test_{func.name}_accepts_{k2}"
    body1 = [f"{call}({', '.join(a for a in (args, f'{k1}={value[t1_]}') if a)})"]
    body2 = [f"{call}({', '.join(a for a in (args, f'{k2}={value[t2_]}') if a)})"]
    def1 = with_param(func.def_line, f"{k1}: {t1_} = {d1}")
    def2 = with_param(def1, f"{k2}: {t2_} = {d2}")

    add_user_test(tests, n1, fixture, body1)
    add_user_test(tests, n2, fixture, body2)

    def problem(kw: str, name: str, body: list[str], old: str, new: str, broad: bool) -> Problem:
        node = f"{test_path}::{name}"
        error = f"TypeError: {func.qual}() got an unexpected keyword argument '{kw}'"
        lines = [f"def {name}({fixture}):", *(f"    {b}" for b in body)]
        loc = f"{test_path}:{tests.line_of(f'def {name}(') + 1}"
        fail = TestFailure(node, error, failure_section(lines, loc, error))
        command = f"pytest {test_path} -q" if broad else f"pytest {node} -q"

        def after() -> None:
            func.def_line = new
            spec = next(f"{k}: {t} = {d}" for k, t, d in KWARGS if k == kw)
            func.params.append((kw, spec))

        return Problem(
            command=command,
            purpose=f"run the new {kw} test",
            output=pytest_output(project, rng, test_path, [fail], only="" if broad else node),
            error=fail.line,
            error_type="TypeError",
            fix_path=path,
            old=old,
            new=new,
            change=f"added a `{kw}` keyword argument to {func.qual}",
            diagnosis=f"`{func.qual}` has no `{kw}` parameter yet; the new test passes one.",
            verify=command,
            verify_kind="pytest",
            verify_paths=[test_path],
            after=after,
        )

    module = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
    return Scenario(
        kind="type_kwarg",
        report=(
            f"The nightly job is going to call `{func.qual}` with `{k1}`, so I added a test for "
            f"it in {test_path} ({n1}). It fails right away. Can you add support?"
        ),
        target=path,
        related=[test_path, project.src("tasks")],
        sibling=sibling_of(project, path),
        grep=(f"{func.name}(", "src"),
        main=problem(k1, n1, body1, func.def_line, def1, broad=False),
        near=problem(k2, n2, body2, def1, def2, broad=True),
        decision=Decision(
            topic=f"how {func.qual} takes {k1}",
            choice=f"adding `{k1}` as a keyword argument with a default of {d1}",
            alternatives=(
                f"wrapping {func.name} with functools.partial at the call site",
                "reading the value from a module-level global",
            ),
            rationale=(
                "existing callers keep working unchanged and the nightly job can pass its own value"
            ),
            against=(
                "a partial at the call site would hide the option from every other caller of "
                f"{module}"
            ),
        ),
        thing=f"the `{k1}` option of {func.qual}",
        behaviour=f"needing a custom `{k1}` for nightly runs",
    )
