"""Feature requests around the upstream client: cache, retries, exports."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.feature_model import Feature, finish, test_module
from benchmark.transcript.synthetic.project import Project, SourceFile


def cache(project: Project, rng: random.Random) -> Feature:
    pkg, e = project.pkg, project.main
    ttl = rng.choice((60, 120, 300, 600))
    path = project.src("cache")
    bug_line = "            if age > self._ttl:"
    module = resources.render(
        "feature_cache.py.tmpl", project=project, ttl=ttl, bug_line=bug_line, e=e
    )
    tests = test_module(
        project.test_path(path),
        f"{pkg}.cache",
        [
            f"from {pkg}.cache import LocalBackend, ReadThroughCache",
            "",
            "",
            "class FakeClock:",
            "    def __init__(self):",
            "        self.now = 1000.0",
            "",
            "    def __call__(self) -> float:",
            "        return self.now",
            "",
            "",
            "def make_cache(ttl: int = 60):",
            "    clock = FakeClock()",
            "    return ReadThroughCache(LocalBackend(), ttl=ttl, clock=clock), clock",
        ],
        {
            "test_loader_called_once_while_fresh": [
                "cache, clock = make_cache()",
                "calls = []",
                "for _ in range(3):",
                "    cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "assert len(calls) == 1",
            ],
            "test_entry_expires_exactly_at_ttl": [
                "cache, clock = make_cache(ttl=60)",
                "calls = []",
                "cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "clock.now += 60",
                "cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "assert len(calls) == 2",
            ],
            "test_invalidate_forces_reload": [
                "cache, clock = make_cache()",
                "cache.get_or_load('k', lambda: 'old')",
                "cache.invalidate('k')",
                "assert cache.get_or_load('k', lambda: 'new') == 'new'",
            ],
            "test_keys_are_prefixed": [
                "backend = LocalBackend()",
                "ReadThroughCache(backend).get_or_load('k', lambda: 1)",
                "assert backend.get('k') is None",
            ],
        },
    )
    client = project.file(project.src("client"))
    fetch = next(f for f in client.funcs if f.name == f"fetch_{e.name}")
    body = f'        return self._request("GET", f"/{e.plural}/{{{e.name}_id}}")'
    old = f"{fetch.head}\n{body}"
    new = (
        f"{fetch.head}\n        return self._cache.get_or_load(\n            "
        f'f"{e.name}:{{{e.name}_id}}",\n'
        f'            lambda: self._request("GET", f"/{e.plural}/{{{e.name}_id}}"),\n        )'
    )
    fixed = "            if age >= self._ttl:"
    wiring = (project.src("client"), old, new)
    return finish(
        project, "cache", {"ttl": ttl}, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def retry(project: Project, rng: random.Random) -> Feature:
    pkg, vendor = project.pkg, project.theme.vendor
    base = rng.choice(("0.5", "1.0"))
    path = project.src("retry")
    bug_line = "    return min(BASE_DELAY_SECONDS * 2 ** attempt, MAX_DELAY_SECONDS)"
    module = resources.render(
        "feature_retry.py.tmpl", vendor=vendor, pkg=pkg, base=base, bug_line=bug_line
    )
    tests = test_module(
        project.test_path(path),
        f"{pkg}.retry",
        [
            "import random",
            "",
            "import pytest",
            "",
            f"from {pkg}.exceptions import UpstreamError",
            f"from {pkg}.retry import BASE_DELAY_SECONDS, MAX_DELAY_SECONDS, backoff_seconds, "
            "is_retryable, jittered",
        ],
        {
            "test_backoff_starts_at_base_delay": [
                "assert backoff_seconds(1) == BASE_DELAY_SECONDS"
            ],
            "test_backoff_doubles": ["assert backoff_seconds(3) == BASE_DELAY_SECONDS * 4"],
            "test_backoff_is_capped": ["assert backoff_seconds(40) == MAX_DELAY_SECONDS"],
            "test_retries_throttling_only": [
                "assert is_retryable(UpstreamError(429, 'slow down'))",
                "assert not is_retryable(UpstreamError(404, 'missing'))",
            ],
            "test_jitter_stays_in_window": [
                "rng = random.Random(7)",
                "assert all(0 <= jittered(2, rng) <= backoff_seconds(2) for _ in range(50))",
            ],
        },
    )
    client = project.file(project.src("client"))
    req = next(f for f in client.funcs if f.name == "_request")
    values = {"base": base, "doubled": float(base) * 2}
    fixed = "    return min(BASE_DELAY_SECONDS * 2 ** (attempt - 1), MAX_DELAY_SECONDS)"
    wiring = (project.src("client"), req.def_line, f"    @retry_upstream\n{req.def_line}")
    return finish(
        project, "retry", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def export(project: Project, rng: random.Random) -> Feature:
    pkg, e = project.pkg, project.main
    cols = ["id"] + [f.name for f in e.fields[:4]]
    path = project.src("exporters/csv_export")
    bug_line = "    written = 1"
    module = resources.render(
        "feature_export.py.tmpl", e=e, pkg=pkg, columns=tuple(cols), bug_line=bug_line
    )
    tests = test_module(
        project.test_path(path),
        f"{pkg}.exporters.csv_export",
        [
            "import csv",
            "",
            f"from {pkg}.exporters.csv_export import COLUMNS, export_csv, export_jsonl",
            f"from tests.conftest import make_{e.name}",
        ],
        {
            "test_export_returns_row_count": [
                "(tmp_path)",
                f"rows = [make_{e.name}(id=1), make_{e.name}(id=2)]",
                "assert export_csv(rows, tmp_path / 'out.csv') == 2",
            ],
            "test_export_writes_header_first": [
                "(tmp_path)",
                f"export_csv([make_{e.name}()], tmp_path / 'out.csv')",
                "with (tmp_path / 'out.csv').open() as handle:",
                "    assert tuple(next(csv.reader(handle))) == COLUMNS",
            ],
            "test_export_of_nothing_writes_only_header": [
                "(tmp_path)",
                "assert export_csv([], tmp_path / 'out.csv') == 0",
            ],
            "test_jsonl_one_line_per_record": [
                "(tmp_path)",
                f"export_jsonl([make_{e.name}(), make_{e.name}(id=9)], tmp_path / 'o.jsonl')",
                "assert (tmp_path / 'o.jsonl').read_text().count('\\n') == 2",
            ],
        },
    )
    anchor = 'if __name__ == "__main__":\n    cli()'
    command = (
        f'@cli.command("export-csv")\n@click.argument("target", type=click.Path())\n'
        f"def export_csv_command(target: str):\n"
        f'    """Write every {e.name} to TARGET as CSV."""\n'
        f"    from {pkg}.exporters.csv_export import export_csv\n\n"
        f"    service = {e.cls}Service.from_settings(load_settings())\n"
        f"    count = export_csv(service.iter_all(), Path(target))\n"
        f'    click.echo(f"exported {{count}} {e.plural} to {{target}}")\n\n\n'
    )
    values = {"largest": rng.choice((80, 150, 400))}
    wiring = (project.src("cli"), anchor, command + anchor)
    fixed = "    written = 0"
    return finish(
        project, "export", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )
