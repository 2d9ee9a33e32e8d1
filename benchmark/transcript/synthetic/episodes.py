"""Episodes: the sub-tasks of a session (a bug fix, a feature, a dependency upgrade).

Each episode is driven by a user request and plants its facts as it goes:
the failing command and its exact error, files read (including a near-miss
sibling), files created and modified with a one-line change description, a
decision with rationale and rejected alternatives, and checklist updates."""

from __future__ import annotations

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.feature_model import Feature
from benchmark.transcript.synthetic.scenarios import Scenario, failed_test
from benchmark.transcript.synthetic.session import Session, Task
from benchmark.transcript.synthetic.topics import Decision, phrase_decision, phrase_why_not


def decide(s: Session, lead: str, decision: Decision, **task_kw) -> int:
    index = s.say(f"{lead} {phrase_decision(s.rng, decision)}".strip(), **task_kw)
    s.fact(
        "decision",
        decision.topic,
        decision.choice,
        index,
        rationale=decision.rationale,
        alternatives=list(decision.alternatives),
    )
    if s.rng.random() < 0.35:
        question, answer = phrase_why_not(s.rng, decision)
        s.user(question)
        s.say(answer)
    return index


def intro(s: Session, goal: Task | None, text: str) -> None:
    s.episode_start = len(s.tasks)
    if goal:
        lead = s.rng.choice(
            (
                f"Next from the list: {goal.text}.",
                f'Let\'s do "{goal.text}" now.',
                f"Okay, on to {goal.text}.",
            )
        )
        s.user(f"{lead} {text}")
    else:
        s.user(text)


def _wrap(
    s: Session,
    summary: str,
    thing: str,
    behaviour: str,
    test_path: str,
    close: list[Task],
    goal: Task | None,
    commit_message: str,
) -> None:
    rng = s.rng
    later = steps.follow_ups(s, thing, behaviour, test_path)
    heading = rng.choice(topics.CLOSED_HEADINGS)
    s.say(
        f"{rng.choice(topics.WRAPS)} {summary}",
        add=later,
        close=close + ([goal] if goal else []),
        heading=heading,
        full=True,
    )
    if rng.random() < 0.7:
        steps.commit(s, commit_message)
    if rng.random() < 0.5:
        s.carry = rng.choice(topics.USER_OKS)
    if rng.random() < 0.45:
        steps.housekeeping(s)


def bug(s: Session, sc: Scenario, goal: Task | None) -> None:
    p, rng, m = s.project, s.rng, sc.main
    intro(s, goal, sc.report)
    t_repro = steps.unique_task(s, f"reproduce `{m.command}`")
    t_fix = steps.unique_task(s, f"fix the {m.error_type} in {sc.target}")
    t_suite = steps.unique_task(s, f"run the full suite after fixing {sc.target}")
    pattern, where = sc.grep
    s.grep(
        f"{rng.choice(topics.ACKS)} First, where is `{pattern}` used?",
        pattern,
        where,
        add=[t_repro, t_fix, t_suite],
    )
    paths = [sc.target]
    if sc.sibling and sc.sibling != sc.target and p.exists(sc.sibling):
        paths.append(sc.sibling)
    index = s.read(
        rng.choice(
            (
                f"Reading {sc.target}"
                + (f" and {sc.sibling} next to it." if len(paths) > 1 else "."),
                "Let me read the code involved.",
                "Opening the relevant files.",
            )
        ),
        paths,
    )
    if len(paths) > 1:
        s.fact("distractor", sc.target, sc.sibling, index, of="file_modified", target=sc.target)
    err = steps.failed_run(
        s,
        rng.choice(
            (
                "Now reproducing:",
                "Let me reproduce it first.",
                "Running it to see the exact failure:",
            )
        ),
        m.command,
        m.output,
        m.purpose,
        m.error,
        m.error_type,
    )
    for rel in sc.related[: rng.choice((1, 2))]:
        if p.exists(rel) and rel not in paths:
            s.read(
                rng.choice(
                    (
                        f"Checking {rel} as well.",
                        f"And {rel}, which is involved:",
                        f"Let me also look at {rel}.",
                    )
                ),
                [rel],
            )
    decide(s, f"Reproduced. {m.diagnosis}", sc.decision, close=[t_repro])
    s.edit(
        f"{rng.choice(('Applying the fix:', 'The change:', 'Editing now:'))} {m.change}.",
        m.fix_path,
        m.old,
        m.new,
        m.change,
    )
    m.after()
    changes = [m.change]
    n = sc.near
    if n and n.command == m.verify:
        # The re-run itself surfaces the second failure: same command, one detail different.
        c_i, o_i = s.bash(
            rng.choice(("Re-running the same command:", "And again:")), n.command, n.output
        )
        err["details"]["fixed_at"] = o_i
    elif n:
        _, v_out = s.bash(
            rng.choice(("Re-running the test:", "And again:", "Verifying:")),
            m.verify,
            steps.verify_output(s, m),
        )
        err["details"]["fixed_at"] = v_out
        c_i, o_i = s.bash(
            rng.choice(
                (
                    "That one passes. Now the broader run:",
                    "Passing. Let me widen the run:",
                    "Good. Running the whole file:",
                )
            ),
            n.command,
            n.output,
        )
    else:
        _, v_out = s.bash(
            rng.choice(("Re-running the same command:", "And again:", "Verifying:")),
            m.verify,
            steps.verify_output(s, m),
            close=[t_fix],
        )
        err["details"]["fixed_at"] = v_out
    if n:
        s.fact("distractor", m.error, n.error, o_i, of="error", target=m.error, command=n.command)
        if n.command != m.command:
            s.fact("distractor", m.purpose, n.command, c_i, of="command", target=m.command)
        s.edit(
            f"A second, similar failure. {n.diagnosis} Fix: {n.change}.",
            n.fix_path,
            n.old,
            n.new,
            n.change,
        )
        n.after()
        s.bash("Re-running:", n.verify, steps.verify_output(s, n), close=[t_fix])
        changes.append(n.change)
    s.bash(
        rng.choice(("Full suite, to be sure nothing else moved:", "Now the whole suite:")),
        "pytest -q",
        steps.full_suite(s),
        close=[t_suite],
    )
    summary = f"The root cause was `{m.error}`; {'; '.join(changes)}."
    _wrap(
        s,
        summary,
        sc.thing,
        sc.behaviour,
        p.test_path(sc.target),
        [],
        goal,
        f"Fix {sc.thing.removeprefix('the ')}",
    )


def feature(s: Session, f: Feature, goal: Task | None) -> None:
    p, rng = s.project, s.rng
    intro(s, goal, f.request)
    t_mod = steps.unique_task(s, f"write {f.module.path}")
    t_tests = steps.unique_task(s, f"cover {f.thing} in {f.test.path}")
    t_wire = steps.unique_task(s, f"wire {f.thing} into {f.wiring.path}")
    s.read(
        f"{rng.choice(topics.ACKS)} Let me look at the code it plugs into.",
        f.reads[:1],
        add=[t_mod, t_tests, t_wire],
    )
    if len(f.reads) > 1 and rng.random() < 0.8:
        s.read(f"And {f.reads[1]}:", f.reads[1:2])
    decide(s, "Before writing anything, the design question.", f.decision)
    s.write(f"Creating {f.module.path}.", f.module, f.title)
    s.write(f"And its tests in {f.test.path}.", f.test, f"tests for {f.thing}")
    command = f"pytest {f.test.path} -q"
    if f.dependency:
        d = f.dependency
        error = f"ModuleNotFoundError: No module named '{d.module}'"
        output = outputs.collection_error(p, rng, f.test.path, error, f"from {p.pkg}.")
        output = output.replace(f"    from {p.pkg}.\n", _import_frames(s, f, d.module))
        err = steps.failed_run(
            s,
            "Running the new tests:",
            command,
            output,
            f"run the {f.thing} tests",
            error,
            "ModuleNotFoundError",
        )
        site = outputs.site_packages(p)
        _, pip_out = s.bash(
            f"`{d.package}` is not installed here yet.",
            f"pip install {d.package}",
            outputs.pip_install(d.package, d.version, "", [], site),
        )
        err["details"]["fixed_at"] = pip_out
        req = p.file("requirements.txt")
        old, new = requirement_edit(req.text, d.package, f"{d.package}=={d.version}")
        text = (
            f"I'll pin {d.package} to {d.version} in requirements.txt because that is the "
            "version I just tested against, and a new dependency should not float in CI."
        )
        e_i = s.edit(text, "requirements.txt", old, new, f"added {d.package}=={d.version}")
        s.fact(
            "version",
            d.package,
            d.version,
            e_i,
            pin=f"{d.package}=={d.version}",
            reason="new dependency, pinned to the tested version",
            rejected="",
        )
    fail = failed_test(f.test, f.bug_test, f.bug_error)
    output = outputs.pytest_run(p, rng, [f.test.path], [fail], quiet=True)[0]
    err = steps.failed_run(
        s,
        rng.choice(
            ("Now the tests themselves:", "Running the tests:", "Let's see what the tests say:")
        ),
        command,
        output,
        f"run the {f.thing} tests",
        fail.line,
        f.bug_error.split(":")[0] if ":" in f.bug_error else "AssertionError",
        plant_command=not f.dependency,
    )
    s.edit(
        f"{f.bug_diagnosis} Fixing it: {f.bug_change}.",
        f.module.path,
        f.bug_old,
        f.bug_new,
        f.bug_change,
        close=[t_mod],
    )
    _, v_out = s.bash(
        "Re-running:",
        command,
        outputs.pytest_run(p, rng, [f.test.path], [], quiet=True)[0],
        close=[t_tests],
    )
    err["details"]["fixed_at"] = v_out
    w = f.wiring
    s.edit(f"Now wiring it in: {w.change}.", w.path, w.old, w.new, w.change, close=[t_wire])
    s.bash("Full suite:", "pytest -q", steps.full_suite(s))
    summary = f"{f.module.path} and {f.test.path} are new; {w.change}; {f.bug_change}."
    _wrap(
        s,
        summary,
        f.thing,
        f"changing the {f.key} requirements",
        f.test.path,
        [],
        goal,
        f"Add {f.thing.removeprefix('the ')}",
    )


def requirement_edit(text: str, package: str, line: str) -> tuple[str, str]:
    lines = text.rstrip("\n").splitlines()
    for current in lines:
        name = current.split(">")[0].split("=")[0].split("<")[0].strip()
        if name == package and text.count(current) == 1:
            return current, line
    return lines[-1], f"{lines[-1]}\n{line}"


def _import_frames(s: Session, f: Feature, module: str) -> str:
    first_import = next(
        line for line in f.test.text.splitlines() if line.startswith(f"from {s.project.pkg}.")
    )
    dep_line = next(
        line
        for line in f.module.text.splitlines()
        if line.startswith((f"from {module}", f"import {module}"))
    )
    return (
        f"    {first_import}\n{f.module.path}:{f.module.line_of(dep_line)}: in <module>\n"
        f"    {dep_line}\n"
    )
