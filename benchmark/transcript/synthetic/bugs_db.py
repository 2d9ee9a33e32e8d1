"""Bug scenarios about persistence and typing: tables, duplicates, mypy, schemas."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.project import Project, SourceFile
from benchmark.transcript.synthetic.python_source import CODE_FIELDS, string_value
from benchmark.transcript.synthetic.testgen import snake
from benchmark.transcript.synthetic.vocab import Entity, Field


def no_table(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    conftest, test_path = project.file("tests/conftest.py"), "tests/test_repositories.py"
    anchor = conftest.anchors["engine_create"]
    setup = f"{anchor}\n    Base.metadata.create_all(engine)\n"
    base_import = f"from {project.pkg}.db import Base\n"
    if conftest.text.count(setup) != 1 or base_import not in conftest.text:
        return None
    # The developer's refactor: a bare engine per test, the schema setup dropped.
    conftest.text = conftest.text.replace(setup, f"{anchor}\n", 1).replace(base_import, "", 1)
    tests = project.file(test_path)
    plural = project.main.plural
    error = f"sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: {plural}"
    first = {
        "inner": (
            ["        cursor.execute(statement, parameters)"],
            f"{outputs.site_packages(project)}/sqlalchemy/engine/default.py:941",
        ),
        "extra_e": (
            f"[SQL: SELECT {plural}.id FROM {plural} WHERE {plural}.id = ?]",
            "(Background on this error at: https://sqlalche.me/e/20/e3q8)",
        ),
    }
    failures = []
    for i, test_id in enumerate(tests.tests):
        lines = sc.function_lines(tests, test_id.split("[")[0])
        at = next((k for k, line in enumerate(lines) if "_repository." in line), len(lines) - 1)
        failures.append(sc.failed_test(tests, test_id, error, at, **({} if i else first)))
    new = (
        f"{anchor}\n    from {project.pkg}.db import Base  # imported here: db pulls in "
        "settings\n\n"
        "    Base.metadata.create_all(engine)"
    )
    check = sc.pytest_check(project, rng, failures, True, error=error)
    main = sc.Attempt(check, "tests/conftest.py", anchor, new)
    return sc.finish(project, "no_table", {"test_path": test_path}, main, None)


def integrity(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    e = project.main
    path = project.repository_path(e)
    if (
        not project.exists(path)
        or "create_all(engine)" not in project.file("tests/conftest.py").text
    ):
        return None
    source, test_path = project.file(path), "tests/test_repositories.py"
    tests = project.file(test_path)
    add = next(f for f in source.funcs if f.name == "add")
    if source.text.count(add.head) != 1 or "existing = self._session" in source.text:
        return None
    fields = [
        f for f in e.fields if f.type == "str" and (f.name in CODE_FIELDS or "email" in f.name)
    ]
    fields = fields or [f for f in e.fields if f.type == "str"]
    if not fields:
        return None
    f = fields[0]
    fixture = snake(f"{e.cls}Repository")
    value = string_value(f, rng)
    name = f"test_add_is_idempotent_for_duplicate_{f.name}"
    body = [f'{fixture}.add(make_{e.name}(id={i}, {f.name}="{value}"))' for i in (1, 2)]
    body.append(f"assert {fixture}.count() == 1")
    sc.add_user_test(tests, name, fixture, body)
    error = (
        "sqlalchemy.exc.IntegrityError: (sqlite3.IntegrityError) "
        f"UNIQUE constraint failed: {e.plural}.{f.name}"
    )
    src, line = sc.func_source(source, add, "self._session.flush()")
    insert = f"[SQL: INSERT INTO {e.plural} (id, {f.name}) VALUES (?, ?)]"
    fail = sc.failed_test(tests, name, error, 2, inner=(src, f"{path}:{line}"), extra_e=(insert,))
    guard = (
        f"{add.head}\n        existing = self._session.scalar(\n"
        f"            select({e.cls}Row).where({e.cls}Row.{f.name} == {e.name}.{f.name})\n"
        "        )\n        if existing:\n            return existing.id"
    )
    check = sc.pytest_check(project, rng, [fail], False, verify_all=True, error=error)
    values = {"field": f.name, "test": name, "test_path": test_path}
    return sc.finish(project, "integrity", values, sc.Attempt(check, path, add.head, guard), None)


def mypy_union(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    ents = [e for e in project.entities if project.exists(project.repository_path(e))]
    ents.sort(key=lambda e: e.name != hint)
    usable = []
    for e in ents:
        source = project.file(project.service_path(e))
        guard = (
            f"        found = {e.name} is not None\n        if not found:\n"
            f"            raise {e.cls}NotFoundError({e.name}_id)"
        )
        if source.text.count(guard) == 1:
            usable.append((e, source, guard))
    if not usable:
        return None
    checked = sum(1 for p in project.planned if p.startswith("src/") and p.endswith(".py"))
    everything = f"mypy src/{project.pkg}"

    def attempt(e: Entity, source: SourceFile, guard: str, broad: bool) -> sc.Attempt:
        path = project.service_path(e)
        line = source.line_of(guard) + 3
        error = (
            f'{path}:{line}: error: Incompatible return value type (got "{e.cls} | None", '
            f'expected "{e.cls}")  [return-value]'
        )
        output = outputs.mypy_output([error], checked if broad else 1)
        check = sc.Check(everything if broad else f"mypy {path}", output, error, everything, "mypy")
        new = guard.replace(
            f"found = {e.name} is not None\n        if not found:", f"if {e.name} is None:"
        )
        return sc.Attempt(check, path, guard, new, {"entity": e.name, "cls": e.cls})

    main = attempt(*usable[0], False)
    near = attempt(*usable[1], True) if len(usable) > 1 else None
    e = usable[0][0]
    return sc.finish(project, "mypy_union", {"entity": e.name, "cls": e.cls}, main, near)


def schema_422(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
    path, test_path = project.src("schemas"), "tests/test_api.py"
    source, tests = project.file(path), project.file(test_path)
    ents = sorted(project.entities[:3], key=lambda e: e.name != hint)
    for e in ents:
        header = f"class {e.cls}Create(BaseModel):"
        block = source.text[source.text.index(header) :].split("\n\n\n", 1)[0]
        fields = [
            f
            for f in e.fields
            if f.type in ("str", "int", "float", "bool")
            and f"\n    {f.name}: {f.type}\n" in block + "\n"
        ]
        if len(fields) >= 2:
            break
    else:
        return None
    f1, f2 = rng.sample(fields, 2)
    names = [f"test_create_{e.name}_without_{f.name}_returns_201" for f in (f1, f2)]
    for f, name in zip((f1, f2), names, strict=True):
        sc.add_user_test(
            tests,
            name,
            "client",
            [
                f"payload = make_{e.name}().to_dict()",
                f'del payload["{f.name}"]',
                f'response = client.post("/{e.plural}", json=payload)',
                "assert response.status_code == 201",
            ],
        )
    defaults = {"str": " | None = None", "int": " = 0", "float": " = 0.0", "bool": " = False"}
    text_after = source.text
    where = " +  where 422 = <Response [422 Unprocessable Entity]>.status_code"

    def attempt(f: Field, name: str, broad: bool) -> sc.Attempt:
        nonlocal text_after
        start = text_after.index(header)
        declared = f"\n    {f.name}: {f.type}"
        end = text_after.index(declared, start) + len(declared)
        old = text_after[start:end]
        new = old + defaults[f.type]
        text_after = text_after.replace(old, new, 1)
        fail = sc.failed_test(tests, name, "assert 422 == 201", extra_e=(where,))
        return sc.Attempt(
            sc.pytest_check(project, rng, [fail], broad), path, old, new, {"field": f.name}
        )

    main = attempt(f1, names[0], False)
    near = attempt(f2, names[1], True)
    values = {"entity": e.name, "plural": e.plural, "cls": e.cls, "f1": f1.name}
    values.update(test=names[0], test_path=test_path)
    return sc.finish(project, "schema_422", values, main, near)
