"""Generated pytest modules for the fictional project.

Tests call what the module under test really defines (names and signatures
come from its recorded :class:`Func` list), so pytest output, tracebacks and
``read_file`` of a test agree with each other.
"""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Func, Project, SourceFile
from benchmark.transcript.synthetic.python_source import Writer, literal
from benchmark.transcript.synthetic.vocab import Entity

_T: dict = resources.yaml_data("testgen.yaml")
_REPOSITORY_IMPORT: str = resources.yaml_data("code_domain.yaml")["service_repo_import"]
ASPECTS: tuple[str, ...] = tuple(_T["aspects"])


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


def _test_header(w: Writer, doc: str, third: str, local: str) -> None:
    """Docstring and imports of a test module; every one uses dates and pytest."""
    w.snippet(_T["head"], record=False, doc=doc, third=third, local=local)
    w.blank(2)


def build_conftest(project: Project, path: str, rng: random.Random) -> SourceFile:
    w = Writer(path)
    models = ", ".join(e.cls for e in project.entities)
    local = _T["conftest_local"].format(pkg=project.pkg, models=models)
    _test_header(w, _T["conftest_doc"], _T["conftest_third"], local)
    w.anchors["engine_create"] = _T["engine_create"]
    w.snippet(
        _T["conftest"],
        record=False,
        engine_create=_T["engine_create"],
        vendor_host=project.vendor_host,
    )
    w.blank(2)
    for e in project.entities:
        first_id = rng.randint(1, 40)
        values = [_T["make_value"].format(f=f, value=literal(f, rng)) for f in e.fields]
        w.snippet(_T["make_entity"], record=False, e=e, id=first_id, values="\n".join(values))
        w.blank(2)
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
    module = project.file(targets[0])
    mod_name = targets[0].removeprefix("src/").removesuffix(".py").replace("/", ".")
    entity = module.entity or project.main
    public = [f for f in module.funcs if not f.name.startswith("_")][:7]
    w = Writer(path)
    local = [
        _T["module_star"].format(module=mod_name),
        _T["module_makers"].format(
            makers=", ".join(_T["maker"].format(e=e) for e in project.entities)
        ),
    ]
    owners = [f.qual.split(".")[0] for f in public if "." in f.qual]
    construct = _T["construct"].format(owner=owners[0]) if owners else ""
    if owners and owners[0].endswith("Service") and project.exists(project.repository_path(entity)):
        construct = _T["construct_with_repository"].format(owner=owners[0], e=entity)
        local.insert(0, _REPOSITORY_IMPORT.format(pkg=project.pkg, e=entity))
    _test_header(w, _T["module_doc"].format(module=mod_name), "", "\n".join(local))
    owner_fixture = snake(owners[0]) if owners else ""
    if owners:
        w.snippet(_T["owner_fixture"], record=False, fixture=owner_fixture, construct=construct)
        w.blank(2)
    tests: list[str] = []
    for func in public:
        aspects = rng.sample(ASPECTS, rng.choice((1, 2)))
        for aspect in aspects:
            name = f"test_{func.name}_{aspect}"
            params = [owner_fixture] if "." in func.qual and owner_fixture else []
            call = f"{owner_fixture}.{func.name}" if params else func.name
            args = call_args(func, entity, rng, project.entities)
            body = [_T["call"].format(call=call, args=args), *_assertion(func, rng)]
            if aspect == "rejects_bad_input":
                bad_args = ", ".join(
                    a for a in (call_args(func, entity, rng, project.entities), "strict=True") if a
                )
                body = _T["call_rejected"].format(call=call, args=bad_args).split("\n")
            decorator = ""
            ids = [name]
            if rng.random() < 0.18 and not params:
                values = ", ".join(str(rng.randint(1, 9)) for _ in range(3))
                decorator = _T["parametrize"].format(values=values)
                params.append("size")
                body.insert(0, _T["size_check"])
                ids = [f"{name}[{v.strip()}]" for v in values.split(",")]
            w.snippet(
                _T["test"],
                record=False,
                decorator=decorator,
                name=name,
                params=", ".join(params),
                body="\n".join(f"    {line}" for line in body),
            )
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
