"""Episodes: the sub-tasks of a session (a bug fix, a feature, a dependency upgrade).

Each episode is driven by a user request and plants its facts as it goes:
the failing command and its exact error, files read (including a near-miss
sibling), files created and modified with a one-line change description, a
decision with rationale and rejected alternatives, and checklist updates."""

from __future__ import annotations

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.feature_model import Feature
from benchmark.transcript.synthetic.scenarios import Scenario, failed_test
from benchmark.transcript.synthetic.session import Session, Task
from benchmark.transcript.synthetic.topics import Decision, phrase_decision, phrase_why_not

SAY = resources.Wording("episodes.yaml")


def decide(s: Session, lead: str, decision: Decision, **task_kw) -> int:
    index = s.say(
        SAY("decide", lead=lead, decision=phrase_decision(s.rng, decision)).strip(), **task_kw
    )
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
        lead = SAY.pick(s.rng, "goal_lead", goal=goal.text)
        s.user(SAY("goal_ask", lead=lead, text=text))
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
        SAY("wrap", wrap=rng.choice(topics.WRAPS), summary=summary),
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
    t_repro = steps.unique_task(s, SAY("task_reproduce", command=m.command))
    t_fix = steps.unique_task(s, SAY("task_fix", error_type=m.error_type, target=sc.target))
    t_suite = steps.unique_task(s, SAY("task_suite", target=sc.target))
    pattern, where = sc.grep
    s.grep(
        SAY("grep_first", ack=rng.choice(topics.ACKS), pattern=pattern),
        pattern,
        where,
        add=[t_repro, t_fix, t_suite],
    )
    paths = [sc.target]
    if sc.sibling and sc.sibling != sc.target and p.exists(sc.sibling):
        paths.append(sc.sibling)
    sibling = SAY("read_sibling", sibling=sc.sibling) if len(paths) > 1 else SAY("read_alone")
    index = s.read(SAY.pick(rng, "read_code", target=sc.target, sibling=sibling), paths)
    if len(paths) > 1:
        s.fact("distractor", sc.target, sc.sibling, index, of="file_modified", target=sc.target)
    err = steps.failed_run(
        s,
        SAY.pick(rng, "reproduce"),
        m.command,
        m.output,
        m.purpose,
        m.error,
        m.error_type,
    )
    for rel in sc.related[: rng.choice((1, 2))]:
        if p.exists(rel) and rel not in paths:
            s.read(SAY.pick(rng, "read_related", rel=rel), [rel])
    decide(s, SAY("reproduced", diagnosis=m.diagnosis), sc.decision, close=[t_repro])
    lead = SAY.pick(rng, "apply_lead")
    s.edit(SAY("apply", lead=lead, change=m.change), m.fix_path, m.old, m.new, m.change)
    m.after()
    changes = [m.change]
    n = sc.near
    if n and n.command == m.verify:
        # The re-run itself surfaces the second failure: same command, one detail different.
        c_i, o_i = s.bash(SAY.pick(rng, "rerun_same"), n.command, n.output)
        err["details"]["fixed_at"] = o_i
    elif n:
        _, v_out = s.bash(SAY.pick(rng, "rerun_test"), m.verify, steps.verify_output(s, m))
        err["details"]["fixed_at"] = v_out
        c_i, o_i = s.bash(SAY.pick(rng, "widen"), n.command, n.output)
    else:
        _, v_out = s.bash(
            SAY.pick(rng, "verify"), m.verify, steps.verify_output(s, m), close=[t_fix]
        )
        err["details"]["fixed_at"] = v_out
    if n:
        s.fact("distractor", m.error, n.error, o_i, of="error", target=m.error, command=n.command)
        if n.command != m.command:
            s.fact("distractor", m.purpose, n.command, c_i, of="command", target=m.command)
        text = SAY("second_failure", diagnosis=n.diagnosis, change=n.change)
        s.edit(text, n.fix_path, n.old, n.new, n.change)
        n.after()
        s.bash(SAY("rerun"), n.verify, steps.verify_output(s, n), close=[t_fix])
        changes.append(n.change)
    s.bash(SAY.pick(rng, "suite_lead"), SAY("suite_command"), steps.full_suite(s), close=[t_suite])
    summary = SAY("bug_summary", error=m.error, changes="; ".join(changes))
    commit = SAY("bug_commit", thing=sc.thing.removeprefix("the "))
    _wrap(s, summary, sc.thing, sc.behaviour, p.test_path(sc.target), [], goal, commit)


def feature(s: Session, f: Feature, goal: Task | None) -> None:
    p, rng = s.project, s.rng
    intro(s, goal, f.request)
    t_mod = steps.unique_task(s, SAY("task_write", path=f.module.path))
    t_tests = steps.unique_task(s, SAY("task_cover", thing=f.thing, path=f.test.path))
    t_wire = steps.unique_task(s, SAY("task_wire", thing=f.thing, path=f.wiring.path))
    s.read(SAY("read_plug", ack=rng.choice(topics.ACKS)), f.reads[:1], add=[t_mod, t_tests, t_wire])
    if len(f.reads) > 1 and rng.random() < 0.8:
        s.read(SAY("read_also", path=f.reads[1]), f.reads[1:2])
    decide(s, SAY("design"), f.decision)
    s.write(SAY("create", path=f.module.path), f.module, f.title)
    s.write(SAY("create_tests", path=f.test.path), f.test, SAY("tests_title", thing=f.thing))
    command = SAY("test_command", path=f.test.path)
    purpose = SAY("run_purpose", thing=f.thing)
    if f.dependency:
        d = f.dependency
        error = SAY("missing_module", module=d.module)
        first = SAY("missing_import", pkg=p.pkg)
        output = outputs.collection_error(p, rng, f.test.path, error, first)
        output = output.replace(f"    {first}\n", _import_frames(s, f, d.module))
        err = steps.failed_run(
            s, SAY("run_new"), command, output, purpose, error, "ModuleNotFoundError"
        )
        site = outputs.site_packages(p)
        _, pip_out = s.bash(
            SAY("not_installed", package=d.package),
            SAY("install_command", package=d.package),
            outputs.pip_install(d.package, d.version, "", [], site),
        )
        err["details"]["fixed_at"] = pip_out
        req = p.file("requirements.txt")
        pin = SAY("pin_line", package=d.package, version=d.version)
        old, new = requirement_edit(req.text, d.package, pin)
        text = SAY("pin", package=d.package, version=d.version)
        change = SAY("pin_change", package=d.package, version=d.version)
        e_i = s.edit(text, "requirements.txt", old, new, change)
        reason = SAY("pin_reason")
        s.fact("version", d.package, d.version, e_i, pin=pin, reason=reason, rejected="")
    fail = failed_test(f.test, f.bug_test, f.bug_error)
    output = outputs.pytest_run(p, rng, [f.test.path], [fail], quiet=True)[0]
    err = steps.failed_run(
        s,
        SAY.pick(rng, "run_tests"),
        command,
        output,
        purpose,
        fail.line,
        f.bug_error.split(":")[0] if ":" in f.bug_error else "AssertionError",
        plant_command=not f.dependency,
    )
    s.edit(
        SAY("bug_fix", diagnosis=f.bug_diagnosis, change=f.bug_change),
        f.module.path,
        f.bug_old,
        f.bug_new,
        f.bug_change,
        close=[t_mod],
    )
    _, v_out = s.bash(
        SAY("rerun"),
        command,
        outputs.pytest_run(p, rng, [f.test.path], [], quiet=True)[0],
        close=[t_tests],
    )
    err["details"]["fixed_at"] = v_out
    w = f.wiring
    s.edit(SAY("wire", change=w.change), w.path, w.old, w.new, w.change, close=[t_wire])
    s.bash(SAY("full_suite"), SAY("suite_command"), steps.full_suite(s))
    summary = SAY(
        "feature_summary", module=f.module.path, test=f.test.path, wiring=w.change, bug=f.bug_change
    )
    behaviour = SAY("feature_behaviour", key=f.key)
    commit = SAY("feature_commit", thing=f.thing.removeprefix("the "))
    _wrap(s, summary, f.thing, behaviour, f.test.path, [], goal, commit)


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
    line = f.module.line_of(dep_line)
    return SAY(
        "import_frames", first_import=first_import, path=f.module.path, line=line, dep_line=dep_line
    )
