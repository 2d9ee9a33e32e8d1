"""The task-success section as text and cells, shared by Markdown, HTML and the terminal so
they never disagree: what it means (one sentence), the rank correlation, the per-policy
table, the lost-fact x failed-resume table, and its Method note."""

from __future__ import annotations

from benchmark.report.cells import Cell, fmt, interval_cell
from benchmark.report.task_stats import METHOD, MIN_POLICIES, Correlation, Crosstab
from benchmark.report.task_success import TaskSuccess

HEADING = "Task success"
CAPTION = "Probe score vs task success"  # the section's figure, in the report's images


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def _bounds(low: float | None, high: float | None, signed: bool = False) -> str:
    if low is None or high is None:
        return "[n/a]"
    show = _signed if signed else fmt
    return f"[{show(low)}, {show(high)}]"


def correlation_line(c: Correlation) -> str:
    """``Spearman rho = 0.80 [0.40, 1.00] over 4 policies, 60 points``, or why it is n/a."""
    where = f"over {c.policies} policies, {c.points} points"
    if c.rho is None:
        return f"Spearman rho = n/a {where} ({c.note.removeprefix('n/a: ')})"
    return f"Spearman rho = {c.rho:.2f} {_bounds(c.low, c.high)} {where}"


def loss_line(table: Crosstab, control: bool = False) -> str:
    """The failure rate with a lost fact minus without, with its interval and counts."""
    who = "Control (uncompacted history)" if control else "Resume after compaction"
    counts = f"{table.points} points, {table.clusters} clusters"
    if table.difference is None:
        return f"{who}: failure rate with a lost probe fact minus without: n/a ({counts})"
    return (
        f"{who}: failure rate with a lost probe fact {fmt(table.rate_lost)}, without "
        f"{fmt(table.rate_kept)}, difference {_signed(table.difference)} "
        f"{_bounds(table.low, table.high, signed=True)} ({counts})"
    )


RANKS = {
    "none": "Too few distinct policies to say whether the probe score ranks them as task "
    "success does",
    "up": "Policies that score higher on the probes also finish more tasks (the rank "
    "correlation's interval lies above 0)",
    "down": "Policies that score higher on the probes finish fewer tasks (the rank "
    "correlation's interval lies below 0)",
    "open": "These runs do not show whether the probe score ranks policies as task success "
    "does (the rank correlation's interval holds 0 or is n/a)",
}
PREDICTS = {
    "none": "no two points differ in whether they lost a probe fact, so none tells whether "
    "a lost fact predicts a failed resume",
    "up": "a point that lost a probe fact fails its resume more often than one that lost none",
    "down": "a point that lost a probe fact fails its resume less often than one that lost none",
    "open": "a lost probe fact does not clearly predict a failed resume (the difference's "
    "interval holds 0 or is n/a)",
}


def _direction(value: float | None, low: float | None, high: float | None) -> str:
    """``none`` (no estimate), ``up``/``down`` (the interval excludes 0), else ``open``."""
    if value is None:
        return "none"
    if low is not None and low > 0:
        return "up"
    if high is not None and high < 0:
        return "down"
    return "open"


def meaning(task: TaskSuccess) -> str:
    """One sentence: does the probe score rank policies as task success does, and does a
    lost fact predict a failed resume (an interval that excludes 0, or not)."""
    c, lost = task.correlation, task.lost
    first = RANKS[_direction(c.rho, c.low, c.high)]
    second = PREDICTS[_direction(lost.difference, lost.low, lost.high)]
    return f"{first}; {second}."


def policy_cells(task: TaskSuccess) -> tuple[list[str], list[list[Cell]]]:
    """Per run: its probe overall and task success with their 95% CIs, the control's success,
    task retention, and what finishing cost."""
    header = [
        "run",
        "probe overall [95% CI]",
        "task success [95% CI]",
        "control success",
        "task retention",
        "steps to finish",
        "tokens to finish",
        "repeated tool calls",
        "points",
    ]
    body = [
        [
            Cell(p.label),
            interval_cell(p.probe_overall),
            interval_cell(p.success),
            interval_cell(p.success_control),
            interval_cell(p.retention),
            Cell(fmt(p.steps_to_finish, 1)),
            Cell("-" if p.tokens_to_finish is None else f"{p.tokens_to_finish:,.0f}"),
            Cell(fmt(p.repeated_tool_calls, 1)),
            Cell(str(p.points)),
        ]
        for p in task.policies
    ]
    return header, body


def crosstab_cells(task: TaskSuccess) -> tuple[list[str], list[list[Cell]]]:
    """Rows with a lost probe fact or none, by resume outcome; the control's beside them."""
    lost, control = task.lost, task.lost_control
    header = [
        "probe facts at the point",
        "resume failed",
        "resume succeeded",
        "failure rate",
        "control failed",
        "control failure rate",
    ]
    body = [
        [
            Cell("some lost (facts_lost > 0)"),
            Cell(str(lost.lost_failed)),
            Cell(str(lost.lost_succeeded)),
            Cell(fmt(lost.rate_lost)),
            Cell(str(control.lost_failed)),
            Cell(fmt(control.rate_lost)),
        ],
        [
            Cell("none lost (facts_lost = 0)"),
            Cell(str(lost.kept_failed)),
            Cell(str(lost.kept_succeeded)),
            Cell(fmt(lost.rate_kept)),
            Cell(str(control.kept_failed)),
            Cell(fmt(control.rate_kept)),
        ],
    ]
    return header, body


def lines(task: TaskSuccess) -> list[str]:
    """The section's sentences, in page order: the meaning, the correlation, the two
    failure-rate differences."""
    return [
        meaning(task),
        correlation_line(task.correlation) + ".",
        loss_line(task.lost) + ".",
        loss_line(task.lost_control, control=True) + ".",
    ]


def tables(task: TaskSuccess) -> list[tuple[str, tuple[list[str], list[list[Cell]]]]]:
    """The section's tables with their captions."""
    return [
        ("Per policy", policy_cells(task)),
        ("Lost probe fact x resume outcome, per point", crosstab_cells(task)),
    ]


def method_note(task: TaskSuccess) -> str:
    """How the section's numbers were computed."""
    return (
        "Task success: at each compaction point the agent resumes the task in its "
        "environment from the compacted history (the control from the uncompacted one) and "
        "the environment's evaluator scores it; a run's task success is its mean over points "
        "with the interval it logged (`task/success`). The rank correlation is Spearman's "
        "rho of the per-policy means over the points table (probe overall of the points "
        f"that have one, and success), over at least {MIN_POLICIES} policies; a point lost a "
        "probe fact when `facts_lost > 0`. Their 95% intervals: "
        f"{METHOD}, policies kept paired, seeded."
    )
