"""LLM calls as MLflow traces a person can read: one trace per probe.

Calls are recorded by the LLM layer while the job runs (with their real start
and end times and the probe or point each served, ``CallRecord.purpose``) and
turned into traces here, inside the job's run, so each trace is linked to the
run and MLflow stays out of the hot path.

A probe's trace is named ``<type> · p<point> · <probe id>``; its root holds the
question and gold as inputs and the answer and score as outputs, its tags the
probe id, type, point, transcript and policy (``search_traces`` filters on
them), and its children the answerer and judge calls (each panel member's, and
the control arm's), each with its token usage where the trace list shows it.
Calls that serve a point rather than a probe (the probe writer) make one trace
per point, ``compaction · <transcript> p<k>``; calls with no purpose, one trace.
Requests show the bulky context as a pointer to its artifact
(:mod:`benchmark.tracking.trace_requests`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.llm.untrusted import data_of
from benchmark.llm.usage import CallPurpose, CallRecord
from benchmark.tracking.trace_requests import shown_request

Key = tuple[str, int, str] | None  # (transcript, point, probe id or ""); None: no purpose


def log_traces(
    calls: list[CallRecord],
    experiment_id: str,
    judgments: Mapping[str, Sequence[Any]] | None = None,
) -> int:
    """Log ``calls`` as traces of the active run, one per probe (``judgments``: the
    judgments table's columns, for each probe's gold, answer and score); returns how many."""
    import mlflow

    if not calls:
        return 0
    # We flush below; MLflow's exit hook would still announce a (now empty) flush.
    logging.getLogger("mlflow.tracing.export.async_export_queue").setLevel(logging.WARNING)
    rows = _rows(judgments or {})
    groups: dict[Key, list[CallRecord]] = {}
    for call in sorted(calls, key=lambda c: c.start_ns):
        groups.setdefault(_key(call.purpose), []).append(call)
    for key, group in groups.items():
        _trace(group, experiment_id, rows.get(key[2], {}) if key else {})
    mlflow.flush_trace_async_logging()
    return len(groups)


def _key(purpose: CallPurpose | None) -> Key:
    if purpose is None:
        return None
    return (purpose.transcript, purpose.point, purpose.probe_id or "")


def _rows(table: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """The judgments table's rows by probe id (the compacted arm's)."""
    ids = table.get("probe_id") or []
    return {str(pid): {k: col[i] for k, col in table.items()} for i, pid in enumerate(ids)}


def _trace(calls: list[CallRecord], experiment_id: str, row: dict[str, Any]) -> None:
    import mlflow
    from mlflow.entities import SpanType

    purpose = calls[0].purpose
    name, inputs, outputs, tags = _root(calls, purpose, row)
    root = mlflow.start_span_no_context(
        name=name,
        span_type=SpanType.CHAIN,
        inputs=inputs,
        tags=tags,
        experiment_id=experiment_id,
        start_time_ns=calls[0].start_ns,
        attributes={"calls": len(calls)},
    )
    for call in calls:
        _call_span(call, root)
    root.end(outputs=outputs, end_time_ns=max(c.end_ns for c in calls))


def _root(
    calls: list[CallRecord], purpose: CallPurpose | None, row: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, str]]:
    """The trace's name, inputs, outputs and tags."""
    if purpose is None:
        return "llm calls", {"calls": len(calls)}, {}, {}
    tags = {"transcript": purpose.transcript, "point": str(purpose.point)}
    if purpose.policy:
        tags["policy"] = purpose.policy
    if purpose.probe_id is None:
        roles = sorted({c.role for c in calls})
        name = f"compaction · {purpose.transcript} p{purpose.point}"
        return name, {"roles": roles}, {}, tags
    tags |= {"probe_id": purpose.probe_id, "probe_type": purpose.probe_type or ""}
    asked = next((c for c in calls if c.role == "answerer"), None)
    question = row.get("question") or _asked(asked)
    inputs = {"question": question, "gold": row.get("gold")}
    answer = row.get("answer", asked.reply if asked is not None else None)
    outputs = {"answer": answer, "score": row.get("score")}
    name = f"{purpose.probe_type} · p{purpose.point} · {purpose.probe_id}"
    return name, inputs, outputs, tags


def _asked(call: CallRecord | None) -> str | None:
    """The question an answerer call carried (when the judgments table has no row)."""
    if call is None:
        return None
    for message in call.request.get("messages") or []:
        if message.get("role") == "user":
            return data_of(message.get("content", "")).get("question")
    return None


def _call_span(call: CallRecord, parent: Any) -> None:
    import mlflow
    from mlflow.entities import SpanType
    from mlflow.tracing.constant import SpanAttributeKey, TokenUsageKey

    control = call.purpose is not None and call.purpose.arm == "control"
    span = mlflow.start_span_no_context(
        name=f"{call.role} · {call.endpoint}" + (" (control)" if control else ""),
        span_type=SpanType.CHAT_MODEL,
        parent_span=parent,
        inputs=shown_request(call.request, call.purpose),
        attributes={
            "role": call.role,
            "arm": call.purpose.arm if call.purpose is not None else "",
            "endpoint": call.endpoint,
            "model": call.model,
            "api": call.api,
            "cached": call.cached,
            "cost_usd": call.cost_usd,
            SpanAttributeKey.CHAT_USAGE: {
                TokenUsageKey.INPUT_TOKENS: call.input_tokens,
                TokenUsageKey.OUTPUT_TOKENS: call.output_tokens,
                TokenUsageKey.TOTAL_TOKENS: call.input_tokens + call.output_tokens,
            },
        },
        start_time_ns=call.start_ns,
    )
    failed = call.error is not None
    span.end(
        outputs={"error": call.error} if failed else {"reply": call.reply},
        status="ERROR" if failed else "OK",
        end_time_ns=call.end_ns,
    )
