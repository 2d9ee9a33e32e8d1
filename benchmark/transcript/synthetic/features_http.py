"""Feature requests around HTTP endpoints: cursor pagination and health checks."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.feature_model import Feature, finish, test_module
from benchmark.transcript.synthetic.project import Project, SourceFile
from benchmark.transcript.synthetic.scenarios import append_edit


def pagination(project: Project, rng: random.Random) -> Feature:
    pkg, e = project.pkg, project.main
    path = project.src("pagination")
    bug_line = "    return int(created), datetime.fromisoformat(ident)"
    module = resources.render("feature_pagination.py.tmpl", bug_line=bug_line)
    tests = test_module(
        project.test_path(path),
        f"{pkg}.pagination",
        [
            "from datetime import datetime, timezone",
            "",
            "import pytest",
            "",
            f"from {pkg}.pagination import decode_cursor, encode_cursor",
        ],
        {
            "test_cursor_round_trips": [
                "when = datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)",
                "assert decode_cursor(encode_cursor(when, 42)) == (when, 42)",
            ],
            "test_cursor_is_url_safe": [
                "cursor = encode_cursor(datetime(2024, 5, 1, tzinfo=timezone.utc), 7)",
                "assert '+' not in cursor and '/' not in cursor",
            ],
            "test_garbage_cursor_is_rejected": [
                "with pytest.raises(ValueError):",
                "    decode_cursor('bm90LWEtY3Vyc29y')",
            ],
        },
    )
    api = project.file(project.src("api"))
    route = (
        f'@app.get("/{e.plural}")\n'
        f"def list_{e.plural}(cursor: str | None = None, service: {e.cls}Service = "
        f"Depends(get_{e.name}_service)):\n"
        f'    """Keyset-paginated list; pass next_cursor back to get the next page."""\n'
        f"    after = decode_cursor(cursor) if cursor else (datetime.min, 0)\n"
        f"    items = service.list_after(*after)\n"
        f'    next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if items else ""\n'
        f'    return {{"items": items, "next_cursor": next_cursor}}'
    )
    old, new = append_edit(api, route)
    fixed = "    return datetime.fromisoformat(created), int(ident)"
    wiring = (project.src("api"), old, new)
    return finish(
        project, "pagination", {}, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def health(project: Project, rng: random.Random) -> Feature:
    pkg = project.pkg
    path = project.src("health")
    bug_line = '        return {"ok": False, "database": str(exc)}'
    module = resources.render(
        "feature_health.py.tmpl", slow_query_ms=rng.choice((100, 250, 500)), bug_line=bug_line
    )
    tests = test_module(
        project.test_path(path),
        f"{pkg}.health",
        [
            "from sqlalchemy import create_engine",
            "",
            f"from {pkg}.health import check_database",
        ],
        {
            "test_health_ok_with_sqlite": [
                "assert check_database(create_engine('sqlite://'))['status'] == 'ok'"
            ],
            "test_health_reports_database_down": [
                "engine = create_engine('sqlite:////missing-dir/db.sqlite')",
                "assert check_database(engine)['status'] == 'down'",
            ],
            "test_health_reports_timing": [
                "assert check_database(create_engine('sqlite://'))['database_ms'] >= 0"
            ],
        },
    )
    api = project.file(project.src("api"))
    route = (
        '@app.get("/health")\ndef health_endpoint():\n'
        '    """503 drains this instance; only the database decides."""\n'
        "    report = check_database(engine)\n"
        '    status_code = 200 if report["status"] == "ok" else 503\n'
        "    return JSONResponse(report, status_code=status_code)"
    )
    old, new = append_edit(api, route)
    fixed = '        return {"status": "down", "database": str(exc)}'
    wiring = (project.src("api"), old, new)
    return finish(project, "health", {}, SourceFile(path, module), tests, wiring, (bug_line, fixed))
