"""Bug scenarios about persistence and typing: tables, duplicates, mypy, schemas."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.bug_helpers import (
    function_lines,
    pytest_output,
)
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Project, SourceFile
from benchmark.transcript.synthetic.scenarios import (
    Problem,
    Scenario,
    add_user_test,
    failure_section,
    func_source,
)
from benchmark.transcript.synthetic.testgen import snake
from benchmark.transcript.synthetic.topics import Decision
from benchmark.transcript.synthetic.writer import CODE_FIELDS, string_value


def no_table(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    conftest, test_path = project.file("tests/conftest.py"), "tests/test_repositories.py"
    anchor = conftest.anchors["engine_create"]
    setup = f"{anchor}\n    Base.metadata.create_all(engine)\n"
    base_import = f"from {project.pkg}.db import Base\n"
    if conftest.text.count(setup) != 1 or base_import not in conftest.text:
        return None
    # The developer's refactor: a bare engine per test, the schema setup dropped.
    conftest.text = conftest.text.replace(setup, f"{anchor}\n", 1).replace(base_import, "", 1)
    tests = project.file(test_path)
    e = project.main
    site = outputs.site_packages(project)
    error = f"sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: {e.plural}"
    failures = []
    for i, test_id in enumerate(tests.tests):
        lines = function_lines(tests, test_id.split("[")[0])
        at = next((k for k, line in enumerate(lines) if "_repository." in line), len(lines) - 1)
        loc = f"{test_path}:{tests.line_of(lines[at])}"
        if i == 0:
            section = failure_section(
                lines,
                loc,
                error,
                fail_at=at,
                inner=(
                    ["        cursor.execute(statement, parameters)"],
                    f"{site}/sqlalchemy/engine/default.py:941",
                ),
                extra_e=(
                    f"[SQL: SELECT {e.plural}.id FROM {e.plural} WHERE {e.plural}.id = ?]",
                    "(Background on this error at: https://sqlalche.me/e/20/e3q8)",
                ),
            )
        else:
            section = failure_section(lines, loc, error, fail_at=at)
        failures.append(TestFailure(f"{test_path}::{test_id}", error, section))
    output = pytest_output(project, rng, test_path, failures)
    new = (
        f"{anchor}\n    from {project.pkg}.db import Base  # imported here: db pulls in "
        "settings\n\n"
        "    Base.metadata.create_all(engine)"
    )
    main = Problem(
        command=f"pytest {test_path} -q",
        purpose="run the repository tests",
        output=output,
        error=error,
        error_type="OperationalError",
        fix_path="tests/conftest.py",
        old=anchor,
        new=new,
        change="the engine fixture now creates all tables with Base.metadata.create_all",
        diagnosis=(
            f"Every test in {test_path} fails the same way: the in-memory engine from "
            "tests/conftest.py starts empty and nothing creates the tables."
        ),
        verify=f"pytest {test_path} -q",
        verify_kind="pytest",
        verify_paths=[test_path],
    )
    return Scenario(
        kind="no_table",
        report=(
            f"{project.developer} says {test_path} went red after the fixtures switched to a "
            "fresh in-memory engine per test. Can you get it green again?"
        ),
        target="tests/conftest.py",
        related=[test_path, project.src("db")],
        sibling=project.src("db_utils"),
        grep=("create_engine", "tests"),
        main=main,
        near=None,
        decision=Decision(
            topic="how test databases get their schema",
            choice="creating the tables in the `engine` fixture",
            alternatives=(
                "running the Alembic migrations before every test",
                "a shared file-based SQLite database",
            ),
            rationale=(
                "an in-memory database per test keeps the suite fast and isolated, and the "
                "models are the schema source in tests"
            ),
            against="running migrations for every test would add seconds to each one",
        ),
        thing="the table setup in the engine fixture",
        behaviour="switching fixtures again",
    )


def integrity(project: Project, rng: random.Random, hint: str) -> Scenario | None:
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
    add_user_test(
        tests,
        name,
        fixture,
        [
            f'{fixture}.add(make_{e.name}(id=1, {f.name}="{value}"))',
            f'{fixture}.add(make_{e.name}(id=2, {f.name}="{value}"))',
            f"assert {fixture}.count() == 1",
        ],
    )
    error = (
        "sqlalchemy.exc.IntegrityError: (sqlite3.IntegrityError) "
        f"UNIQUE constraint failed: {e.plural}.{f.name}"
    )
    lines = function_lines(tests, name)
    src, line = func_source(source, add, "self._session.flush()")
    node = f"{test_path}::{name}"
    fail = TestFailure(
        node,
        error,
        failure_section(
            lines[:3],
            f"{test_path}:{tests.line_of(lines[2])}",
            error,
            inner=(src, f"{path}:{line}"),
            extra_e=(f"[SQL: INSERT INTO {e.plural} (id, {f.name}) VALUES (?, ?)]",),
        ),
    )
    guard = (
        f"{add.head}\n        existing = self._session.scalar(\n"
        f"            select({e.cls}Row).where({e.cls}Row.{f.name} == {e.name}.{f.name})\n"
        "        )\n        if existing:\n            return existing.id"
    )
    main = Problem(
        command=f"pytest {node} -q",
        purpose="run the duplicate delivery test",
        output=pytest_output(project, rng, test_path, [fail], only=node),
        error=error,
        error_type="IntegrityError",
        fix_path=path,
        old=add.head,
        new=guard,
        change=f"{e.cls}Repository.add returns the existing row for a duplicate {f.name}",
        diagnosis=(
            f"The second insert with the same `{f.name}` violates the unique index on {e.plural}."
        ),
        verify=f"pytest {test_path} -q",
        verify_kind="pytest",
        verify_paths=[test_path],
    )
    vendor = project.theme.vendor
    return Scenario(
        kind="integrity",
        report=(
            f"{vendor} retries webhook deliveries, and the second delivery of a {e.name} fails "
            f"with an IntegrityError. I added {name} to {test_path}."
        ),
        target=path,
        related=[test_path, project.src("db")],
        sibling=project.service_path(e),
        grep=(f"{e.cls}Row.from_model", "src"),
        main=main,
        near=None,
        decision=Decision(
            topic=f"duplicate {vendor} deliveries",
            choice=f"making `add` idempotent on `{f.name}`",
            alternatives=(
                "catching IntegrityError in the webhook handler",
                "deleting duplicates in a nightly job",
            ),
            rationale=(
                f"{vendor} retries deliveries by design, so a duplicate is expected rather than "
                "exceptional"
            ),
            against=(
                "catching IntegrityError leaves the session in a failed state and hides real "
                "constraint bugs"
            ),
        ),
        thing=f"idempotent {e.name} inserts",
        behaviour="retrying webhook deliveries",
    )


def mypy_union(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    ents = [e for e in project.entities if project.exists(project.repository_path(e))]
    ents.sort(key=lambda e: e.name != hint)
    usable = []
    for e in ents:
        source = project.file(project.service_path(e))
        guard = f"        if not {e.name}:\n            raise {e.cls}NotFoundError({e.name}_id)"
        if source.text.count(guard) == 1:
            usable.append((e, source, guard))
    if not usable:
        return None
    checked = sum(1 for p in project.planned if p.startswith("src/") and p.endswith(".py"))

    def problem(e, source: SourceFile, guard: str, broad: bool) -> Problem:
        path = project.service_path(e)
        line = source.line_of(guard) + 2
        error = (
            f'{path}:{line}: error: Incompatible return value type (got "{e.cls} | Literal[True]", '
            f'expected "{e.cls}")  [return-value]'
        )
        command = f"mypy src/{project.pkg}" if broad else f"mypy {path}"
        return Problem(
            command=command,
            purpose="type-check the services",
            output=outputs.mypy_output([error], checked if broad else 1),
            error=error,
            error_type="return-value",
            fix_path=path,
            old=guard,
            new=guard.replace(f"if not {e.name}:", f"if not isinstance({e.name}, {e.cls}):"),
            change=f"get_{e.name} narrows the repository result with isinstance",
            diagnosis=(
                f"{e.cls}Repository.get returns `{e.cls} | bool`; `if not {e.name}` only rules "
                "out False, so mypy still sees `Literal[True]` in the return."
            ),
            verify=f"mypy src/{project.pkg}",
            verify_kind="mypy",
        )

    e, source, guard = usable[0]
    main = problem(e, source, guard, False)
    near = problem(*usable[1], True) if len(usable) > 1 else None
    return Scenario(
        kind="mypy_union",
        report=(
            f"mypy is now part of CI and it complains about {project.service_path(e)}. Can you "
            "sort it out without sprinkling `type: ignore`?"
        ),
        target=project.service_path(e),
        related=[project.repository_path(e)],
        sibling=project.repository_path(e),
        grep=(f"def get(self, {e.name}_id", "src"),
        main=main,
        near=near,
        decision=Decision(
            topic="typing of repository lookups",
            choice="narrowing with isinstance in the service",
            alternatives=("changing the repository to raise", "a typing.cast in get"),
            rationale=(
                "the repository contract (False for a missing row) is used by the importers too"
            ),
            against=(
                "changing the repository would touch every importer that relies on the False return"
            ),
        ),
        thing="the mypy cleanup in the services",
        behaviour="adding mypy to CI",
    )


def schema_422(project: Project, rng: random.Random, hint: str) -> Scenario | None:
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
        add_user_test(
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
    defaults = {"str": '""', "int": "0", "float": "0.0", "bool": "False"}
    text_after = source.text

    def problem(f, name: str, broad: bool) -> Problem:
        nonlocal text_after
        start = text_after.index(header)
        end = text_after.index(f"\n    {f.name}: {f.type}", start) + len(
            f"\n    {f.name}: {f.type}"
        )
        old = text_after[start:end]
        new = old + f" = {defaults[f.type]}"
        text_after = text_after.replace(old, new, 1)
        node = f"{test_path}::{name}"
        lines = function_lines(tests, name)
        fail = TestFailure(
            node,
            "assert 422 == 201",
            failure_section(
                lines,
                f"{test_path}:{tests.line_of(lines[-1])}",
                "assert 422 == 201",
                extra_e=(" +  where 422 = <Response [422 Unprocessable Entity]>.status_code",),
            ),
        )
        command = f"pytest {test_path} -q" if broad else f"pytest {node} -q"
        return Problem(
            command=command,
            purpose=f"run the POST /{e.plural} test",
            output=pytest_output(project, rng, test_path, [fail], only="" if broad else node),
            error=fail.line,
            error_type="AssertionError",
            fix_path=path,
            old=old,
            new=new,
            change=f"gave `{f.name}` a default in {e.cls}Create",
            diagnosis=(
                f"{e.cls}Create declares `{f.name}` without a default, so pydantic rejects the "
                "request with 422."
            ),
            verify=command,
            verify_kind="pytest",
            verify_paths=[test_path],
        )

    main = problem(f1, names[0], False)
    near = problem(f2, names[1], True)
    return Scenario(
        kind="schema_422",
        report=(
            f"POST /{e.plural} returns 422 for the mobile app since it stopped sending "
            f"`{f1.name}`. I added {names[0]} to {test_path}."
        ),
        target=path,
        related=[test_path, project.src("api")],
        sibling=project.src("models"),
        grep=(f"{e.cls}Create", "src"),
        main=main,
        near=near,
        decision=Decision(
            topic=f"optional fields in {e.cls}Create",
            choice=f"giving `{f1.name}` a default in {e.cls}Create",
            alternatives=(
                "requiring the mobile app to send it",
                "a custom validator that fills it in",
            ),
            rationale=(
                "older app versions omit it and we can't force an update before the "
                f"{project.theme.milestone} release"
            ),
            against="most users take weeks to update the app, so the 422s would continue meanwhile",
        ),
        thing=f"the `{f1.name}` default in {e.cls}Create",
        behaviour=f"omitting `{f1.name}` in the app",
    )
