"""Bug scenarios about persistence and typing: tables, duplicates, mypy, schemas."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.project import Project, SourceFile
from benchmark.transcript.synthetic.python_source import CODE_FIELDS, string_value
from benchmark.transcript.synthetic.testgen import snake
from benchmark.transcript.synthetic.vocab import Entity, Field

NO_TABLE = resources.Wording("bug_code.yaml", "no_table")
INTEGRITY = resources.Wording("bug_code.yaml", "integrity")
MYPY = resources.Wording("bug_code.yaml", "mypy_union")
SCHEMA = resources.Wording("bug_code.yaml", "schema_422")


def no_table(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    conftest, test_path = project.file("tests/conftest.py"), NO_TABLE("test_path")
    anchor = conftest.anchors["engine_create"]
    setup = NO_TABLE("setup", anchor=anchor)
    base_import = NO_TABLE("base_import", pkg=project.pkg)
    if conftest.text.count(setup) != 1 or base_import not in conftest.text:
        return None
    # The developer's refactor: a bare engine per test, the schema setup dropped.
    bare = NO_TABLE("bare", anchor=anchor)
    conftest.text = conftest.text.replace(setup, bare, 1).replace(base_import, "", 1)
    tests = project.file(test_path)
    plural = project.main.plural
    error = NO_TABLE("error", plural=plural)
    driver_at = NO_TABLE("driver_at", site=outputs.site_packages(project))
    first = {
        "inner": ([NO_TABLE("driver_line")], driver_at),
        "extra_e": (NO_TABLE("sql", plural=plural), NO_TABLE("background")),
    }
    failures = []
    for i, test_id in enumerate(tests.tests):
        lines = sc.function_lines(tests, test_id.split("[")[0])
        call = NO_TABLE("call")
        at = next((k for k, line in enumerate(lines) if call in line), len(lines) - 1)
        failures.append(sc.failed_test(tests, test_id, error, at, **({} if i else first)))
    new = NO_TABLE("fix", anchor=anchor, pkg=project.pkg)
    check = sc.pytest_check(project, rng, failures, True, error=error)
    main = sc.Attempt(check, "tests/conftest.py", anchor, new)
    return sc.finish(project, "no_table", {"test_path": test_path}, main, None)


def integrity(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    e = project.main
    path = project.repository_path(e)
    if (
        not project.exists(path)
        or INTEGRITY("schema_setup") not in project.file("tests/conftest.py").text
    ):
        return None
    source, test_path = project.file(path), INTEGRITY("test_path")
    tests = project.file(test_path)
    add = next(f for f in source.funcs if f.name == "add")
    if source.text.count(add.head) != 1 or INTEGRITY("guarded") in source.text:
        return None
    fields = [
        f for f in e.fields if f.type == "str" and (f.name in CODE_FIELDS or "email" in f.name)
    ]
    fields = fields or [f for f in e.fields if f.type == "str"]
    if not fields:
        return None
    f = fields[0]
    fixture = snake(INTEGRITY("fixture", cls=e.cls))
    value = string_value(f, rng)
    w = {"entity": e.name, "cls": e.cls, "plural": e.plural, "field": f.name}
    name = INTEGRITY("test_name", **w)
    made = [INTEGRITY("add", i=i, value=value, **w) for i in (1, 2)]
    body = [INTEGRITY("add_call", fixture=fixture, made=m) for m in made]
    body.append(INTEGRITY("count", fixture=fixture))
    sc.add_user_test(tests, name, fixture, body)
    error = INTEGRITY("error", **w)
    src, line = sc.func_source(source, add, INTEGRITY("flush"))
    insert = INTEGRITY("insert", **w)
    fail = sc.failed_test(tests, name, error, 2, inner=(src, f"{path}:{line}"), extra_e=(insert,))
    guard = INTEGRITY("guard", head=add.head, **w)
    check = sc.pytest_check(project, rng, [fail], False, verify_all=True, error=error)
    values = {"field": f.name, "test": name, "test_path": test_path}
    return sc.finish(project, "integrity", values, sc.Attempt(check, path, add.head, guard), None)


def mypy_union(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    ents = [e for e in project.entities if project.exists(project.repository_path(e))]
    ents.sort(key=lambda e: e.name != hint)
    usable = []
    for e in ents:
        source = project.file(project.service_path(e))
        guard = MYPY("guard", entity=e.name, cls=e.cls)
        if source.text.count(guard) == 1:
            usable.append((e, source, guard))
    if not usable:
        return None
    checked = sum(1 for p in project.planned if p.startswith("src/") and p.endswith(".py"))
    everything = MYPY("everything", pkg=project.pkg)

    def attempt(e: Entity, source: SourceFile, guard: str, broad: bool) -> sc.Attempt:
        path = project.service_path(e)
        line = source.line_of(guard) + 3
        error = MYPY("error", path=path, line=line, cls=e.cls)
        output = outputs.mypy_output([error], checked if broad else 1)
        command = everything if broad else MYPY("one", path=path)
        check = sc.Check(command, output, error, everything, "mypy")
        old_check, new_check = (MYPY(k, entity=e.name) for k in ("check", "fixed"))
        new = guard.replace(old_check, new_check)
        return sc.Attempt(check, path, guard, new, {"entity": e.name, "cls": e.cls})

    main = attempt(*usable[0], False)
    near = attempt(*usable[1], True) if len(usable) > 1 else None
    e = usable[0][0]
    return sc.finish(project, "mypy_union", {"entity": e.name, "cls": e.cls}, main, near)


def schema_422(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path, test_path = project.src("schemas"), SCHEMA("test_path")
    source, tests = project.file(path), project.file(test_path)
    ents = sorted(project.entities[:3], key=lambda e: e.name != hint)
    for e in ents:
        header = SCHEMA("header", cls=e.cls)
        block = source.text[source.text.index(header) :].split("\n\n\n", 1)[0]
        fields = [
            f
            for f in e.fields
            if f.type in ("str", "int", "float", "bool")
            and SCHEMA("declared", field=f.name, type=f.type) + "\n" in block + "\n"
        ]
        if len(fields) >= 2:
            break
    else:
        return None
    f1, f2 = rng.sample(fields, 2)
    names = [SCHEMA("test_name", entity=e.name, field=f.name) for f in (f1, f2)]
    for f, name in zip((f1, f2), names, strict=True):
        body = SCHEMA("body", entity=e.name, field=f.name, plural=e.plural).splitlines()
        sc.add_user_test(tests, name, SCHEMA("fixture"), body)
    text_after = source.text
    where = SCHEMA("where")

    def attempt(f: Field, name: str, broad: bool) -> sc.Attempt:
        nonlocal text_after
        start = text_after.index(header)
        declared = SCHEMA("declared", field=f.name, type=f.type)
        end = text_after.index(declared, start) + len(declared)
        old = text_after[start:end]
        new = old + SCHEMA(f"default_{f.type}")
        text_after = text_after.replace(old, new, 1)
        fail = sc.failed_test(tests, name, SCHEMA("failure"), extra_e=(where,))
        return sc.Attempt(
            sc.pytest_check(project, rng, [fail], broad), path, old, new, {"field": f.name}
        )

    main = attempt(f1, names[0], False)
    near = attempt(f2, names[1], True)
    values = {"entity": e.name, "plural": e.plural, "cls": e.cls, "f1": f1.name}
    values.update(test=names[0], test_path=test_path)
    return sc.finish(project, "schema_422", values, main, near)
