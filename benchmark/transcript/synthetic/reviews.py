"""Review episodes: read-only walks through the code, the fallback once scenarios run out.

They cycle through the project's files (as edited so far), so long sessions
keep reading real, changing code instead of repeating one block; each review
ends with concrete observations and, sometimes, a follow-up task.
"""

from __future__ import annotations

import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.topics as topics
from benchmark.transcript.synthetic.episodes import intro
from benchmark.transcript.synthetic.project import Func, SourceFile
from benchmark.transcript.synthetic.session import Session, Task

ASKS = (
    "Before the release, can you review {a} and {b}? Just point out anything risky; no changes "
    "unless something is clearly broken.",
    "I'm onboarding someone next week. Can you explain how {a} fits together with {b}?",
    "Quick sanity check: read {a} and {b} and tell me if anything looks off.",
    "{dev} asked whether {a} is safe to refactor. Can you have a look, together with {b}?",
)


def _observations(s: Session, source: SourceFile) -> list[str]:
    rng = s.rng
    notes: list[str] = []
    funcs: list[Func] = [f for f in source.funcs if not f.name.startswith("_")]
    if funcs:
        f = rng.choice(funcs)
        notes.append(
            rng.choice(
                (
                    f"`{f.qual}` has no test for its error path; only the happy path is covered.",
                    f"`{f.qual}` is called from several places, so its signature is effectively "
                    "public API now.",
                    f"`{f.qual}` has a one-line docstring that explains why it exists; good.",
                )
            )
        )
    for name, value in list(source.consts.items())[:1]:
        notes.append(
            f"`{name} = {value}` is hard-coded in {source.path}; Settings would be a "
            "better home if ops ever needs to tune it."
        )
    size = (
        f"{len(source.tests)} tests"
        if source.path.startswith("tests/")
        else f"{len(source.funcs)} functions"
    )
    notes.append(
        rng.choice(
            (
                f"{source.path} is {source.lines} lines and reads cleanly.",
                f"{source.path} has {size} and no circular imports.",
                f"Nothing in {source.path} touches the network directly, which keeps it testable.",
            )
        )
    )
    return notes


def review(s: Session, goal: Task | None = None) -> None:
    p, rng = s.project, s.rng
    paths = [path for path in p.planned if path.endswith(".py") and "__init__" not in path]
    start = s.review_cursor % len(paths)
    a, b = paths[start], paths[(start + 1 + rng.randrange(len(paths) - 1)) % len(paths)]
    s.review_cursor = start + 1
    intro(s, goal, rng.choice(ASKS).format(a=a, b=b, dev=p.developer))
    s.read(rng.choice(("Reading both.", "Let me read them.", "Opening both files.")), [a, b])
    source = p.file(a)
    probe = next((f.name for f in source.funcs if not f.name.startswith("_")), "")
    if probe:
        s.grep(f"Where is `{probe}` exercised in the tests?", f"{probe}(", "tests")
    notes = _observations(s, source) + _observations(s, p.file(b))[:1]
    later: list[Task] = []
    if rng.random() < 0.4:
        later = steps.follow_ups(
            s, f"the {a.rsplit('/', 1)[-1]} review notes", "the current API", p.test_path(a)
        )
    text = "Findings:\n" + "\n".join(f"- {note}" for note in notes)
    s.say(
        f"{text}\n\n{rng.choice(('No changes needed right now.', 'Nothing blocking.'))}",
        add=later,
        close=[goal] if goal else [],
        heading=rng.choice(topics.CLOSED_HEADINGS),
        full=bool(later or goal),
    )
    if rng.random() < 0.3:
        steps.housekeeping(s)
