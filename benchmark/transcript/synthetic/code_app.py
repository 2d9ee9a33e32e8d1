"""Generated entry points and jobs: CLI, HTTP API, reports, notifications, tasks.

The source text is in ``data/code_app.yaml``; this module picks what goes in and draws
the random values, in a fixed order.
"""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import (
    Writer,
    fields_of_type,
    numeric_fields,
)
from benchmark.transcript.synthetic.vocab import Field

_T: dict[str, str] = resources.yaml_data("code_app.yaml")


def build_cli(w: Writer, project: Project, rng: random.Random) -> None:
    pkg, main = project.pkg, project.main
    unused = rng.choice(("import os", "import sys", "import json"))
    w.anchors["unused_import"] = unused
    w.header_snippet(_T["cli_head"], pkg=pkg, main=main, unused=unused)
    w.snippet(_T["cli_group"], record=False, pkg=pkg)
    w.blank(2)
    for command in project.theme.commands:
        w.snippet(_T["cli_command"], command=command, name=command.replace("-", "_"), main=main)
        w.blank(2)
    w.snippet(_T["cli_main"])


def build_api(w: Writer, project: Project, rng: random.Random) -> None:
    pkg = project.pkg
    ents = project.entities[:3]
    w.header_snippet(
        _T["api_head"],
        pkg=pkg,
        schemas=", ".join(_T["api_schemas"].format(e=e) for e in ents),
        services="\n".join(_T["api_service_import"].format(pkg=pkg, e=e) for e in ents),
    )
    w.snippet(_T["api_app"], pkg=pkg)
    w.blank(2)
    for e in ents:
        w.snippet(_T["api_routes"], e=e)
        w.blank(2)


def build_reports(w: Writer, project: Project, rng: random.Random) -> None:
    ents = [e for e in project.entities if numeric_fields(e)][:3] or list(project.entities[:1])
    w.header_snippet(_T["reports_head"], pkg=project.pkg, models=", ".join(e.cls for e in ents))
    w.snippet(_T["reports_top_n"], top_n=rng.choice((5, 10, 20)))
    w.blank(2)
    for e in ents:
        f = (numeric_fields(e) or [Field("id", "int")])[0]
        ret_line = _T["reports_average_return"].format(e=e).rstrip("\n")
        w.snippet(
            _T["reports_entity"],
            e=e,
            f=f,
            average_return=ret_line,
            tags={f"average_{f.name}": ("average",)},
        )
        w.anchors.setdefault("average_return", f"    {ret_line}")
        w.blank(2)
        for d in fields_of_type(e, "date", "datetime")[:1]:
            w.snippet(_T["reports_per_month"], e=e, d=d)
            w.blank(2)


def build_notifications(w: Writer, project: Project, rng: random.Random) -> None:
    w.header_snippet(_T["notifications_head"], pkg=project.pkg, main=project.main)
    w.snippet(_T["notifications"], pkg=project.pkg, main=project.main)


def build_tasks(w: Writer, project: Project, rng: random.Random) -> None:
    values = {"pkg": project.pkg, "main": project.main, "vendor": project.theme.vendor}
    w.header_snippet(_T["tasks_head"], **values)
    w.snippet(_T["tasks"], window=rng.choice((6, 12, 24, 36)), **values)
