"""Procedural Python modules for the fictional project (the bulk of ``read_file`` output).

Every module is built from the project's entities and a per-file RNG, so code
reads like one codebase: services call repositories, the CLI calls services,
tests call what the modules define. Scenarios later edit these files through
the recorded :class:`Func` heads and named anchors."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.code_app as code_app
import benchmark.transcript.synthetic.code_domain as code_domain
import benchmark.transcript.synthetic.code_infra as code_infra
import benchmark.transcript.synthetic.docs as docs
import benchmark.transcript.synthetic.testgen as testgen
from benchmark.transcript.synthetic.project import Func, Project, SourceFile
from benchmark.transcript.synthetic.python_source import Writer, add_import


def build_file(project: Project, path: str, rng: random.Random) -> SourceFile:
    if path.endswith("__init__.py"):
        return _package_init(project, path)
    if path.startswith("tests/"):
        return testgen.build_test(project, path, rng)
    if not path.endswith(".py"):
        return docs.build_text(project, path, rng)
    rel = path.removeprefix(f"src/{project.pkg}/").removesuffix(".py")
    w = Writer(path)
    for entity in project.entities:
        if rel == f"services/{entity.name}_service":
            code_domain.build_service(w, project, rng, entity)
            return w.build(entity=entity)
        if rel == f"repositories/{entity.name}_repository":
            code_domain.build_repository(w, project, rng, entity)
            return w.build(entity=entity)
    BUILDERS[rel](w, project, rng)
    return _inject_pins(project, rel, w.build())


def _inject_pins(project: Project, rel: str, source: SourceFile) -> SourceFile:
    """Add the code that a planned breaking upgrade will trip over (imports + one function)."""
    for pin in project.pins:
        if pin.used_in != rel:
            continue
        for line in pin.imports:
            source.text = add_import(source.text, line.replace("{pkg}", project.pkg), project.pkg)
        snippet = pin.snippet.replace("{pkg}", project.pkg)
        source.text = source.text.rstrip("\n") + "\n\n\n" + snippet
        lines = snippet.splitlines()
        def_index = next((i for i, line in enumerate(lines) if line.startswith("def ")), -1)
        if def_index >= 0 and not pin.import_time:
            def_line = lines[def_index]
            name = def_line[4 : def_line.index("(")]
            params = def_line[def_line.index("(") + 1 : def_line.rindex(")")]
            source.funcs.insert(
                0,
                Func(
                    name=name,
                    qual=name,
                    def_line=def_line,
                    doc_line=lines[def_index + 1],
                    params=[
                        (p.split(":")[0].strip(), p.strip()) for p in params.split(",") if p.strip()
                    ],
                    ret=def_line.rsplit("->", 1)[1].strip(" :") if "->" in def_line else "",
                    indent="    ",
                    tags=("pin",),
                ),
            )
    return source


def _package_init(project: Project, path: str) -> SourceFile:
    if path == f"src/{project.pkg}/__init__.py":
        text = (
            f'"""{project.pkg}: {project.theme.summary}."""\n\n'
            f'__version__ = "0.{project.seed % 7 + 3}.{project.seed % 5}"\n'
        )
    else:
        sub = path.split("/")[-2]
        text = f'"""{sub.capitalize()} of {project.pkg}, one module per entity."""\n'
    return SourceFile(path=path, text=text)


BUILDERS = {
    "config": code_infra.build_config,
    "db": code_infra.build_db,
    "db_utils": code_infra.build_db_utils,
    "utils": code_infra.build_utils,
    "client": code_infra.build_client,
    "models": code_domain.build_models,
    "schemas": code_domain.build_schemas,
    "exceptions": code_domain.build_exceptions,
    "cli": code_app.build_cli,
    "api": code_app.build_api,
    "reports": code_app.build_reports,
    "notifications": code_app.build_notifications,
    "tasks": code_app.build_tasks,
}
