"""Dependency-upgrade episodes: a release breaks the project, the agent pins it with a reason."""

from __future__ import annotations

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.deps import Pin
from benchmark.transcript.synthetic.episodes import decide, intro, requirement_edit
from benchmark.transcript.synthetic.scenarios import failed_test, function_lines
from benchmark.transcript.synthetic.session import Session, Task
from benchmark.transcript.synthetic.tables import bug_stories, project_values

SAY = resources.Wording("upgrades.yaml")


def upgrade(s: Session, pin: Pin, goal: Task | None) -> None:
    p, rng = s.project, s.rng
    pkg, good, bad = pin.package, pin.good, pin.bad
    used = p.src(pin.used_in)
    test_path = p.test_path(used) if p.exists(p.test_path(used)) else "tests/test_api.py"
    site = outputs.site_packages(p)
    error = pin.error.replace("{site}", site)
    w = {"pkg": pkg, "good": good, "bad": bad, "used_in": pin.used_in, "reason": pin.reason}
    intro(s, goal, SAY.pick(rng, "ask", test_path=test_path, **w))
    t_find = steps.unique_task(s, SAY("task_find", **w))
    t_pin = steps.unique_task(s, SAY("task_pin", **w))
    command = SAY("command", test_path=test_path)
    output = _pin_failure(s, pin, used, test_path, error)
    err = steps.failed_run(
        s,
        SAY("reproduce", ack=rng.choice(topics.ACKS)),
        command,
        output,
        SAY("reproduce_purpose", **w),
        error,
        error.split(":")[0],
        add=[t_find, t_pin],
    )
    show = outputs.pip_show(pkg, bad, site, [], [p.pkg])
    _, show_i = s.bash(SAY("show"), SAY("show_command", **w), show)
    s.fact("distractor", pkg, bad, show_i, of="version", target=good)
    s.read(SAY("read_used", used=used), [used])
    usage = pin.usage.replace("{pkg}", p.pkg)
    s.grep(SAY("grep_more"), usage.split("(")[0].strip()[:40], "src")
    values = {**project_values(p), "package": pkg, "good": good, "bad": bad}
    decision = bug_stories()["upgrade"].decision({**values, "used_in": pin.used_in})
    decide(s, SAY("found", **w), decision, close=[t_find])
    req = p.file("requirements.txt")
    old, new = requirement_edit(req.text, pkg, SAY("requirement", **w))
    e_i = s.edit(SAY("pin", **w), "requirements.txt", old, new, SAY("pin_change", **w))
    s.fact("version", pkg, good, e_i, pin=SAY("pin_fact", **w), reason=pin.reason, rejected=bad)
    install = outputs.pip_install(pkg, good, bad, [], site)
    s.bash(SAY("install"), SAY("install_command", **w), install)
    _, v_out = s.bash(
        SAY("rerun"),
        command,
        outputs.pytest_run(p, rng, [test_path], [], quiet=True)[0],
        close=[t_pin],
    )
    err["details"]["fixed_at"] = v_out
    later = [steps.unique_task(s, SAY("task_port", **w))]
    if rng.random() < 0.5:
        thing, behaviour = SAY("follow_up_thing", **w), SAY("follow_up_behaviour", **w)
        later = steps.follow_ups(s, thing, behaviour, test_path)
    s.say(
        SAY("summary", **w),
        add=later,
        close=[goal] if goal else [],
        full=True,
        heading=rng.choice(topics.CLOSED_HEADINGS),
    )
    if rng.random() < 0.7:
        steps.commit(s, SAY("commit", **w))
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
