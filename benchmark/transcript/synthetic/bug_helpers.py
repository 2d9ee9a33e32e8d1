"""Helpers shared by the bug scenarios: CLI frames and output, near-miss paths, new values."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project

BUG_TABLES: dict = resources.yaml_data("bug_tables.yaml")


def new_value(rng: random.Random, old: int) -> int:
    options = [old * 2, old * 3, max(old // 2, 1), old + rng.choice((5, 10, 30, 100))]
    options = [v for v in options if v != old]
    return rng.choice(options)


def declarations(table: str) -> list[tuple[str, str, str]]:
    """(name, type, default) rows of the table ``table`` in ``data/bug_tables.yaml``."""
    return [(name, kind, default) for name, kind, default in BUG_TABLES[table]]


def cli_output(project: Project, command: str, dry: bool) -> str:
    n = 3 + len(command) % 17
    word = "would change" if dry else "changed"
    return outputs.with_exit(f"{command}: {n} {project.main.plural} {word}", 0)


def cli_frames(project: Project, command: str, run: bool = False) -> list[outputs.Frame]:
    """Frames of ``python -m pkg.cli COMMAND`` down to the command function, and with
    ``run`` one more: its call of the service's ``run_*`` method."""
    cli_path = project.src("cli")
    cli = project.file(cli_path)
    frames = outputs.library_frames(project, "python_m")
    frames.append((f"{project.root}/{cli_path}", cli.line_of("    cli()"), "<module>", "cli()"))
    frames += outputs.library_frames(project, "click")
    if run:
        name = command.replace("-", "_")
        call = f"service.run_{name}("
        code = f"changed = {call}started, dry_run=dry_run)"
        frames.append((f"{project.root}/{cli_path}", cli.line_of(call), f"{name}_command", code))
    return frames


def sibling_of(project: Project, path: str) -> str:
    """A near-miss path beside ``path`` (db.py vs db_utils.py, service vs repository)."""
    pairs = {
        project.src("db"): project.src("db_utils"),
        project.src("db_utils"): project.src("db"),
        project.src("client"): project.src("config"),
        project.src("reports"): project.src("tasks"),
        project.src("schemas"): project.src("models"),
        project.src("api"): project.src("cli"),
        project.src("utils"): project.src("db_utils"),
    }
    for e in project.entities:
        repo = project.repository_path(e)
        pairs[project.service_path(e)] = (
            repo if project.exists(repo) else project.test_path(project.service_path(e))
        )
        pairs[repo] = project.service_path(e)
    return pairs.get(
        path, project.test_path(path) if project.exists(project.test_path(path)) else ""
    )
