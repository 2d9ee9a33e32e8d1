"""Bug scenarios about configuration: spec constants and missing settings."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.scenarios as sc
from benchmark.transcript.synthetic.bug_helpers import cli_frames, declarations, new_value
from benchmark.transcript.synthetic.project import Project

CONSTANT = resources.Wording("bug_code.yaml", "constant")
SETTINGS = resources.Wording("bug_code.yaml", "settings_attr")


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
            and source.text.count(f"\n{CONSTANT('line', const=k, value=v)}\n") == 1
            and CONSTANT("test_name", const=k.lower()) not in existing
        ]
        if len(consts) >= 2 and project.exists(test_path):
            break
    else:
        return None
    (c1, a1), (c2, a2) = rng.sample(consts, 2)
    b1, b2 = new_value(rng, a1), new_value(rng, a2)
    tests = project.file(test_path)
    names = [CONSTANT("test_name", const=c.lower()) for c in (c1, c2)]
    if any(name in tests.tests for name in names):
        return None
    for name, const, value in zip(names, (c1, c2), (b1, b2), strict=True):
        sc.add_user_test(tests, name, "", [CONSTANT("assertion", const=const, value=value)])

    def attempt(const: str, old: int, new: int, name: str, broad: bool) -> sc.Attempt:
        fail = sc.failed_test(tests, name, CONSTANT("failure", old=old, new=new))
        verb = CONSTANT("raised" if new > old else "lowered")
        values = {"const": const, "old": old, "new": new, "verb": verb}
        check = sc.pytest_check(project, rng, [fail], broad)
        old_line, new_line = (CONSTANT("line", const=const, value=v) for v in (old, new))
        return sc.Attempt(check, path, old_line, new_line, values)

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
        if SETTINGS("field_of", name=s[0]) not in config.text
        and SETTINGS("used_as", name=s[0]) not in cli.text
    ]
    if len(free) < 2 or config.text.count(anchor) != 1:
        return None
    (n1, ty1, d1), (n2, ty2, d2) = rng.sample(free, 2)
    cmd = hint if hint in project.theme.commands else rng.choice(project.theme.commands)
    fn = SETTINGS("function", cmd=cmd.replace("-", "_"))
    debug = SETTINGS("debug", cmd=cmd, n1=n1, n2=n2)
    command = SETTINGS("command", pkg=project.pkg, cmd=cmd)
    line1 = SETTINGS("field", name=n1, type=ty1, default=d1)
    line2 = SETTINGS("field", name=n2, type=ty2, default=d2)

    start = cli.text.index(SETTINGS("def_of", function=fn))
    marker = SETTINGS("load")
    at = cli.text.index(marker, start) + len(marker)
    cli.text = cli.text[:at] + SETTINGS("inserted", debug=debug) + cli.text[at:]

    def attempt(name: str, old: str, new: str) -> sc.Attempt:
        frames = cli_frames(project, cmd)
        frames.append((f"{project.root}/{cli_path}", cli.line_of(debug), fn, debug))
        error = SETTINGS("error", name=name)

        def after() -> None:
            config.anchors["settings_last_field"] = new.splitlines()[-1]

        check = sc.cli_check(project, cmd, command, outputs.traceback(frames, error), error, True)
        return sc.Attempt(check, config_path, old, new, {"name": name}, after)

    main = attempt(n1, anchor, f"{anchor}\n{line1}")
    near = attempt(n2, line1, f"{line1}\n{line2}")
    values = {"command": command, "cmd": cmd, "n1": n1, "d1": d1}
    return sc.finish(project, "settings_attr", values, main, near)
