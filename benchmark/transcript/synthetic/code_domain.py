"""Generated domain modules: models, schemas, exceptions, services, repositories."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import (
    Writer,
    fields_of_type,
    numeric_fields,
    parse_expr,
)
from benchmark.transcript.synthetic.vocab import Entity


def build_models(w: Writer, project: Project, rng: random.Random) -> None:
    w.header(
        "Plain dataclasses passed between layers; no ORM or HTTP types leak past here.",
        [
            "from dataclasses import asdict, dataclass",
            "from datetime import date, datetime",
            "from enum import Enum",
            "from typing import Any",
        ],
        [],
        [],
    )
    w.add(
        "class Status(str, Enum):", '    """Lifecycle shared by every entity with a status."""', ""
    )
    for status in ("pending", "active", "closed", "cancelled"):
        w.add(f'    {status.upper()} = "{status}"')
    w.blank(2)
    for e in project.entities:
        w.add("@dataclass", f"class {e.cls}:", "    id: int")
        for f in e.fields:
            w.add(f"    {f.name}: {f.type}")
        w.blank()
        w.func(
            "to_dict",
            [],
            "dict[str, Any]",
            "Field values; dates stay objects for the ORM.",
            ["return asdict(self)"],
            owner=e.cls,
        )
        w.blank(2)


def build_schemas(w: Writer, project: Project, rng: random.Random) -> None:
    w.header(
        "Request and response schemas for the HTTP API (pydantic v2).",
        ["from datetime import date, datetime"],
        ["from pydantic import BaseModel, ConfigDict"],
        [],
    )
    for e in project.entities:
        w.add(
            f"class {e.cls}Create(BaseModel):",
            f'    """What a client sends to create a {e.name}."""',
            "",
        )
        for f in e.fields:
            line = f"    {f.name}: {f.type}"
            w.add(line)
            w.anchors[f"schema:{e.cls}Create:{f.name}"] = line
        w.blank(2)
        w.add(
            f"class {e.cls}Out({e.cls}Create):",
            "    model_config = ConfigDict(from_attributes=True)",
            "",
            "    id: int",
            "",
            "",
        )


def build_exceptions(w: Writer, project: Project, rng: random.Random) -> None:
    base = f"{project.pkg.capitalize()}Error"
    w.header("Exception hierarchy: the API maps each class to one HTTP status.", [], [], [])
    w.add(
        f"class {base}(Exception):",
        '    """Base class; catch this to handle any domain error."""',
        "",
        "",
        f"class ValidationError({base}):",
        '    """Input that breaks a business rule (HTTP 422)."""',
        "",
        "",
        f"class UpstreamError({base}):",
        f'    """The {project.theme.vendor} API answered with an error status."""',
        "",
        "    def __init__(self, status: int, body: str):",
        '        super().__init__(f"upstream returned {status}: {body}")',
        "        self.status = status",
        "",
        "",
    )
    for e in project.entities:
        w.add(
            f"class {e.cls}NotFoundError({base}):",
            f'    """No {e.name} with that id (HTTP 404)."""',
            "",
            f"    def __init__(self, {e.name}_id: int):",
            f'        super().__init__(f"{e.name} {{{e.name}_id}} not found")',
            f"        self.{e.name}_id = {e.name}_id",
            "",
            "",
        )


def build_service(w: Writer, project: Project, rng: random.Random, e: Entity) -> None:
    pkg, n, plural, cls = project.pkg, e.name, e.plural, e.cls
    has_repo = project.exists(project.repository_path(e))
    repo_cls = f"{cls}Repository" if has_repo else "Session"
    models_import = f"from {pkg}.models import {cls}"
    w.anchors["models_import"] = models_import
    local = [
        f"from {pkg}.exceptions import {cls}NotFoundError, ValidationError",
        models_import,
        f"from {pkg}.utils import parse_timestamp, utcnow",
    ]
    if has_repo:
        local.append(f"from {pkg}.repositories.{n}_repository import {cls}Repository")
    third = [] if has_repo else ["from sqlalchemy.orm import Session"]
    std = [
        "import logging",
        "from collections import Counter",
        "from datetime import date, datetime, timedelta",
        "from typing import Any",
    ]
    w.header(
        f"Business rules for {plural}: what the API, the CLI and the nightly jobs share.",
        std,
        third,
        local,
    )
    w.add("logger = logging.getLogger(__name__)", "")
    up = n.upper()
    w.const(f"{up}_PAGE_SIZE", str(rng.choice((25, 50, 100, 200))))
    w.const(f"{up}_STALE_AFTER_DAYS", str(rng.choice((7, 14, 30, 45, 90))))
    w.const(f"MAX_{up}_BATCH", str(rng.choice((250, 500, 1000))))
    w.blank(2)
    body = [f"return {cls}(", '    id=int(payload["id"]),']
    for f in e.fields:
        body.append(f"    {f.name}={parse_expr(f)},")
        w.payload_keys.append(f.name)
    body.append(")")
    w.func(
        f"parse_{n}_payload",
        ["payload: dict[str, Any]"],
        cls,
        f"Map a {project.theme.vendor} payload onto a {cls}; keys follow their v2 spelling.",
        body,
        tags=("payload",),
    )
    w.blank(2)
    w.add(
        f"class {cls}Service:",
        f'    """Entry point for {n} operations; takes the repository so tests can pass a fake."""',
        "",
    )
    w.add(
        f"    def __init__(self, repository: {repo_cls}, page_size: int = {up}_PAGE_SIZE):",
        "        self._repository = repository",
        "        self._page_size = page_size",
        "",
    )
    owner = f"{cls}Service"
    w.func(
        f"get_{n}",
        [f"{n}_id: int"],
        cls,
        f"Return the {n}; raises {cls}NotFoundError so callers never check for None.",
        [
            f"{n} = self._repository.get({n}_id)",
            f"found = {n} is not None",
            "if not found:",
            f"    raise {cls}NotFoundError({n}_id)",
            f"return {n}",
        ],
        owner=owner,
    )
    w.blank()
    w.func(
        f"list_{plural}",
        ["page: int = 1"],
        f"list[{cls}]",
        "One page of results, oldest first, so exports are stable between runs.",
        [
            "if page < 1:",
            '    raise ValidationError("page must be >= 1")',
            "offset = (page - 1) * self._page_size",
            "return self._repository.list(offset=offset, limit=self._page_size)",
        ],
        owner=owner,
    )
    w.blank()
    checks = [f for f in e.fields if f.type == "str"][:2]
    create_body = [f"{n} = parse_{n}_payload(payload)"]
    for f in checks:
        create_body += [
            f"if not {n}.{f.name}.strip():",
            f'    raise ValidationError("{f.name} must not be blank")',
        ]
    create_body += [
        f"self._repository.add({n})",
        f'logger.info("created {n} %s", {n}.id)',
        f"return {n}",
    ]
    w.func(
        f"create_{n}",
        ["payload: dict[str, Any]"],
        cls,
        f"Validate and store a new {n}; blank strings are rejected before they reach the DB.",
        create_body,
        owner=owner,
    )
    for f in numeric_fields(e)[:2]:
        w.blank()
        w.func(
            f"total_{f.name}",
            [f"{plural}: list[{cls}]"],
            f.type,
            f"Sum of {f.name} over the given {plural}; reports rely on it matching the DB.",
            [f"return sum(item.{f.name} for item in {plural})"],
            owner=owner,
        )
    for f in fields_of_type(e, "date", "datetime")[:1]:
        w.blank()
        w.func(
            f"stale_{plural}",
            ["now: datetime"],
            f"list[{cls}]",
            f"{plural.capitalize()} untouched for longer than {up}_STALE_AFTER_DAYS days.",
            [
                f"cutoff = now - timedelta(days={up}_STALE_AFTER_DAYS)",
                f"return [item for item in self._repository.list(limit=MAX_{up}_BATCH)",
                f"        if item.{f.name} < cutoff{'.date()' if f.type == 'date' else ''}]",
            ],
            owner=owner,
        )
    for f in fields_of_type(e, "str")[1:2]:
        w.blank()
        w.func(
            f"count_by_{f.name}",
            [],
            "dict[str, int]",
            f"How many {plural} share each {f.name}; used by the dashboard summary.",
            [
                "counts = Counter(item." + f.name + " for item in self._repository.list())",
                "return dict(counts.most_common())",
            ],
            owner=owner,
        )
    for f in fields_of_type(e, "bool")[:1]:
        w.blank()
        w.func(
            f"set_{f.name}",
            [f"{n}_id: int", "value: bool"],
            cls,
            f"Flip {f.name} and record when it happened for the audit trail.",
            [
                f"{n} = self.get_{n}({n}_id)",
                f"{n}.{f.name} = value",
                f"self._repository.save({n})",
                f'logger.info("{n} %s {f.name}=%s at %s", {n}_id, value, utcnow().isoformat())',
                f"return {n}",
            ],
            owner=owner,
        )


def build_repository(w: Writer, project: Project, rng: random.Random, e: Entity) -> None:
    pkg, n, cls = project.pkg, e.name, e.cls
    w.header(
        f"Persistence for {e.plural}: the only module that writes {cls}Row rows.",
        ["from collections.abc import Iterable"],
        ["from sqlalchemy import func, select", "from sqlalchemy.orm import Session"],
        [f"from {pkg}.db import {cls}Row", f"from {pkg}.models import {cls}"],
    )
    w.add(
        f"class {cls}Repository:",
        f'    """Maps {cls} dataclasses to rows and back."""',
        "",
        "    def __init__(self, session: Session):",
        "        self._session = session",
        "",
    )
    owner = f"{cls}Repository"
    w.func(
        "get",
        [f"{n}_id: int"],
        f"{cls} | None",
        "Fetch one row; None rather than raising so services choose the error.",
        [f"row = self._session.get({cls}Row, {n}_id)", "return row.to_model() if row else None"],
        owner=owner,
    )
    w.blank()
    w.func(
        "list",
        ["offset: int = 0", f"limit: int = {rng.choice((100, 500))}"],
        f"list[{cls}]",
        "Rows in id order so pagination never skips or repeats.",
        [
            f"stmt = select({cls}Row).order_by({cls}Row.id).offset(offset).limit(limit)",
            "return [row.to_model() for row in self._session.scalars(stmt)]",
        ],
        owner=owner,
    )
    w.blank()
    w.func(
        "add",
        [f"{n}: {cls}"],
        "int",
        "Insert and flush so the caller sees the new id.",
        [
            f"row = {cls}Row.from_model({n})",
            "self._session.add(row)",
            "self._session.flush()",
            f"{n}.id = row.id",
            "return row.id",
        ],
        owner=owner,
        tags=("insert",),
    )
    w.blank()
    w.func(
        "save",
        [f"{n}: {cls}"],
        "None",
        "Write back every column; the session commits later.",
        [f"self._session.merge({cls}Row.from_model({n}))"],
        owner=owner,
    )
    w.blank()
    w.func(
        "add_many",
        [f"{e.plural}: Iterable[{cls}]"],
        "int",
        "Bulk insert used by imports; one flush for the whole batch.",
        [
            f"rows = [{cls}Row.from_model(item) for item in {e.plural}]",
            "self._session.add_all(rows)",
            "self._session.flush()",
            "return len(rows)",
        ],
        owner=owner,
    )
    w.blank()
    w.func(
        "count",
        [],
        "int",
        "Row count without loading rows.",
        [f"return self._session.scalar(select(func.count()).select_from({cls}Row)) or 0"],
        owner=owner,
    )
