"""Every metric name a job logs, stated once.

MLflow's chart view puts a metric in the section named by everything before its last
'/', titles the chart with the last segment, and lists prefixed sections in sorted order
before "Model metrics" (keys without '/'). So every key has a '/'; the values a reader
wants first share the prefix ``headline`` (sorting before every other section prefix a
job logs); and a value's interval bounds are ``<name>_ci_low``/``<name>_ci_high``, in the
value's own section, never a section of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark.stats import Estimate

# The headline section: the first one MLflow shows.
HEADLINE = "headline"
OVERALL = "headline/overall"
OVERALL_PCT = "headline/overall_pct"
SCORE_PER_KILOTOKEN = "headline/score_per_kilotoken"
COMPRESSION_RATIO = "headline/compression_ratio"
KEPT_FRACTION = "headline/kept_fraction"
FAILED_FRACTION = "headline/failed_fraction"
FACTS_SURVIVAL = "headline/facts_survival"
RETENTION = "headline/retention"
COST_USD = "headline/cost_usd"  # in a job's run, beside the usage's own total:
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


def ci_names(name: str) -> tuple[str, str]:
    """The lower and upper 95% interval bounds of metric ``name``, beside it."""
    return f"{name}_ci_low", f"{name}_ci_high"


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
    (``benchmark.next_action_score``)."""
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
        for bound in ("_ci_low", "_ci_high"):
            if key.endswith(bound):
                value = key.removesuffix(bound)
                missing = [k for k in (value, *ci_names(value)) if k not in keys]
                problems += [f"{key}: no {k}" for k in missing]
    return problems
