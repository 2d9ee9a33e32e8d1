"""Every metric name a job logs, stated once.

MLflow's chart view puts a metric in the section named by everything before its last
'/', titles the chart with the last segment, lists prefixed sections in sorted order
before "Model metrics" (keys without '/'), and charts a section's keys in sorted order.
So every key has a '/'; the section ``headline`` (sorting before every other section a
job logs) holds only the overall score and its 95% interval, so they are the first three
charts; the other summary values follow in ``headline/more``. A value's interval bounds
are ``<name>_lower``/``<name>_upper``, in the value's own section, named so that their
chart titles differ early (a cut title still tells them apart). Runs log the headline
first (``logging_order``), which is the column order of MLflow's evaluation-runs page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark.scoring.stats import Estimate

# The headline section, the first one MLflow shows: the overall score and its interval only.
HEADLINE = "headline"
OVERALL = "headline/overall"
# The rest of the summary, the section right after it.
HEADLINE_MORE = "headline/more"
OVERALL_PCT = "headline/more/overall_pct"
SCORE_PER_KILOTOKEN = "headline/more/score_per_kilotoken"
COMPRESSION_RATIO = "headline/more/compression_ratio"
KEPT_FRACTION = "headline/more/kept_fraction"
FAILED_FRACTION = "headline/more/failed_fraction"
FACTS_SURVIVAL = "headline/more/facts_survival"
RETENTION = "headline/more/retention"
COST_USD = "headline/more/cost_usd"  # in a job's run, beside the usage's own total:
LLM_COST_USD = "llm/cost_usd"  # every run with LLM calls (benchmark.llm.usage)

# Counts.
PROBES_TOTAL = "probes/total"
PROBES_REPEATED = "probes/repeated"
PROBES_UNFINISHED = "probes/unfinished"
PROBES_FAILED = "probes/failed"
PROBES_FAILED_ANSWERS = "probes/failed_answers"
PROBES_FAILED_JUDGMENTS = "probes/failed_judgments"
POINTS_TOTAL = "points/total"
POINTS_OVER_WINDOW = "points/over_window"
POINTS_COMPACTION_FAILED = "points/compaction_failed"
POINTS_PROBE_WRITER_FAILED = "points/probe_writer_failed"
POINTS_NEXT_ACTION_SKIPPED = "points/next_action_skipped"  # only when next_action is asked
TOKENS_BEFORE = "tokens/before"
TOKENS_AFTER = "tokens/after"

# The control arm (control=true) beside retention.
RETENTION_PROBES = "retention/probes"
CONTROL_OVERALL = "retention/control_overall"
CONTROL_FAILURES = "retention/control_failures"

# Per compaction point: a table, not step metrics (steps would join different sessions).
POINTS_TABLE = "points_table.json"

# Task success (issue 29): the agent resumed in its environment after compaction, scored by
# the environment's evaluator; the control resumes from the uncompacted history. Each value's
# 95% interval bounds sit beside it (``ci_names``).
TASK_SUCCESS = "task/success"
TASK_SUCCESS_CONTROL = "task/success_control"
TASK_RETENTION = "task/retention"
TASK_STEPS_TO_FINISH = "task/steps_to_finish"
TASK_TOKENS_TO_FINISH = "task/tokens_to_finish"
TASK_REPEATED_TOOL_CALLS = "task/repeated_tool_calls"
TASK_POINTS_TABLE = "task_points_table.json"  # one row per (transcript, point): see report
# Retention = success / control success on the same points (benchmark/task_success/report.py).
TASK_POINTS = "task/points"
TASK_FAILED_RESUMES = "task/failed_resumes"


CI_BOUNDS = ("_lower", "_upper")  # suffixes of the 95% interval's bounds
OLD_CI_BOUNDS = ("_ci_low", "_ci_high")  # runs logged before the bounds were renamed


def ci_names(name: str) -> tuple[str, str]:
    """The lower and upper 95% interval bounds of metric ``name``, beside it."""
    return f"{name}{CI_BOUNDS[0]}", f"{name}{CI_BOUNDS[1]}"


def current_names(metrics: dict[str, float]) -> dict[str, float]:
    """A run's metrics under today's names: runs logged before the bounds were renamed have
    ``_ci_low``/``_ci_high``, and before ``headline/more`` the summary sat in ``headline``."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        for old, new in zip(OLD_CI_BOUNDS, CI_BOUNDS, strict=True):
            if key.endswith(old):
                key = key.removesuffix(old) + new
        leaf = key.removeprefix(HEADLINE + "/")
        stays = leaf in {"overall", *(f"overall{b}" for b in CI_BOUNDS)}
        if key != leaf and "/" not in leaf and not stays:
            key = f"{HEADLINE_MORE}/{leaf}"
        out.setdefault(key, value)
    return out


def logging_order(keys: list[str]) -> list[str]:
    """``keys`` in the order a run logs them: the overall score and its bounds first, then
    the rest of the headline, then every other key sorted (as MLflow's charts sort them)."""
    first = [OVERALL, *ci_names(OVERALL)]
    lead = [k for k in first if k in keys]
    rest = sorted(k for k in keys if k not in first)
    return (
        lead
        + [k for k in rest if k.startswith(HEADLINE + "/")]
        + [k for k in rest if not k.startswith(HEADLINE + "/")]
    )


def with_interval(name: str, estimate: Estimate) -> dict[str, float]:
    """Metric ``name`` and, where its interval is defined (two or more clusters), its bounds."""
    if not estimate.defined:
        return {name: estimate.mean}
    low, high = ci_names(name)
    return {name: estimate.mean, low: estimate.low, high: estimate.high}


def dimension(name: str) -> str:
    """A rubric dimension's roll-up score."""
    return f"rubric/{name}"


def criterion(name: str) -> str:
    """A rubric criterion's mean score."""
    return f"rubric/criterion/{name}"


def type_overall(probe_type: str) -> str:
    """One probe type's overall score (its interval sits beside it in section ``type``)."""
    return f"type/{probe_type}"


def type_dimension(probe_type: str, name: str) -> str:
    """One probe type's score on a rubric dimension."""
    return f"type/{probe_type}/{name}"


def type_control_agreement(probe_type: str) -> str:
    """One probe type's agreement with the answer from the uncompacted context
    (``benchmark.scoring.next_action_score``)."""
    return f"type/{probe_type}/control_agreement"


def type_survival(probe_type: str) -> str:
    """One probe type's fact survival."""
    return f"type/{probe_type}/facts_survival"


def section(key: str) -> str:
    """The chart section MLflow shows ``key`` in: everything before its last '/'."""
    return key.rpartition("/")[0]


def layout_problems(keys: list[str] | dict[str, float]) -> list[str]:
    """What in a run's metric keys breaks the layout above: a key without '/' (it would
    land in "Model metrics"), or an interval bound without its value in its section."""
    problems = [f"{key}: no '/'" for key in keys if "/" not in key]
    for key in keys:
        for bound in CI_BOUNDS:
            if key.endswith(bound):
                value = key.removesuffix(bound)
                missing = [k for k in (value, *ci_names(value)) if k not in keys]
                problems += [f"{key}: no {k}" for k in missing]
    return problems
