"""Generated entry points and jobs: CLI, HTTP API, reports, notifications, tasks."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import (
    Writer,
    fields_of_type,
    numeric_fields,
)
from benchmark.transcript.synthetic.vocab import Field


def build_cli(w: Writer, project: Project, rng: random.Random) -> None:
    pkg, main = project.pkg, project.main
    unused = rng.choice(("import os", "import sys", "import json"))
    w.anchors["unused_import"] = unused
    w.header(
        f"Command line entry point: ``python -m {pkg}.cli COMMAND``.",
        ["import logging", unused, "from datetime import datetime"],
        ["import click"],
        [
            f"from {pkg}.config import load_settings",
            f"from {pkg}.services.{main.name}_service import {main.cls}Service",
        ],
    )
    w.add("logger = logging.getLogger(__name__)", "", "")
    w.add(
        "@click.group()",
        '@click.option("--verbose", is_flag=True, help="Log at DEBUG level.")',
        "def cli(verbose: bool) -> None:",
        '    """Operational commands for ' + pkg + '."""',
        "    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO)",
        "",
        "",
    )
    for command in project.theme.commands:
        name = command.replace("-", "_")
        w.func(
            f"{name}_command",
            ["since: str", "dry_run: bool"],
            "None",
            f"Run the {command} job over {main.plural}; --dry-run reports what would change.",
            [
                "settings = load_settings()",
                "started = datetime.fromisoformat(since) if since else datetime.min",
                f"service = {main.cls}Service.from_settings(settings)",
                f"changed = service.run_{name}(started, dry_run=dry_run)",
                f'click.echo(f"{command}: {{changed}} {main.plural} '
                f"{{'would change' if dry_run else 'changed'}}\")",
            ],
            decorators=(
                f'@cli.command("{command}")',
                '@click.option("--since", default="")',
                '@click.option("--dry-run", is_flag=True)',
            ),
        )
        w.blank(2)
    w.add('if __name__ == "__main__":', "    cli()")


def build_api(w: Writer, project: Project, rng: random.Random) -> None:
    pkg = project.pkg
    ents = project.entities[:3]
    w.header(
        "HTTP API: thin routes over the services, errors mapped in one handler.",
        [],
        ["from fastapi import Depends, FastAPI, HTTPException"],
        [
            f"from {pkg}.exceptions import ValidationError",
            f"from {pkg}.schemas import " + ", ".join(f"{e.cls}Create, {e.cls}Out" for e in ents),
        ]
        + [f"from {pkg}.services.{e.name}_service import {e.cls}Service" for e in ents],
    )
    w.add(f'app = FastAPI(title="{pkg}")', "", "")
    for e in ents:
        w.func(
            f"get_{e.name}_service",
            [],
            f"{e.cls}Service",
            "Dependency hook; tests override it with an in-memory repository.",
            [f"return {e.cls}Service.from_settings()"],
        )
        w.blank(2)
        dep = f"service: {e.cls}Service = Depends(get_{e.name}_service)"
        w.func(
            f"read_{e.name}",
            [f"{e.name}_id: int", dep],
            f"{e.cls}Out",
            f"GET one {e.name}; 404 comes from the exception handler.",
            [f"return {e.cls}Out.model_validate(service.get_{e.name}({e.name}_id))"],
            decorators=(f'@app.get("/{e.plural}/{{{e.name}_id}}")',),
        )
        w.blank(2)
        w.func(
            f"create_{e.name}",
            [f"body: {e.cls}Create", dep],
            f"{e.cls}Out",
            "POST returns 201 with the stored record.",
            [
                "try:",
                f"    created = service.create_{e.name}(body.model_dump())",
                "except ValidationError as exc:",
                "    raise HTTPException(status_code=422, detail=str(exc)) from exc",
                f"return {e.cls}Out.model_validate(created)",
            ],
            decorators=(f'@app.post("/{e.plural}", status_code=201)',),
        )
        w.blank(2)


def build_reports(w: Writer, project: Project, rng: random.Random) -> None:
    pkg = project.pkg
    ents = [e for e in project.entities if numeric_fields(e)][:3] or list(project.entities[:1])
    w.header(
        "Aggregations behind the weekly report and the dashboard tiles.",
        [
            "from collections import defaultdict",
            "from collections.abc import Sequence",
            "from datetime import date",
        ],
        [],
        [f"from {pkg}.models import " + ", ".join(e.cls for e in ents)],
    )
    w.const("TOP_N", str(rng.choice((5, 10, 20))))
    w.blank(2)
    for e in ents:
        nums = numeric_fields(e) or [Field("id", "int")]
        f = nums[0]
        ret_line = f"return total / len({e.plural})"
        w.func(
            f"average_{f.name}",
            [f"{e.plural}: Sequence[{e.cls}]"],
            "float",
            f"Mean {f.name} across {e.plural}; the dashboard shows it with one decimal.",
            [f"total = sum(item.{f.name} for item in {e.plural})", ret_line],
            tags=("average",),
        )
        w.anchors.setdefault("average_return", f"    {ret_line}")
        w.blank(2)
        w.func(
            f"top_{e.plural}_by_{f.name}",
            [f"{e.plural}: Sequence[{e.cls}]", "n: int = TOP_N"],
            f"list[{e.cls}]",
            "Largest first; ties keep id order so the report is stable.",
            [f"return sorted({e.plural}, key=lambda item: (-item.{f.name}, item.id))[:n]"],
        )
        w.blank(2)
        dates = fields_of_type(e, "date", "datetime")
        if dates:
            d = dates[0]
            w.func(
                f"{e.plural}_per_month",
                [f"{e.plural}: Sequence[{e.cls}]"],
                "dict[date, int]",
                "Counts keyed by the first day of each month, for the bar chart.",
                [
                    "buckets: dict[date, int] = defaultdict(int)",
                    f"for item in {e.plural}:",
                    f"    day = item.{d.name}",
                    "    buckets[date(day.year, day.month, 1)] += 1",
                    "return dict(sorted(buckets.items()))",
                ],
            )
            w.blank(2)


def build_notifications(w: Writer, project: Project, rng: random.Random) -> None:
    pkg, main = project.pkg, project.main
    w.header(
        "Outgoing e-mail reminders; rendering is pure so tests need no mail server.",
        ["import logging", "from string import Template"],
        ["import httpx"],
        [f"from {pkg}.config import REMINDER_LEAD_HOURS", f"from {pkg}.models import {main.cls}"],
    )
    w.add("logger = logging.getLogger(__name__)", "")
    w.const("SUBJECT_PREFIX", f'"[{pkg}]"')
    w.const("REMINDER_TEMPLATE", 'Template("Hello,\\n\\n$what is due in $hours hours.\\n")')
    w.blank(2)
    w.func(
        f"render_{main.name}_reminder",
        [f"{main.name}: {main.cls}"],
        "tuple[str, str]",
        "Subject and body; kept separate from sending so the text is unit-tested.",
        [
            f'subject = f"{{SUBJECT_PREFIX}} {main.name} #{{{main.name}.id}} reminder"',
            f'body = REMINDER_TEMPLATE.substitute(what=f"{main.name} #{{{main.name}.id}}", '
            "hours=REMINDER_LEAD_HOURS)",
            "return subject, body",
        ],
    )
    w.blank(2)
    w.func(
        "send_email",
        ["client: httpx.Client", "to: str", "subject: str", "body: str"],
        "bool",
        "POST to the mail relay; False (logged) instead of raising so one bad address never "
        "stops a batch.",
        [
            'response = client.post("/messages", '
            'json={"to": to, "subject": subject, "text": body})',
            "if response.status_code != 202:",
            '    logger.error("mail relay refused %s: %s", to, response.status_code)',
            "    return False",
            "return True",
        ],
    )


def build_tasks(w: Writer, project: Project, rng: random.Random) -> None:
    pkg, main = project.pkg, project.main
    w.header(
        "Nightly jobs; each returns a count so the scheduler can log progress.",
        ["import logging", "from datetime import datetime, timedelta"],
        [],
        [
            f"from {pkg}.client import {project.theme.vendor}Client",
            f"from {pkg}.config import Settings",
            f"from {pkg}.services.{main.name}_service import {main.cls}Service, "
            f"parse_{main.name}_payload",
        ],
    )
    w.add("logger = logging.getLogger(__name__)", "")
    w.const("SYNC_WINDOW_HOURS", str(rng.choice((6, 12, 24, 36))))
    w.blank(2)
    w.func(
        f"sync_{main.plural}",
        ["settings: Settings", f"service: {main.cls}Service", "now: datetime"],
        "int",
        f"Pull {main.plural} changed in the last window and upsert them.",
        [
            f"client = {project.theme.vendor}Client(settings)",
            "since = (now - timedelta(hours=SYNC_WINDOW_HOURS)).isoformat()",
            "try:",
            f"    payloads = client.list_{main.plural}(since=since)",
            "finally:",
            "    client.close()",
            "synced = 0",
            "for payload in payloads:",
            f"    service.upsert(parse_{main.name}_payload(payload))",
            "    synced += 1",
            f'logger.info("synced %d {main.plural} since %s", synced, since)',
            "return synced",
        ],
    )
