"""Bug scenarios about configuration: spec constants and missing settings."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic import outputs
from benchmark.transcript.synthetic.bug_helpers import (
    cli_frames,
    new_value,
    pytest_output,
    sibling_of,
)
from benchmark.transcript.synthetic.outputs import TestFailure
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.scenarios import (
    Problem,
    Scenario,
    add_user_test,
    cli_output,
    failure_section,
)
from benchmark.transcript.synthetic.topics import Decision


def constant(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    paths = [project.src("config"), project.src("db_utils")]
    paths += [project.service_path(e) for e in project.entities]
    paths.sort(key=lambda p: p != hint)
    for path in paths:
        source = project.file(path)
        test_path = project.test_path(path)
        existing = project.file(test_path).tests if project.exists(test_path) else []
        consts = [
            (k, int(v))
            for k, v in source.consts.items()
            if v.isdigit()
            and source.text.count(f"\n{k} = {v}\n") == 1
            and f"test_{k.lower()}_matches_spec" not in existing
        ]
        if len(consts) >= 2 and project.exists(test_path):
            break
    else:
        return None
    (c1, a1), (c2, a2) = rng.sample(consts, 2)
    b1, b2 = new_value(rng, a1), new_value(rng, a2)
    tests = project.file(test_path)
    t1, t2 = f"test_{c1.lower()}_matches_spec", f"test_{c2.lower()}_matches_spec"
    if t1 in tests.tests or t2 in tests.tests:
        return None
    lines1 = [f"def {t1}():", f"    assert {c1} == {b1}"]
    lines2 = [f"def {t2}():", f"    assert {c2} == {b2}"]

    add_user_test(tests, t1, "", [f"assert {c1} == {b1}"])
    add_user_test(tests, t2, "", [f"assert {c2} == {b2}"])

    def problem(
        const: str, old: int, new: int, name: str, lines: list[str], broad: bool
    ) -> Problem:
        node = f"{test_path}::{name}"
        loc = f"{test_path}:{tests.line_of(f'def {name}(') + 1}"
        fail = TestFailure(
            node, f"assert {old} == {new}", failure_section(lines, loc, f"assert {old} == {new}")
        )
        command = f"pytest {test_path} -q" if broad else f"pytest {node} -q"
        verb = "raised" if new > old else "lowered"
        return Problem(
            command=command,
            purpose=f"run the new {const} test",
            output=pytest_output(project, rng, test_path, [fail], only="" if broad else node),
            error=fail.line,
            error_type="AssertionError",
            fix_path=path,
            old=f"{const} = {old}",
            new=f"{const} = {new}",
            change=f"{verb} {const} from {old} to {new}",
            diagnosis=f"`{const}` in {path} is still {old}; the new test expects {new}.",
            verify=command,
            verify_kind="pytest",
            verify_paths=[test_path],
        )

    module = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
    return Scenario(
        kind="constant",
        report=(
            f"{project.developer} changed the spec for {module}: I've added tests for the "
            f"new limits at the bottom of {test_path}. Can you make the code match? "
            f"Start with {t1}."
        ),
        target=path,
        related=[test_path],
        sibling=sibling_of(project, path),
        grep=(c1, "src"),
        main=problem(c1, a1, b1, t1, lines1, broad=False),
        near=problem(c2, a2, b2, t2, lines2, broad=True),
        decision=Decision(
            topic=f"how to apply the new {c1}",
            choice=f"changing {c1} in {module} itself",
            alternatives=(
                f"overriding {c1} per environment through Settings",
                f"keeping {a1} and adjusting the new test",
            ),
            rationale=(
                f"the spec applies to every environment and nothing reads {c1} from the "
                "environment today"
            ),
            against=(
                "a per-environment override adds a knob nobody asked for and lets staging drift "
                "from production"
            ),
        ),
        thing=f"the new {c1} value",
        behaviour=f"asking for {c1} = {b1}",
    )


NEW_SETTINGS = (
    ("export_dir", "str", '"exports"'),
    ("batch_size", "int", "500"),
    ("webhook_url", "str", '""'),
    ("retention_days", "int", "90"),
    ("default_currency", "str", '"EUR"'),
    ("rate_limit_per_minute", "int", "120"),
    ("notify_on_failure", "bool", "True"),
    ("archive_prefix", "str", '"archive/"'),
    ("sync_window_hours", "int", "24"),
    ("max_workers", "int", "4"),
)


def settings_attr(project: Project, rng: random.Random, hint: str) -> Scenario | None:
    config_path, cli_path = project.src("config"), project.src("cli")
    config, cli = project.file(config_path), project.file(cli_path)
    anchor = config.anchors["settings_last_field"]
    free = [
        s
        for s in NEW_SETTINGS
        if f"    {s[0]}:" not in config.text and f"settings.{s[0]}" not in cli.text
    ]
    if len(free) < 2 or config.text.count(anchor) != 1:
        return None
    (n1, ty1, d1), (n2, ty2, d2) = rng.sample(free, 2)
    cmd = hint if hint in project.theme.commands else rng.choice(project.theme.commands)
    fn = f"{cmd.replace('-', '_')}_command"
    debug = f'    logger.debug("{cmd} using {n1}=%s {n2}=%s", settings.{n1}, settings.{n2})'
    command = f"python -m {project.pkg}.cli {cmd} --dry-run"
    line1 = f"    {n1}: {ty1} = {d1}"
    line2 = f"    {n2}: {ty2} = {d2}"

    start = cli.text.index(f"def {fn}(")
    marker = "    settings = load_settings()\n"
    at = cli.text.index(marker, start) + len(marker)
    cli.text = cli.text[:at] + debug + "\n" + cli.text[at:]

    def problem(name: str, old: str, new: str, near: bool) -> Problem:
        frames = cli_frames(project, cmd)
        frames.append((f"{project.root}/{cli_path}", cli.line_of(debug.strip()), fn, debug.strip()))
        error = f"AttributeError: 'Settings' object has no attribute '{name}'"

        def after() -> None:
            config.anchors["settings_last_field"] = new.splitlines()[-1]

        return Problem(
            command=command,
            purpose=f"dry-run {cmd}",
            output=outputs.with_exit(outputs.traceback(frames, error), 1),
            error=error,
            error_type="AttributeError",
            fix_path=config_path,
            old=old,
            new=new,
            change=f"added `{name}` to Settings",
            diagnosis=(
                f"{'The debug line also reads' if near else 'cli.py now reads'} "
                f"`settings.{name}`, but Settings in {config_path} has no such field."
            ),
            verify=command,
            verify_kind="cli",
            verify_note=cli_output(project, cmd, True),
            after=after,
        )

    main = problem(n1, anchor, f"{anchor}\n{line1}", False)
    near = problem(n2, line1, f"{line1}\n{line2}", True)

    return Scenario(
        kind="settings_attr",
        report=(
            f"`{command}` fails on staging since {project.developer} merged the logging change "
            f"in cli.py this morning. Can you take a look?"
        ),
        target=config_path,
        related=[cli_path],
        sibling=sibling_of(project, config_path) or project.test_path(config_path),
        grep=(f"settings.{n1}", "src"),
        main=main,
        near=near,
        decision=Decision(
            topic=f"where `{n1}` lives",
            choice=f"adding `{n1}` to Settings with a default of {d1}",
            alternatives=(
                "reading os.environ directly in cli.py",
                "a separate config file for the command",
            ),
            rationale=(
                "every other knob goes through load_settings() and the tests build Settings "
                "objects directly"
            ),
            against=(
                f"reading os.environ in cli.py would bypass the {project.pkg.upper()}_ prefix and "
                "the test fixtures"
            ),
        ),
        thing=f"the `{n1}` setting",
        behaviour=f"needing `{n1}` on staging",
    )
