"""Log a judge audit (``+audit=judge``) as one MLflow run, next to the benchmark's runs.

The run is named ``audit:judge@<judge>`` and tagged ``audit=judge``: params are
the resolved config, metrics the audit's (``audit/*``) plus the judge's LLM
usage, artifacts every item with its expected and sampled scores
(``audit_items.jsonl``, and the table ``audit_table.json``) and the printed
summary (``audit_summary.txt``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from benchmark.audit.expected import CLASSES
from benchmark.audit.metrics import agrees
from benchmark.config import BenchmarkConfig
from benchmark.redaction import scrub_setting
from benchmark.tracking.mlflow_store import flatten, prepare_tracking, redact, sweep_tags
from benchmark.tracking.sweep import SweepInfo
from benchmark.tracking.traces import log_traces

if TYPE_CHECKING:
    from benchmark.audit.run import AuditResult

AUDIT_TAG = "audit"
TABLE_ARTIFACT = "audit_table.json"
ITEMS_ARTIFACT = "audit_items.jsonl"
SUMMARY_ARTIFACT = "audit_summary.txt"


def audit_run_name(config: BenchmarkConfig) -> str:
    return scrub_setting(config.tracking.run_name or f"audit:judge@{config.judge.name}")


def log_audit(
    config: BenchmarkConfig,
    resolved: dict[str, Any],
    result: AuditResult,
    summary: str = "",
    *,
    sweep: SweepInfo | None = None,
) -> str:
    """One run for the audit; returns its id."""
    import mlflow

    experiment_id = prepare_tracking(config.tracking)
    clean = redact(resolved)
    with mlflow.start_run(experiment_id=experiment_id, run_name=audit_run_name(config)) as run:
        mlflow.set_tags(
            {
                AUDIT_TAG: "judge",
                "judge": config.judge.name,
                "rubric": config.rubric.name,
                **sweep_tags(sweep),
            }
        )
        mlflow.log_params(flatten(clean))
        mlflow.log_metrics(result.all_metrics())
        mlflow.log_table(table(result), artifact_file=TABLE_ARTIFACT)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "config.yaml").write_text(yaml.safe_dump(clean, sort_keys=False))
            with (folder / ITEMS_ARTIFACT).open("w") as out:
                for row in item_records(result):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
            if summary:
                (folder / SUMMARY_ARTIFACT).write_text(summary)
            mlflow.log_artifacts(tmp)
        if config.tracking.trace_llm and result.calls:
            log_traces(result.calls, experiment_id, name=f"{run.info.run_name}: llm calls")
        return run.info.run_id


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
