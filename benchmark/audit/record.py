"""A finished judge audit, and the run record it is logged as (``tracking.log_run``).

The run is named ``audit:judge@<judge>`` and tagged ``audit=judge``: params are
the resolved config less its operational keys (``run_params``), metrics the
audit's (``audit/*``) plus the judge's LLM usage, artifacts every item with its
expected and sampled scores (``audit_items.jsonl``, and the table
``audit_table.json``) and the printed summary (``audit_summary.txt``).
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from benchmark.audit.cases import AuditItem
from benchmark.audit.config import AuditConfig
from benchmark.audit.expected import CLASSES
from benchmark.audit.metrics import AuditMetrics, agrees
from benchmark.config.schema import BenchmarkConfig
from benchmark.llm.usage import CallRecord
from benchmark.redaction import scrub_setting
from benchmark.rubric import Rubric
from benchmark.run.run_record import RunRecord, redact, run_params

AUDIT_TAG = "audit"
TABLE_ARTIFACT = "audit_table.json"
ITEMS_ARTIFACT = "audit_items.jsonl"
SUMMARY_ARTIFACT = "audit_summary.txt"


class AuditResult(BaseModel):
    """A finished audit: the judged items, their metrics and the LLM usage."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    judge: str
    rubric: Rubric
    audit: AuditConfig
    items: list[AuditItem]
    probes: int
    skipped: dict[str, int]
    metrics: AuditMetrics
    usage: dict[str, float]
    calls: list[CallRecord] = []

    def all_metrics(self) -> dict[str, float]:
        """What is logged: ``audit/*`` plus the judge's LLM usage (``llm/*``)."""
        return {**self.metrics.flat(), **self.usage}


def audit_record(
    config: BenchmarkConfig, resolved: dict[str, Any], result: AuditResult, summary: str = ""
) -> RunRecord:
    """The audit's run: config as params, ``audit/*`` metrics, items and summary as artifacts."""
    clean = redact(resolved)
    rows = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in item_records(result))
    return RunRecord(
        run_name=scrub_setting(config.tracking.run_name or f"audit:judge@{config.judge.name}"),
        params=run_params(clean),
        tags={AUDIT_TAG: "judge", "judge": config.judge.name, "rubric": config.rubric.name},
        metrics=result.all_metrics(),
        tables={TABLE_ARTIFACT: table(result)},
        artifacts={
            "config.yaml": yaml.safe_dump(clean, sort_keys=False),
            ITEMS_ARTIFACT: rows,
            **({SUMMARY_ARTIFACT: summary} if summary else {}),
        },
        calls=result.calls,
    )


def item_records(result: AuditResult) -> list[dict[str, Any]]:
    """One record per item: the probe, the answer, what it states, expected and sampled scores."""
    return [
        {
            "item": item.id,
            "probe_id": item.probe.id,
            "probe_type": item.probe.type,
            "variant": item.variant,
            "question": item.probe.question,
            "gold_facts": [f.model_dump() for f in item.probe.gold.facts],
            "answer": item.answer,
            "stated": item.stated,
            "fabricated": item.fabricated,
            "answer_tokens": item.answer_tokens,
            "expected": item.expected,
            "samples": [s.model_dump() for s in item.samples],
        }
        for item in result.items
    ]


def table(result: AuditResult) -> dict[str, list[Any]]:
    """Columns of the per-(item, criterion) table: class, expected band, each sample's score,
    and whether every scored sample lies in the band (None for the band ``any``)."""
    samples = result.audit.samples
    scale = result.rubric.scale_max
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "probe_id",
            "probe_type",
            "variant",
            "criterion",
            "class",
            "expected",
            *(f"sample_{k}" for k in range(samples)),
            "agree",
        )
    }
    for item in result.items:
        for criterion, expected in item.expected.items():
            scores = [None if s.failed else s.scores.get(criterion) for s in item.samples]
            scores += [None] * (samples - len(scores))
            verdicts = [agrees(v, expected, scale) for v in scores if v is not None]
            row = {
                "probe_id": item.probe.id,
                "probe_type": item.probe.type,
                "variant": item.variant,
                "criterion": criterion,
                "class": CLASSES[criterion],
                "expected": expected,
                **{f"sample_{k}": scores[k] for k in range(samples)},
                "agree": None
                if expected == "any"
                else bool(verdicts) and all(v is True for v in verdicts),
            }
            for key, value in row.items():
                columns[key].append(value)
    return columns
