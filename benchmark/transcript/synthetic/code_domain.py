"""Generated domain modules: models, schemas, exceptions, services, repositories.

The source text is in ``data/code_domain.yaml``; this module picks what goes in and
draws the random values, in a fixed order.
"""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import (
    Writer,
    fields_of_type,
    numeric_fields,
    parse_expr,
)
from benchmark.transcript.synthetic.vocab import Entity

_T: dict[str, str] = resources.yaml_data("code_domain.yaml")


def _lines(name: str, items: list, **values: object) -> str:
    """Template ``name`` filled once per item (as ``f``), one under the other."""
    return "\n".join(_T[name].format(f=f, **values).rstrip("\n") for f in items)


def build_models(w: Writer, project: Project, rng: random.Random) -> None:
    w.header_snippet(_T["models_head"])
    w.snippet(_T["models_status"])
    w.blank(2)
    for e in project.entities:
        w.snippet(_T["model"], owner=e.cls, e=e, fields=_lines("model_field", e.fields))
        w.blank(2)


def build_schemas(w: Writer, project: Project, rng: random.Random) -> None:
    w.header_snippet(_T["schemas_head"])
    for e in project.entities:
        w.snippet(_T["schema_create"], e=e)
        w.blank()
        for f in e.fields:
            line = _T["model_field"].format(f=f)
            w.add(line)
            w.anchors[f"schema:{e.cls}Create:{f.name}"] = line
        w.blank(2)
        w.snippet(_T["schema_out"], e=e)
        w.blank(2)


def build_exceptions(w: Writer, project: Project, rng: random.Random) -> None:
    base = f"{project.pkg.capitalize()}Error"
    w.header_snippet(_T["exceptions_head"])
    w.snippet(_T["exceptions"], base=base, vendor=project.theme.vendor)
    w.blank(2)
    for e in project.entities:
        w.snippet(_T["not_found"], base=base, e=e)
        w.blank(2)


def build_service(w: Writer, project: Project, rng: random.Random, e: Entity) -> None:
    pkg, up = project.pkg, e.name.upper()
    has_repo = project.exists(project.repository_path(e))
    models_import = _T["service_models_import"].format(pkg=pkg, e=e).rstrip("\n")
    w.anchors["models_import"] = models_import
    w.header_snippet(
        _T["service_head"],
        pkg=pkg,
        e=e,
        models_import=models_import,
        third="" if has_repo else _T["service_third"],
        repo_import=_T["service_repo_import"].format(pkg=pkg, e=e) if has_repo else "",
    )
    w.snippet(
        _T["service_consts"],
        up=up,
        page_size=rng.choice((25, 50, 100, 200)),
        stale_days=rng.choice((7, 14, 30, 45, 90)),
        max_batch=rng.choice((250, 500, 1000)),
    )
    w.blank(2)
    fields = "\n".join(_T["payload_field"].format(f=f, expr=parse_expr(f)) for f in e.fields)
    w.payload_keys.extend(f.name for f in e.fields)
    w.snippet(
        _T["parse_payload"],
        e=e,
        vendor=project.theme.vendor,
        fields=fields,
        tags={f"parse_{e.name}_payload": ("payload",)},
    )
    w.blank(2)
    checks = [f for f in e.fields if f.type == "str"][:2]
    w.snippet(
        _T["service"],
        e=e,
        up=up,
        repo_cls=f"{e.cls}Repository" if has_repo else "Session",
        checks=_lines("blank_check", checks, e=e),
    )
    method = {"owner": f"{e.cls}Service", "indent": "    ", "e": e, "up": up}
    for f in numeric_fields(e)[:2]:
        w.snippet(_T["total"], f=f, **method)
    for f in fields_of_type(e, "date", "datetime")[:1]:
        to_date = ".date()" if f.type == "date" else ""
        plural_title = e.plural.capitalize()
        w.snippet(_T["stale"], f=f, to_date=to_date, plural_title=plural_title, **method)
    for f in fields_of_type(e, "str")[1:2]:
        w.snippet(_T["count_by"], f=f, **method)
    for f in fields_of_type(e, "bool")[:1]:
        w.snippet(_T["set_flag"], f=f, **method)


def build_repository(w: Writer, project: Project, rng: random.Random, e: Entity) -> None:
    w.header_snippet(_T["repository_head"], pkg=project.pkg, e=e)
    w.snippet(_T["repository"], e=e, limit=rng.choice((100, 500)), tags={"add": ("insert",)})
