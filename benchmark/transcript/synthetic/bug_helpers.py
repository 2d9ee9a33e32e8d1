"""Helpers shared by the bug scenarios: pytest output, CLI frames, near-miss paths."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Project, SourceFile


def pytest_output(
    project: Project,
    rng: random.Random,
    test_path: str,
    failures: list[TestFailure],
    only: str = "",
) -> str:
    return outputs.pytest_run(project, rng, [test_path], failures, quiet=True, only=only)[0]


def new_value(rng: random.Random, old: int) -> int:
    options = [old * 2, old * 3, max(old // 2, 1), old + rng.choice((5, 10, 30, 100))]
    options = [v for v in options if v != old]
    return rng.choice(options)


def cli_frames(project: Project, command: str) -> list[tuple[str, int, str, str]]:
    cli_path = project.src("cli")
    cli = project.file(cli_path)
    frames = outputs.runpy_frames(project, "cli")
    frames.append((f"{project.root}/{cli_path}", cli.line_of("    cli()"), "<module>", "cli()"))
    frames += outputs.click_frames(project)
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


def function_lines(source: SourceFile, name: str) -> list[str]:
    lines = source.text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = start + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[start:end]
