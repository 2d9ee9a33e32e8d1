"""Dependency-upgrade episodes: a release breaks the project, the agent pins it with a reason."""

from __future__ import annotations

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.deps import Pin
from benchmark.transcript.synthetic.episodes import decide, intro, requirement_edit
from benchmark.transcript.synthetic.scenarios import failed_test, function_lines
from benchmark.transcript.synthetic.session import Session, Task
from benchmark.transcript.synthetic.tables import bug_stories, project_values


def upgrade(s: Session, pin: Pin, goal: Task | None) -> None:
    p, rng = s.project, s.rng
    pkg, good, bad = pin.package, pin.good, pin.bad
    used = p.src(pin.used_in)
    test_path = p.test_path(used) if p.exists(p.test_path(used)) else "tests/test_api.py"
    site = outputs.site_packages(p)
    error = pin.error.replace("{site}", site)
    intro(
        s,
        goal,
        rng.choice(
            (
                f"Dependabot bumped {pkg} to {bad} overnight and CI went red. Can you sort it out?",
                f"I ran `pip install -U {pkg}` to pick up a security fix, it installed {bad}, and "
                "now the "
                "tests fail. Can you look?",
                f"The fresh CI image pulled {pkg} {bad} and {test_path} fails. What happened?",
            )
        ),
    )
    t_find = steps.unique_task(s, f"find out why {pkg} {bad} breaks {pin.used_in}.py")
    t_pin = steps.unique_task(s, f"pin {pkg} or port {pin.used_in}.py to {bad}")
    command = f"pytest {test_path} -q"
    output = _pin_failure(s, pin, used, test_path, error)
    err = steps.failed_run(
        s,
        f"{rng.choice(topics.ACKS)} Reproducing with what's installed:",
        command,
        output,
        f"run the tests against {pkg} {bad}",
        error,
        error.split(":")[0],
        add=[t_find, t_pin],
    )
    _, show_i = s.bash(
        "Checking the installed version:",
        f"pip show {pkg}",
        outputs.pip_show(pkg, bad, site, [], [p.pkg]),
    )
    s.fact("distractor", pkg, bad, show_i, of="version", target=good)
    s.read(f"The traceback ends in our code in {used}:", [used])
    usage = pin.usage.replace("{pkg}", p.pkg)
    s.grep("Any other place that does the same?", usage.split("(")[0].strip()[:40], "src")
    values = {**project_values(p), "package": pkg, "good": good, "bad": bad}
    decision = bug_stories()["upgrade"].decision({**values, "used_in": pin.used_in})
    decide(s, f"Found it: {pin.reason}.", decision, close=[t_find])
    req = p.file("requirements.txt")
    old, new = requirement_edit(req.text, pkg, f"{pkg}=={good}  # {bad} breaks {pin.used_in}.py")
    e_i = s.edit(
        f"I'll pin {pkg} to {good} because {pin.reason}.",
        "requirements.txt",
        old,
        new,
        f"pinned {pkg}=={good} ({bad} breaks {pin.used_in}.py)",
    )
    s.fact("version", pkg, good, e_i, pin=f"{pkg}=={good}", reason=pin.reason, rejected=bad)
    s.bash(
        "Installing the pinned version:",
        f"pip install '{pkg}=={good}'",
        outputs.pip_install(pkg, good, bad, [], site),
    )
    _, v_out = s.bash(
        "And the tests again:",
        command,
        outputs.pytest_run(p, rng, [test_path], [], quiet=True)[0],
        close=[t_pin],
    )
    err["details"]["fixed_at"] = v_out
    later = [steps.unique_task(s, f"port {pin.used_in}.py to {pkg} {bad} and drop the pin")]
    if rng.random() < 0.5:
        later = steps.follow_ups(s, f"the {pkg} pin", f"needing {pkg} {good}", test_path)
    summary = f"{pkg} is pinned to {good} in requirements.txt; {bad} stays blocked until we port."
    s.say(
        summary,
        add=later,
        close=[goal] if goal else [],
        full=True,
        heading=rng.choice(topics.CLOSED_HEADINGS),
    )
    if rng.random() < 0.7:
        steps.commit(s, f"Pin {pkg} to {good}")
    if rng.random() < 0.45:
        steps.housekeeping(s)


def _pin_failure(s: Session, pin: Pin, used: str, test_path: str, error: str) -> str:
    p, rng = s.project, s.rng
    source = p.file(used)
    usage = pin.usage.replace("{pkg}", p.pkg)
    if pin.import_time:
        tests = p.file(test_path)
        first = next(line for line in tests.text.splitlines() if line.startswith(f"from {p.pkg}."))
        out = outputs.collection_error(p, rng, test_path, error, first)
        chain = f"    {first}\n"
        if not used.endswith(test_path.removeprefix("tests/test_")):
            api = p.file(p.src("api"))
            via = next(line for line in api.text.splitlines() if f"{pin.used_in} import" in line)
            chain += f"{p.src('api')}:{api.line_of(via)}: in <module>\n    {via}\n"
        chain += f"{used}:{source.line_of(usage)}: in <module>\n    {usage}\n"
        return out.replace(f"    {first}\n", chain, 1)
    tests = p.file(test_path)
    def_line = next(line for line in pin.snippet.splitlines() if line.startswith("def "))
    func = next(fn for fn in source.funcs if fn.def_line == def_line)
    test_id = next((t for t in tests.tests if t.startswith(f"test_{func.name}_")), tests.tests[0])
    src_lines = source.text.splitlines()
    start = src_lines.index(func.def_line)
    stop = next(i for i in range(start, len(src_lines)) if usage in src_lines[i])
    lines = function_lines(tests, test_id.split("[")[0])
    at = next((i for i, line in enumerate(lines) if f"{func.name}(" in line), len(lines) - 1)
    inner = (src_lines[start : stop + 1], f"{used}:{stop + 1}")
    fail = failed_test(tests, test_id, error, at, inner=inner)
    return outputs.pytest_run(p, rng, [test_path], [fail], quiet=True)[0]
