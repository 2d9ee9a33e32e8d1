"""Step helpers shared by every episode: verification runs, follow-ups, commits, housekeeping."""

from __future__ import annotations

import re
from typing import Any

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.scenarios import Problem, append_edit
from benchmark.transcript.synthetic.session import Session, Task


def full_suite(s: Session) -> str:
    return outputs.pytest_run(s.project, s.rng, s.project.test_paths(), [], quiet=True)[0]


def verify_output(s: Session, problem: Problem) -> str:
    kind = problem.verify_kind
    if kind == "pytest":
        target = problem.verify.split()[1]
        only = target if "::" in target else ""
        return outputs.pytest_run(
            s.project, s.rng, problem.verify_paths, [], quiet=True, only=only
        )[0]
    if kind == "cli":
        return problem.verify_note
    if kind == "ruff":
        return outputs.ruff_output([], 0, 0)
    checked = sum(1 for p in s.project.planned if p.startswith("src/") and p.endswith(".py"))
    return outputs.mypy_output([], checked)


def failed_run(
    s: Session,
    text: str,
    command: str,
    output: str,
    purpose: str,
    error: str,
    error_type: str,
    *,
    plant_command: bool = True,
    **task_kw: Any,
) -> dict[str, Any]:
    """Run a command that fails; plant it (unless already planted) and its error, and return
    the error fact so the fix can record where it was fixed."""
    c_i, o_i = s.bash(text, command, output, **task_kw)
    if plant_command:
        s.fact("command", purpose, command, c_i, failed=True, error=error, result_index=o_i)
    return s.fact(
        "error", command, error, o_i, error_type=error_type, command_index=c_i, fixed_at=None
    )


def unique_task(s: Session, text: str, closable: str = "", thing: str = "") -> Task:
    """A task whose text was never used before in the session (task texts are fact keys)."""
    taken = {t.text for t in s.tasks}
    candidate, n = text, 2
    while candidate in taken:
        candidate = f"{text} ({n})"
        n += 1
    return s.new_task(candidate, closable, thing)


def follow_ups(s: Session, thing: str, behaviour: str, test_path: str) -> list[Task]:
    """One or two deferred tasks; some can be closed by a later housekeeping edit."""
    rng, p = s.rng, s.project
    chosen = rng.sample(topics.FOLLOW_UPS, rng.choice((0, 1, 1, 2)))
    tasks = []
    for template, closable in chosen:
        text = template.format(
            thing=thing,
            dev=p.developer,
            vendor=p.theme.vendor,
            behaviour=behaviour,
            milestone=p.theme.milestone,
        )
        if closable == "test":
            closable = f"test:{test_path}" if test_path and p.exists(test_path) else ""
        tasks.append(unique_task(s, text, closable, thing))
    return tasks


def commit(s: Session, message: str) -> None:
    if not s.changed:
        return
    rng = s.rng
    if rng.random() < 0.5:
        modified = [p for p in s.changed if p not in s.created]
        s.bash(
            rng.choice(("Checking what changed before committing:", "Quick look at the diff:")),
            "git status --short" if rng.random() < 0.5 else "git diff --stat",
            _status(s, modified),
        )
    sha = outputs.short_sha(rng)
    adds = sum(a for a, _ in s.changed.values())
    dels = sum(d for _, d in s.changed.values())
    s.bash(
        rng.choice(
            ("Committing this step.", "I'll commit this so it's easy to review.", "Committing.")
        ),
        f"git add -A && git commit -q -m '{message}' && git log --oneline -1",
        outputs.git_commit(s.branch, sha, message, len(s.changed), adds, dels),
    )
    s.commits.append((sha, message))
    s.changed.clear()
    s.created.clear()


def _status(s: Session, modified: list[str]) -> str:
    lines = [f" M {p}" for p in modified] + [f"?? {p}" for p in s.created]
    return outputs.with_exit("\n".join(lines), 0)


def housekeeping(s: Session) -> None:
    """Close one older follow-up that a small edit can finish (README, CHANGELOG, a test)."""
    candidates = [t for t in s.open_tasks() if t.closable]
    if not candidates:
        return
    p, rng = s.project, s.rng
    task = candidates[0] if rng.random() < 0.6 else rng.choice(candidates)
    if task.closable in topics.USER_REPORTS:
        s.user(rng.choice(topics.USER_REPORTS[task.closable]).format(task=task.text))
        s.say(
            rng.choice(
                (
                    "Thanks, ticking that off.",
                    "Good to know; marking it done.",
                    "Great, one less open item.",
                )
            ),
            close=[task],
            full=True,
        )
        return
    if task.closable == "readme":
        readme = p.file("README.md")
        title = topics.cap(task.thing.removeprefix("the "))
        body = (
            f"## {title}\n\n{title} is on by default; see `src/{p.pkg}/config.py` for the "
            "settings that control it."
        )
        old, new = append_edit(readme, body)
        s.edit(
            f"While I'm here, an older item from the list: {task.text}.",
            "README.md",
            old,
            new,
            f"documented {task.thing}",
            close=[task],
            full=True,
        )
    elif task.closable == "changelog":
        entry = f"- {topics.cap(task.thing)}."
        s.edit(
            f"Ticking off an older item: {task.text}.",
            "CHANGELOG.md",
            "## Unreleased\n",
            f"## Unreleased\n\n{entry}",
            f"added a changelog entry for {task.thing}",
            close=[task],
            full=True,
        )
    elif task.closable.startswith("test:"):
        path = task.closable.removeprefix("test:")
        source = p.file(path)
        name = f"test_regression_{len(s.tasks)}_{rng.randint(100, 999)}"
        called = re.findall(r"^    result = (?:\w+\.)?(\w+)\(", source.text, re.M) or [
            "make_" + p.main.name
        ]
        body = (
            f'def {name}():\n    """Regression: {task.thing}."""\n    assert callable({called[0]})'
        )
        old, new = append_edit(source, body)
        s.edit(
            f"Quick one from the list: {task.text}.",
            path,
            old,
            new,
            f"added a regression test for {task.thing}",
        )
        source.tests.append(name)
        s.bash(
            "Running it:",
            f"pytest {path} -q",
            outputs.pytest_run(p, rng, [path], [], quiet=True)[0],
            close=[task],
            full=True,
        )
    else:
        return
