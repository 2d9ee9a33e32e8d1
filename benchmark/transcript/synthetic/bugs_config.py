"""Bug scenarios about configuration: spec constants and missing settings."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import cli_frames, declarations, new_value
from benchmark.transcript.synthetic.project import Project


def constant(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
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
    names = [f"test_{c.lower()}_matches_spec" for c in (c1, c2)]
    if any(name in tests.tests for name in names):
        return None
    for name, const, value in zip(names, (c1, c2), (b1, b2), strict=True):
        sc.add_user_test(tests, name, "", [f"assert {const} == {value}"])

    def attempt(const: str, old: int, new: int, name: str, broad: bool) -> sc.Attempt:
        fail = sc.failed_test(tests, name, f"assert {old} == {new}")
        verb = "raised" if new > old else "lowered"
        values = {"const": const, "old": old, "new": new, "verb": verb}
        check = sc.pytest_check(project, rng, [fail], broad)
        return sc.Attempt(check, path, f"{const} = {old}", f"{const} = {new}", values)

    main = attempt(c1, a1, b1, names[0], broad=False)
    near = attempt(c2, a2, b2, names[1], broad=True)
    values = {"test_path": test_path, "test": names[0], "c1": c1, "a1": a1, "b1": b1}
    return sc.finish(project, "constant", values, main, near)


NEW_SETTINGS = declarations("new_settings")


def settings_attr(project: Project, rng: random.Random, hint: str) -> sc.Scenario | None:
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
    debug = f'logger.debug("{cmd} using {n1}=%s {n2}=%s", settings.{n1}, settings.{n2})'
    command = f"python -m {project.pkg}.cli {cmd} --dry-run"
    line1 = f"    {n1}: {ty1} = {d1}"
    line2 = f"    {n2}: {ty2} = {d2}"

    start = cli.text.index(f"def {fn}(")
    marker = "    settings = load_settings()\n"
    at = cli.text.index(marker, start) + len(marker)
    cli.text = f"{cli.text[:at]}    {debug}\n{cli.text[at:]}"

    def attempt(name: str, old: str, new: str) -> sc.Attempt:
        frames = cli_frames(project, cmd)
        frames.append((f"{project.root}/{cli_path}", cli.line_of(debug), fn, debug))
        error = f"AttributeError: 'Settings' object has no attribute '{name}'"

        def after() -> None:
            config.anchors["settings_last_field"] = new.splitlines()[-1]

        check = sc.cli_check(project, cmd, command, outputs.traceback(frames, error), error, True)
        return sc.Attempt(check, config_path, old, new, {"name": name}, after)

    main = attempt(n1, anchor, f"{anchor}\n{line1}")
    near = attempt(n2, line1, f"{line1}\n{line2}")
    values = {"command": command, "cmd": cmd, "n1": n1, "d1": d1}
    return sc.finish(project, "settings_attr", values, main, near)
