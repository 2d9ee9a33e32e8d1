"""Generated pytest modules for the fictional project.

Tests call what the module under test really defines (names and signatures
come from its recorded :class:`Func` list), so pytest output, tracebacks and
``read_file`` of a test agree with each other.
"""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.project import Func, Project, SourceFile
from benchmark.transcript.synthetic.python_source import Writer, literal
from benchmark.transcript.synthetic.vocab import Entity

ASPECTS = (
    "returns_expected_value",
    "handles_empty_input",
    "keeps_order",
    "uses_default",
    "is_stable_across_calls",
    "rejects_bad_input",
    "round_trips",
    "matches_fixture",
)


def build_test(project: Project, path: str, rng: random.Random) -> SourceFile:
    if path == "tests/conftest.py":
        return build_conftest(project, path, rng)
    if path == "tests/test_repositories.py":
        return _module_tests(project, path, rng, [project.repository_path(project.main)])
    stem = path.removeprefix("tests/test_").removesuffix(".py")
    for e in project.entities:
        if stem == f"{e.name}_service":
            return _module_tests(project, path, rng, [project.service_path(e)])
    return _module_tests(project, path, rng, [project.src(stem)])


def _test_header(w: Writer, doc: str, third: list[str], local: list[str]) -> None:
    """Docstring and imports of a test module; every one uses dates and pytest."""
    w.add(f'"""{doc}"""', "", "from __future__ import annotations", "")
    w.add("from datetime import date, datetime, timezone", "", "import pytest", *third, "")
    w.add(*local, "", "")


def build_conftest(project: Project, path: str, rng: random.Random) -> SourceFile:
    pkg = project.pkg
    w = Writer(path)
    _test_header(
        w,
        "Fixtures shared by every test module: an in-memory DB and sample records.",
        ["from sqlalchemy import create_engine", "from sqlalchemy.orm import sessionmaker"],
        [
            f"from {pkg}.config import Settings",
            f"from {pkg}.db import Base",
            f"from {pkg}.models import " + ", ".join(e.cls for e in project.entities),
        ],
    )
    create = '    engine = create_engine("sqlite:///:memory:")'
    w.anchors["engine_create"] = create
    w.add(
        "@pytest.fixture",
        "def engine():",
        create,
        "    Base.metadata.create_all(engine)",
        "    yield engine",
        "    engine.dispose()",
        "",
        "",
        "@pytest.fixture",
        "def session(engine):",
        "    factory = sessionmaker(bind=engine)",
        "    with factory() as session:",
        "        yield session",
        "",
        "",
        "@pytest.fixture",
        "def settings():",
        f'    return Settings(database_url="sqlite:///:memory:", '
        f'api_base_url="https://{project.vendor_host}/test")',
        "",
        "",
    )
    for e in project.entities:
        w.add(
            f"def make_{e.name}(**overrides) -> {e.cls}:",
            f'    """A valid {e.name}; tests override only the fields they care about."""',
            "    values = {",
            f'        "id": {rng.randint(1, 40)},',
        )
        for f in e.fields:
            w.add(f'        "{f.name}": {literal(f, rng)},')
        w.add("    }", "    values.update(overrides)", f"    return {e.cls}(**values)", "", "")
    return w.build()


def call_args(
    func: Func, entity: Entity | None, rng: random.Random, entities: tuple[Entity, ...] = ()
) -> str:
    args = []
    for name, spec in func.params:
        if "=" in spec or name.startswith("*"):
            continue
        ann = spec.split(":", 1)[1].strip() if ":" in spec else ""
        if ann == "int":
            args.append(str(rng.randint(1, 30)))
        elif ann == "float":
            args.append(f"{rng.randint(1, 90) / 10}")
        elif ann == "bool":
            args.append("True")
        elif ann == "str":
            args.append(f'"{rng.choice(("2024-03-01", "north-harbor", "alpha", "EUR"))}"')
        elif ann == "datetime":
            args.append("datetime(2024, 6, 1, tzinfo=timezone.utc)")
        elif ann.startswith("dict") and entity:
            pairs = ", ".join(f'"{f.name}": {literal(f, rng)}' for f in entity.fields[:3])
            args.append("{" + f'"id": {rng.randint(1, 9)}, ' + pairs + "}")
        elif (ann.startswith("list") or ann.startswith("Sequence")) and entity:
            inner = ann[ann.find("[") + 1 : -1]
            name = next((e.name for e in entities if e.cls == inner), entity.name)
            args.append(f"[make_{name}(), make_{name}(id={rng.randint(41, 90)})]")
        else:
            args.append(name)
    return ", ".join(args)


def _assertion(func: Func, rng: random.Random) -> list[str]:
    ret = func.ret
    if ret == "None":
        return ["assert result is None"]
    if ret == "int":
        return [f"assert result == {rng.randint(0, 12)}"]
    if ret == "float":
        return [f"assert result == pytest.approx({rng.randint(1, 500) / 10})"]
    if ret == "str":
        return ["assert isinstance(result, str)", "assert result"]
    if ret == "bool":
        return [f"assert result is {rng.choice(('True', 'False'))}"]
    if ret.startswith("list"):
        return [f"assert len(result) == {rng.randint(0, 3)}"]
    if ret.startswith("dict"):
        return ["assert isinstance(result, dict)", f"assert len(result) >= {rng.randint(0, 2)}"]
    if ret.startswith("tuple"):
        return ["first, second = result", "assert first", "assert second"]
    return ["assert result"]


def _module_tests(
    project: Project, path: str, rng: random.Random, targets: list[str]
) -> SourceFile:
    pkg = project.pkg
    module = project.file(targets[0])
    mod_name = targets[0].removeprefix("src/").removesuffix(".py").replace("/", ".")
    entity = module.entity or project.main
    public = [f for f in module.funcs if not f.name.startswith("_")][:7]
    w = Writer(path)
    star = f"from {mod_name} import *  # noqa: F403 - the module's public surface"
    makers = "from tests.conftest import " + ", ".join(f"make_{e.name}" for e in project.entities)
    _test_header(w, f"Tests for {mod_name}.", [], [star, makers])
    tests: list[str] = []
    owner_fixture = ""
    owners = [f.qual.split(".")[0] for f in public if "." in f.qual]
    if owners:
        owner = owners[0]
        owner_fixture = snake(owner)
        construct = f"{owner}(session)"
        if owner.endswith("Service") and project.exists(project.repository_path(entity)):
            construct = f"{owner}({entity.cls}Repository(session))"
            w.out.insert(
                w.out.index("import pytest") + 2,
                f"from {pkg}.repositories.{entity.name}_repository import {entity.cls}Repository",
            )
        w.add(
            "@pytest.fixture", f"def {owner_fixture}(session):", f"    return {construct}", "", ""
        )
    for func in public:
        aspects = rng.sample(ASPECTS, rng.choice((1, 2)))
        for aspect in aspects:
            name = f"test_{func.name}_{aspect}"
            params = [owner_fixture] if "." in func.qual and owner_fixture else []
            call = f"{owner_fixture}.{func.name}" if params else func.name
            body = [
                f"result = {call}({call_args(func, entity, rng, project.entities)})",
                *_assertion(func, rng),
            ]
            if aspect == "rejects_bad_input":
                bad_args = ", ".join(
                    a for a in (call_args(func, entity, rng, project.entities), "strict=True") if a
                )
                body = ["with pytest.raises((ValueError, TypeError)):", f"    {call}({bad_args})"]
            if rng.random() < 0.18 and not params:
                values = ", ".join(str(rng.randint(1, 9)) for _ in range(3))
                w.add(f'@pytest.mark.parametrize("size", [{values}])')
                params.append("size")
                body.insert(0, "assert size > 0")
                ids = [f"{name}[{v.strip()}]" for v in values.split(",")]
            else:
                ids = [name]
            w.add(f"def {name}({', '.join(params)}):")
            w.add(*(f"    {line}" for line in body))
            w.blank(2)
            tests.extend(ids)
    return w.build(entity=entity, tests=tests)


def snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
