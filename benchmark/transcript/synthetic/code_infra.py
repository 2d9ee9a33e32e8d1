"""Generated infrastructure modules: settings, database, HTTP client, helpers.

The source text is in ``data/code_infra.yaml``; this module picks what goes in and draws
the random values, in a fixed order.
"""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import Writer

_T: dict = resources.yaml_data("code_infra.yaml")
_CONVERTERS = {"int": "int", "float": "float"}


def build_config(w: Writer, project: Project, rng: random.Random) -> None:
    up = project.pkg.upper()
    w.header_snippet(_T["config_head"])
    draws = {
        "timeout": rng.choice(("5.0", "10.0", "15.0", "30.0")),
        "retries": rng.choice((2, 3, 5)),
        "page_size": rng.choice((20, 50, 100)),
        "cache_ttl": rng.choice((60, 120, 300, 900)),
        "lead_hours": rng.choice((12, 24, 48, 72)),
        "timezone": rng.choice(("UTC", "Europe/Lisbon", "Europe/Berlin")),
    }
    fields = [
        field.format(pkg=project.pkg, vendor_host=project.vendor_host, **draws)
        for field in _T["config_fields"]
    ]
    getters = []
    for field in fields:
        name, _, rest = field.partition(":")
        conv = _CONVERTERS.get(rest.split("=")[0].strip(), "")
        getter = _T["config_getter"].format(upper=name.upper(), name=name)
        getters.append(f"        {name}={conv}({getter})," if conv else f"        {name}={getter},")
    w.snippet(
        _T["config"],
        up=up,
        fields="\n".join(f"    {field}" for field in fields),
        getters="\n".join(getters),
        **draws,
    )
    w.anchors["settings_last_field"] = f"    {fields[-1]}"


def build_db(w: Writer, project: Project, rng: random.Random) -> None:
    models = ", ".join(e.cls for e in project.entities)
    w.header_snippet(_T["db_head"], pkg=project.pkg, models=models)
    pool_size = rng.choice((5, 10, 20))
    w.snippet(_T["db_base"], pool_size=pool_size, pool_recycle=rng.choice((900, 1800, 3600)))
    w.blank(2)
    for e in project.entities:
        columns = [
            _T["db_column"].format(f=f, extra="index=True" if _index(f.name) else "")
            for f in e.fields
        ]
        assigns = ", ".join(_T["db_column_assign"].format(f=f) for f in e.fields)
        w.snippet(_T["db_row"], record=False, e=e, columns="\n".join(columns), assigns=assigns)
        w.blank(2)
    w.snippet(_T["db"])


def _index(name: str) -> bool:
    """Foreign keys and natural keys get an index."""
    return name.endswith("_id") or name in ("email", "code")


def build_db_utils(w: Writer, project: Project, rng: random.Random) -> None:
    w.header_snippet(_T["db_utils_head"])
    batch_size = rng.choice((200, 500, 1000))
    w.snippet(_T["db_utils"], batch_size=batch_size, busy_timeout=rng.choice((2000, 5000)))


def build_utils(w: Writer, project: Project, rng: random.Random) -> None:
    w.header_snippet(_T["utils_head"])
    parse_return = _T["utils_parse_date_return"]
    w.anchors["parse_date"] = parse_return
    w.snippet(_T["utils"], slug_max=rng.choice((48, 64, 80)), parse_date_return=parse_return)


def build_client(w: Writer, project: Project, rng: random.Random) -> None:
    vendor = project.theme.vendor
    values = {"pkg": project.pkg, "vendor": vendor}
    w.header_snippet(_T["client_head"], **values)
    json_return = _T["client_json_return"]
    w.anchors["json_return"] = json_return
    major = rng.randint(1, 3)
    w.snippet(
        _T["client"],
        major=major,
        minor=rng.randint(0, 9),
        json_return=json_return,
        tags={"_request": ("http",)},
        **values,
    )
    method = {"owner": f"{vendor}Client", "indent": "    "}
    for e in project.entities[:3]:
        w.snippet(_T["client_entity"], e=e, tags={f"fetch_{e.name}": ("fetch",)}, **method)
    w.snippet(_T["client_close"], **method)
