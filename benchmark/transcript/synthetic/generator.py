"""Generate a long, realistic coding-agent session with planted ground truth.

``generate(seed, target_tokens)`` builds a fictional project from the seed,
plans a series of episodes (features, bug fixes, dependency upgrades) and
emits them as OpenAI chat messages until the session reaches
``target_tokens``. Everything derives from ``random.Random`` instances seeded
from ``seed``, so the same seed and target give the same transcript.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import benchmark.transcript.synthetic.bugs_calls as bugs_calls
import benchmark.transcript.synthetic.bugs_config as bugs_config
import benchmark.transcript.synthetic.bugs_db as bugs_db
import benchmark.transcript.synthetic.bugs_tools as bugs_tools
import benchmark.transcript.synthetic.episodes as episodes
import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.reviews as reviews
import benchmark.transcript.synthetic.steps as steps
import benchmark.transcript.synthetic.upgrades as upgrades
from benchmark.transcript.models import PlantedFact, Transcript
from benchmark.transcript.synthetic.codegen import build_file
from benchmark.transcript.synthetic.deps import PINS, Pin
from benchmark.transcript.synthetic.feature_model import title as feature_title
from benchmark.transcript.synthetic.features import FEATURES
from benchmark.transcript.synthetic.project import Project, make_project
from benchmark.transcript.synthetic.scenarios import Scenario
from benchmark.transcript.synthetic.session import Session, Stop, Task
from benchmark.transcript.synthetic.tables import bug_stories, project_values
from benchmark.transcript.synthetic.vocab import AGENT_NAMES

BugBuilder = Callable[[Project, random.Random, str], "Scenario | None"]

# In this order the session falls back from a kind that no longer applies to the next one.
BUG_KINDS: dict[str, BugBuilder] = {
    "constant": bugs_config.constant,
    "key_error": bugs_calls.key_error,
    "type_kwarg": bugs_calls.type_kwarg,
    "settings_attr": bugs_config.settings_attr,
    "no_table": bugs_db.no_table,
    "zero_div": bugs_tools.zero_div,
    "lint_unused": bugs_tools.lint_unused,
    "json_empty": bugs_tools.json_empty,
    "date_format": bugs_tools.date_format,
    "mypy_union": bugs_db.mypy_union,
    "schema_422": bugs_db.schema_422,
    "integrity": bugs_db.integrity,
}


@dataclass
class Step:
    category: str  # bug | feature | upgrade
    key: str  # bug kind, feature key or package name
    hint: str = ""
    title: str = ""


def _plan(project: Project, rng: random.Random, target: int) -> list[Step]:
    features = list(FEATURES)
    rng.shuffle(features)
    pins = list(PINS)
    rng.shuffle(pins)
    if "retry" in features[:4]:
        pins = [pin for pin in pins if pin.package != "tenacity"]
    else:
        features.remove("retry")
    kinds = list(BUG_KINDS)
    rng.shuffle(kinds)
    count = min(max(6, target // 6000 + 4), 120)
    first = ["feature", "bug", "upgrade"]
    rng.shuffle(first)
    plan: list[Step] = []
    used_pins: list[Pin] = []
    one_shots_used: set[str] = set()
    for i in range(count):
        category = first[i] if i < 3 else rng.choices(("bug", "feature", "upgrade"), (5, 2, 3))[0]
        if category == "feature" and not features:
            category = "bug"
        if category == "upgrade" and not pins:
            category = "bug"
        if category == "feature":
            key = features.pop(0)
            plan.append(Step("feature", key, title=feature_title(project, key)))
        elif category == "upgrade":
            pin = pins.pop(0)
            used_pins.append(pin)
            plan.append(
                Step(
                    "upgrade",
                    pin.package,
                    title=f"sort out the {pin.package} upgrade that broke CI",
                )
            )
        else:
            options = [k for k in kinds if k not in one_shots_used]
            key = options[i % len(options)] if options else "constant"
            if bug_stories()[key].has("once"):
                one_shots_used.add(key)
            hint = _hint(project, rng, key)
            title = bug_stories()[key].text("title", {**project_values(project), "hint": hint})
            plan.append(Step("bug", key, hint=hint, title=title))
    project.pins = used_pins
    return plan


def _hint(project: Project, rng: random.Random, kind: str) -> str:
    if kind == "settings_attr":
        return rng.choice(project.theme.commands)
    if kind in ("key_error", "schema_422", "mypy_union"):
        return rng.choice(project.entities[:3]).name
    if kind in ("constant", "type_kwarg"):
        return project.service_path(rng.choice(project.entities))
    return ""


def _system_prompt(project: Project, rng: random.Random) -> str:
    name = rng.choice(AGENT_NAMES)
    major = project.python.rsplit(".", 1)[0]
    lines = [
        f"You are {name}, an autonomous software engineering agent. You work in the repository "
        f"at {project.root} (Python {major}) on behalf of the user, through tools whose output "
        "you see.",
        "",
        "Tools (call them with JSON arguments):",
        '- read_file {"path": string}: return the full text of a file, path relative to the '
        "repository root.",
        '- write_file {"path": string, "content": string}: create a new file with exactly this '
        "content.",
        '- edit_file {"path": string, "old_str": string, "new_str": string}: replace one exact, '
        "unique occurrence of old_str in an existing file.",
        '- bash {"command": string}: run a shell command in the repository root; you get stdout '
        "and stderr followed by the exit code.",
        '- grep {"pattern": string, "path": string}: search for a literal string under a path; '
        "returns file:line:text matches.",
        "",
        "How to work:",
        "- Reproduce a problem before changing code, and re-run the failing command after every "
        "fix.",
        "- Prefer small, reviewable edits over rewriting files.",
        "- When you add or pin a dependency, say which version and why.",
        "- State design decisions with the reason and the alternatives you rejected.",
        "- Keep a running task list in your messages as a markdown checklist (`- [ ]` open, "
        "`- [x]` done) and update it as you go.",
        "- Never push, deploy or touch production data; the user reviews commits locally.",
    ]
    return "\n".join(lines)


def _task_message(project: Project, goals: list[Step]) -> str:
    t = project.theme
    items = "\n".join(f"{i}. {step.title}" for i, step in enumerate(goals, 1))
    return (
        f"Hi! I'm {project.developer}. We're working on {project.pkg}, {t.summary}; the code is "
        f"in {project.root}. Before the {t.milestone} release I'd like to get through a few "
        "things:\n"
        f"{items}\n\nI'll bring more as we go. Please run the tests after each change, pin "
        "anything you have to pin with a reason, and keep a running task list so I can see "
        "where we are."
    )


def _orientation(s: Session, goals: list[Task]) -> None:
    p, rng = s.project, s.rng
    s.bash(
        "I'll start by getting oriented in the repository.",
        "ls",
        outputs.ls_tree(p, ""),
        add=goals,
        heading="Task list:",
    )
    s.bash(
        "",
        f"ls src/{p.pkg} tests",
        outputs.with_exit(
            outputs.ls_tree(p, f"src/{p.pkg}").rsplit("\n\n", 1)[0]
            + "\n\ntests:\n"
            + outputs.ls_tree(p, "tests").rsplit("\n\n", 1)[0],
            0,
        ),
    )
    s.bash("Recent history:", "git log --oneline -8", outputs.git_log(s.commits))
    s.read("Reading the README and the dependency list.", ["README.md", "requirements.txt"])
    s.read("And the settings module, since everything reads it.", [p.src("config")])
    s.say(
        rng.choice(
            (
                f"The layout is clear: services under src/{p.pkg}/services, persistence in "
                "repositories, "
                f"and the {p.theme.vendor} client in client.py. I'll take the items in order.",
                f"Got the picture: {len(p.planned)} files, services per entity, one HTTP client "
                "for "
                f"{p.theme.vendor}. Starting with the first item.",
            )
        )
    )


def _history(project: Project, rng: random.Random) -> list[tuple[str, str]]:
    e = project.entities
    messages = [
        "Initial import",
        f"Add {e[0].name} service and repository",
        f"Add {e[1].plural} endpoints",
        f"{project.theme.vendor} client: follow next_page links",
        "CI: run ruff and mypy",
        f"Fix {project.theme.commands[1]} --dry-run output",
        "Bump version",
        f"Add {e[2].name} reports",
    ]
    return [(outputs.short_sha(rng), m) for m in messages]


def _run(s: Session, plan: list[Step]) -> None:
    p = s.project
    goals = plan[:3]
    s.user(_task_message(p, goals))
    goal_tasks = [steps.unique_task(s, step.title) for step in goals]
    _orientation(s, goal_tasks)
    for i, step in enumerate(plan):
        _episode(s, step, goal_tasks[i] if i < len(goal_tasks) else None)
    while True:  # past the plan: fix whatever still applies, otherwise review code
        if s.rng.random() < 0.5 or not _bug(s, Step("bug", s.rng.choice(list(BUG_KINDS))), None):
            reviews.review(s)


def _episode(s: Session, step: Step, goal: Task | None) -> None:
    rng = s.rng
    if step.category == "feature":
        episodes.feature(s, FEATURES[step.key](s.project, rng), goal)
    elif step.category == "upgrade":
        pin = next(pin for pin in PINS if pin.package == step.key)
        upgrades.upgrade(s, pin, goal)
    elif not _bug(s, step, goal):
        reviews.review(s, goal)


def _bug(s: Session, step: Step, goal: Task | None) -> bool:
    """Run a bug episode of ``step.key``, or of another kind if that one no longer applies."""
    order = [step.key] + [k for k in BUG_KINDS if k != step.key]
    for kind in order:
        scenario = BUG_KINDS[kind](s.project, s.rng, step.hint if kind == step.key else "")
        if scenario is not None:
            episodes.bug(s, scenario, goal)
            return True
    return False


def generate(seed: int, target_tokens: int, transcript_id: str | None = None) -> Transcript:
    """A synthetic session of at least ``target_tokens`` tokens (cl100k), deterministic by seed."""
    rng = random.Random(seed)
    project = make_project(seed, build_file)
    plan = _plan(project, rng, target_tokens)
    session = Session(project=project, rng=rng, target=target_tokens)
    session.commits = _history(project, rng)
    session.system(_system_prompt(project, rng))
    with contextlib.suppress(Stop):
        _run(session, plan)
    return Transcript(
        id=transcript_id or f"synthetic-s{seed}-t{target_tokens}",
        source=f"synthetic:seed={seed}",
        messages=session.messages,
        ground_truth=[PlantedFact(**fact) for fact in session.facts],
    )
