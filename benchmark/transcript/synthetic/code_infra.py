"""Generated infrastructure modules: settings, database, HTTP client, helpers."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.python_source import (
    Writer,
)


def build_config(w: Writer, project: Project, rng: random.Random) -> None:
    up = project.pkg.upper()
    w.header(
        "Runtime settings, read once from the environment so tests can inject their own.",
        ["import os", "from collections.abc import Mapping", "from dataclasses import dataclass"],
        [],
        [],
    )
    w.const("DEFAULT_TIMEOUT_SECONDS", rng.choice(("5.0", "10.0", "15.0", "30.0")))
    w.const("MAX_RETRIES", str(rng.choice((2, 3, 5))))
    w.const("PAGE_SIZE", str(rng.choice((20, 50, 100))))
    w.const("CACHE_TTL_SECONDS", str(rng.choice((60, 120, 300, 900))))
    w.const("REMINDER_LEAD_HOURS", str(rng.choice((12, 24, 48, 72))))
    w.blank(2)
    fields = [
        f'database_url: str = "sqlite:///./{project.pkg}.db"',
        f'api_base_url: str = "https://{project.vendor_host}/v2"',
        "request_timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS",
        "max_retries: int = MAX_RETRIES",
        "page_size: int = PAGE_SIZE",
        "cache_ttl_seconds: int = CACHE_TTL_SECONDS",
        f'timezone: str = "{rng.choice(("UTC", "Europe/Lisbon", "Europe/Berlin"))}"',
        'log_level: str = "INFO"',
    ]
    w.add(
        "@dataclass(frozen=True)",
        "class Settings:",
        '    """Every knob the service reads; defaults are safe for local development."""',
        "",
    )
    w.add(*(f"    {f}" for f in fields))
    w.anchors["settings_last_field"] = f"    {fields[-1]}"
    w.blank(2)
    w.func(
        "_env_bool",
        ["value: str"],
        "bool",
        "Accept the spellings ops actually use in .env files.",
        ['return value.strip().lower() in {"1", "true", "yes", "on"}'],
    )
    w.blank(2)
    body = [f'prefix = "{up}_"', "return Settings("]
    for f in fields:
        name, _, rest = f.partition(":")
        ftype = rest.split("=")[0].strip()
        conv = {"int": "int", "float": "float"}.get(ftype, "")
        default = f"Settings.{name}"
        getter = f'env.get(f"{{prefix}}{name.upper()}", {default})'
        body.append(f"    {name}={conv}({getter})," if conv else f"    {name}={getter},")
    body.append(")")
    w.func(
        "load_settings",
        ["env: Mapping[str, str] = os.environ"],
        "Settings",
        f"Build Settings from {up}_* variables; unknown variables are ignored.",
        body,
    )


def build_db(w: Writer, project: Project, rng: random.Random) -> None:
    w.header(
        "Engine, session factory and table mappings (SQLAlchemy 2.0 style).",
        [
            "from collections.abc import Iterator",
            "from contextlib import contextmanager",
            "from datetime import date, datetime",
        ],
        [
            "from sqlalchemy import Engine, create_engine",
            "from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, "
            "sessionmaker",
        ],
        [f"from {project.pkg}.models import " + ", ".join(e.cls for e in project.entities)],
    )
    w.const("POOL_SIZE", str(rng.choice((5, 10, 20))))
    w.const("POOL_RECYCLE_SECONDS", str(rng.choice((900, 1800, 3600))))
    w.blank(2)
    w.add("class Base(DeclarativeBase):", '    """Shared metadata for every table."""', "", "")
    for e in project.entities:
        w.add(
            f"class {e.cls}Row(Base):",
            f'    __tablename__ = "{e.plural}"',
            "",
            "    id: Mapped[int] = mapped_column(primary_key=True)",
        )
        for f in e.fields:
            extra = "index=True" if f.name.endswith("_id") or f.name in ("email", "code") else ""
            w.add(f"    {f.name}: Mapped[{f.type}] = mapped_column({extra})")
        w.blank()
        w.add(
            "    @classmethod",
            f"    def from_model(cls, item: {e.cls}) -> {e.cls}Row:",
            "        return cls(**item.to_dict())",
            "",
            f"    def to_model(self) -> {e.cls}:",
            f"        return {e.cls}(id=self.id, "
            + ", ".join(f"{f.name}=self.{f.name}" for f in e.fields)
            + ")",
            "",
            "",
        )
    w.func(
        "make_engine",
        ["url: str", "echo: bool = False"],
        "Engine",
        "Pooled engine; SQLite gets check_same_thread off for the test client.",
        [
            'connect_args = {"check_same_thread": False} if url.startswith("sqlite") else {}',
            'if url.startswith("sqlite"):',
            "    return create_engine(url, echo=echo, connect_args=connect_args)",
            "return create_engine(",
            "    url, echo=echo, pool_size=POOL_SIZE,",
            "    pool_recycle=POOL_RECYCLE_SECONDS, pool_pre_ping=True,",
            ")",
        ],
    )
    w.blank(2)
    w.func(
        "init_db",
        ["engine: Engine"],
        "None",
        "Create missing tables; migrations own every later change.",
        ["Base.metadata.create_all(engine)"],
    )
    w.blank(2)
    w.func(
        "session_scope",
        ["factory: sessionmaker[Session]"],
        "Iterator[Session]",
        "Commit on success, roll back on any error, always close.",
        [
            "session = factory()",
            "try:",
            "    yield session",
            "    session.commit()",
            "except Exception:",
            "    session.rollback()",
            "    raise",
            "finally:",
            "    session.close()",
        ],
        decorators=("@contextmanager",),
    )


def build_db_utils(w: Writer, project: Project, rng: random.Random) -> None:
    w.header(
        "Small helpers around the session that several repositories need.",
        ["from collections.abc import Iterable, Iterator, Sequence", "from typing import Any"],
        ["from sqlalchemy import inspect, text", "from sqlalchemy.orm import Session"],
        [],
    )
    w.const("BATCH_SIZE", str(rng.choice((200, 500, 1000))))
    w.const("SQLITE_BUSY_TIMEOUT_MS", str(rng.choice((2000, 5000))))
    w.blank(2)
    w.func(
        "chunked",
        ["items: Sequence[Any]", "size: int = BATCH_SIZE"],
        "Iterator[Sequence[Any]]",
        "Slices of at most ``size`` items; keeps bulk inserts under SQLite's variable limit.",
        ["for start in range(0, len(items), size):", "    yield items[start : start + size]"],
    )
    w.blank(2)
    w.func(
        "chunked_insert",
        ["session: Session", "rows: Sequence[Any]"],
        "int",
        "Insert in batches with one flush each, so a failure points at a small batch.",
        [
            "inserted = 0",
            "for batch in chunked(rows):",
            "    session.add_all(batch)",
            "    session.flush()",
            "    inserted += len(batch)",
            "return inserted",
        ],
    )
    w.blank(2)
    w.func(
        "row_to_dict",
        ["row: Any"],
        "dict[str, Any]",
        "Column values of a mapped row, for JSON export and debugging.",
        [
            "mapper = inspect(row).mapper",
            "return {column.key: getattr(row, column.key) for column in mapper.column_attrs}",
        ],
    )
    w.blank(2)
    w.func(
        "table_counts",
        ["session: Session", "tables: Iterable[str]"],
        "dict[str, int]",
        "Row count per table, used by the health endpoint.",
        [
            "counts = {}",
            "for table in tables:",
            '    counts[table] = session.execute(text(f"SELECT COUNT(*) FROM '
            '{table}")).scalar_one()',
            "return counts",
        ],
    )
    w.blank(2)
    w.func(
        "tune_sqlite",
        ["session: Session"],
        "None",
        "WAL mode and a busy timeout; without them the nightly job and the API collide.",
        [
            'session.execute(text("PRAGMA journal_mode=WAL"))',
            'session.execute(text(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}"))',
        ],
    )


def build_utils(w: Writer, project: Project, rng: random.Random) -> None:
    w.header(
        "Date, money and text helpers with no project dependencies.",
        ["import re", "import unicodedata", "from datetime import date, datetime, timezone"],
        [],
        [],
    )
    w.const("DATE_FORMAT", '"%Y-%m-%d"')
    w.const("SLUG_MAX_LENGTH", str(rng.choice((48, 64, 80))))
    w.blank(2)
    w.func(
        "utcnow",
        [],
        "datetime",
        "Aware UTC now; naive datetimes caused the DST bug in March.",
        ["return datetime.now(timezone.utc)"],
    )
    w.blank(2)
    parse_line = "    return datetime.strptime(value, DATE_FORMAT).date()"
    w.anchors["parse_date"] = parse_line
    w.func(
        "parse_date",
        ["value: str"],
        "date",
        "Parse the YYYY-MM-DD dates that CSV imports carry.",
        ["return datetime.strptime(value, DATE_FORMAT).date()"],
    )
    w.blank(2)
    w.func(
        "parse_timestamp",
        ["value: str"],
        "datetime",
        "ISO-8601 with a trailing Z accepted; result is always aware.",
        [
            'parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))',
            "if parsed.tzinfo is None:",
            "    parsed = parsed.replace(tzinfo=timezone.utc)",
            "return parsed.astimezone(timezone.utc)",
        ],
    )
    w.blank(2)
    w.func(
        "slugify",
        ["text: str"],
        "str",
        "ASCII slug for file names and URLs.",
        [
            'normalized = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()',
            'slug = re.sub(r"[^a-z0-9]+", "-", normalized.lower()).strip("-")',
            "return slug[:SLUG_MAX_LENGTH]",
        ],
    )
    w.blank(2)
    w.func(
        "format_cents",
        ["amount_cents: int", 'currency: str = "EUR"'],
        "str",
        "Human-readable money; integer cents avoid float rounding in totals.",
        [
            'sign = "-" if amount_cents < 0 else ""',
            "whole, cents = divmod(abs(amount_cents), 100)",
            'return f"{sign}{whole:,}.{cents:02d} {currency}"',
        ],
    )


def build_client(w: Writer, project: Project, rng: random.Random) -> None:
    vendor = project.theme.vendor
    w.header(
        f"HTTP client for the {vendor} API; the only module that talks to it.",
        ["import logging", "import time", "from typing import Any"],
        ["import httpx"],
        [
            f"from {project.pkg}.config import Settings",
            f"from {project.pkg}.exceptions import UpstreamError",
        ],
    )
    w.add("logger = logging.getLogger(__name__)", "")
    w.const("RETRYABLE_STATUS", "(429, 502, 503, 504)")
    w.const("USER_AGENT", f'"{project.pkg}/{rng.randint(1, 3)}.{rng.randint(0, 9)}"')
    w.blank(2)
    cls = f"{vendor}Client"
    w.add(
        f"class {cls}:",
        f'    """Thin wrapper over httpx.Client with {vendor} auth and paging."""',
        "",
        "    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None):",
        "        self._settings = settings",
        "        self._http = httpx.Client(",
        "            base_url=settings.api_base_url,",
        "            timeout=settings.request_timeout_seconds,",
        '            headers={"User-Agent": USER_AGENT},',
        "            transport=transport or httpx.HTTPTransport(retries=1),",
        "        )",
        "",
    )
    json_line = "        return response.json()"
    w.anchors["json_return"] = json_line
    w.func(
        "_request",
        ["method: str", "path: str", "**params: Any"],
        "Any",
        "One call with status handling; raises UpstreamError with the body for the logs.",
        [
            "response = self._http.request(method, path, params=params)",
            "if response.status_code >= 400:",
            '    logger.warning("%s %s -> %s", method, path, response.status_code)',
            "    raise UpstreamError(response.status_code, response.text[:200])",
            "return response.json()",
        ],
        owner=cls,
        tags=("http",),
    )
    for e in project.entities[:3]:
        w.blank()
        w.func(
            f"fetch_{e.name}",
            [f"{e.name}_id: int"],
            "dict[str, Any]",
            f"Raw {e.name} payload; parsing lives in the service layer.",
            [f'return self._request("GET", f"/{e.plural}/{{{e.name}_id}}")'],
            owner=cls,
            tags=("fetch",),
        )
        w.blank()
        w.func(
            f"list_{e.plural}",
            ['since: str = ""'],
            "list[dict[str, Any]]",
            "Walk every page; the API caps page size at 100.",
            [
                "items: list[dict[str, Any]] = []",
                "page = 1",
                "while True:",
                f'    batch = self._request("GET", "/{e.plural}", page=page, since=since)',
                '    items.extend(batch["data"])',
                '    if not batch.get("next_page"):',
                "        return items",
                "    page += 1",
                "    time.sleep(0.2)",
            ],
            owner=cls,
        )
    w.blank()
    w.func("close", [], "None", "Release pooled connections.", ["self._http.close()"], owner=cls)
