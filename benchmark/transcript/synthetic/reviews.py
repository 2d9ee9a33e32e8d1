"""Review episodes: read-only walks through the code, the fallback once scenarios run out.

They cycle through the project's files (as edited so far), so long sessions
keep reading real, changing code instead of repeating one block; each review
ends with concrete observations and, sometimes, a follow-up task.
"""

from __future__ import annotations

import benchmark.transcript.synthetic.resources as resources
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.episodes import intro
from benchmark.transcript.synthetic.project import Func, SourceFile
from benchmark.transcript.synthetic.session import Session, Task

SAY = resources.Wording("reviews.yaml")


def _observations(s: Session, source: SourceFile) -> list[str]:
    rng = s.rng
    notes: list[str] = []
    funcs: list[Func] = [f for f in source.funcs if not f.name.startswith("_")]
    if funcs:
        f = rng.choice(funcs)
        notes.append(SAY.pick(rng, "function_note", qual=f.qual))
    for name, value in list(source.consts.items())[:1]:
        notes.append(SAY("constant_note", name=name, value=value, path=source.path))
    if source.path.startswith("tests/"):
        size = SAY("size_tests", count=len(source.tests))
    else:
        size = SAY("size_functions", count=len(source.funcs))
    notes.append(SAY.pick(rng, "file_note", path=source.path, lines=source.lines, size=size))
    return notes


def review(s: Session, goal: Task | None = None) -> None:
    p, rng = s.project, s.rng
    paths = [path for path in p.planned if path.endswith(".py") and "__init__" not in path]
    start = s.review_cursor % len(paths)
    a, b = paths[start], paths[(start + 1 + rng.randrange(len(paths) - 1)) % len(paths)]
    s.review_cursor = start + 1
    intro(s, goal, SAY.pick(rng, "ask", a=a, b=b, dev=p.developer))
    s.read(SAY.pick(rng, "read_both"), [a, b])
    source = p.file(a)
    probe = next((f.name for f in source.funcs if not f.name.startswith("_")), "")
    if probe:
        s.grep(SAY("grep_tests", probe=probe), f"{probe}(", "tests")
    notes = _observations(s, source) + _observations(s, p.file(b))[:1]
    later: list[Task] = []
    if rng.random() < 0.4:
        thing = SAY("follow_up_thing", name=a.rsplit("/", 1)[-1])
        later = steps.follow_ups(s, thing, SAY("follow_up_behaviour"), p.test_path(a))
    findings = "\n".join(SAY("finding", note=note) for note in notes)
    s.say(
        SAY("findings", notes=findings, verdict=SAY.pick(rng, "verdict")),
        add=later,
        close=[goal] if goal else [],
        heading=rng.choice(topics.CLOSED_HEADINGS),
        full=bool(later or goal),
    )
    if rng.random() < 0.3:
        steps.housekeeping(s)
