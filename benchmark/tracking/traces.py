"""LLM calls as MLflow traces a person can read: one trace per compaction point,
one span per probe.

Calls are recorded by the LLM layer while the job runs (with their real start
and end times and the probe or point each served, ``CallRecord.purpose``) and
turned into traces here, inside the job's run, so each trace is linked to the
run and MLflow stays out of the hot path.

A point's trace, ``<transcript> p<k>``, is tagged with its transcript, point
and policy. Under its root, each probe is a span ``<type> · p<k> · <probe id>``
with the question and gold as inputs, the answer and score as outputs, and the
probe id, type, point, transcript and policy as attributes
(``search_traces(filter_string="span.attributes.probe_id = '...'")`` finds it);
its children are the answerer and judge calls (each panel member's, and the
control arm's), each with its token usage where the trace list shows it. Calls
that serve the point rather than a probe (the probe writer) sit under the root.

Not one trace per probe: MLflow's SQLite store writes a trace in ~100 ms and a
span in ~10 ms (each span is its own write), so 510 probes as 510 traces took
~55 s to log against ~20 s for the old single trace; one per point takes about as
long as that trace did (15.5 s vs 13.0 s, side by side) and adds 7.6 MB to the
store instead of 119 MB (``benchmarks/trace_cost.py``, 1,020 calls, 2 busy cores).
Requests show the bulky context as a pointer to its artifact
(:mod:`benchmark.tracking.trace_requests`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.llm.untrusted import data_of
from benchmark.llm.usage import CallRecord
from benchmark.tracking.trace_requests import shown_request

Point = tuple[str, int] | None  # (transcript, point); None: calls with no purpose


SPAN_BATCH = 500  # spans per store write


def log_traces(
    calls: list[CallRecord],
    experiment_id: str,
    judgments: Mapping[str, Sequence[Any]] | None = None,
) -> int:
    """Log ``calls`` as traces of the active run, one per point (``judgments``: the
    judgments table's columns, for each probe's gold, answer and score); returns how many."""
    if not calls:
        return 0
    # Spans are written in batches: MLflow's default of 5 per write made a 1,500-span
    # job's traces take 2-3 times as long to log (benchmarks/trace_cost.py).
    os.environ.setdefault("MLFLOW_ASYNC_TRACE_LOGGING_MAX_SPAN_BATCH_SIZE", str(SPAN_BATCH))
    import mlflow

    # We flush below; MLflow's exit hook would still announce a (now empty) flush.
    logging.getLogger("mlflow.tracing.export.async_export_queue").setLevel(logging.WARNING)
    rows = _rows(judgments or {})
    points: dict[Point, list[CallRecord]] = {}
    for call in sorted(calls, key=lambda c: c.start_ns):
        p = call.purpose
        points.setdefault(None if p is None else (p.transcript, p.point), []).append(call)
    for group in points.values():
        _trace(group, experiment_id, rows)
    mlflow.flush_trace_async_logging()
    return len(points)


def _rows(table: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """The judgments table's rows by probe id (the compacted arm's)."""
    ids = table.get("probe_id") or []
    return {str(pid): {k: col[i] for k, col in table.items()} for i, pid in enumerate(ids)}


def _trace(calls: list[CallRecord], experiment_id: str, rows: dict[str, dict[str, Any]]) -> None:
    """One point's trace: its probes' spans (their calls under them), its other calls."""
    import mlflow
    from mlflow.entities import SpanType

    purpose = calls[0].purpose
    probes: dict[str, list[CallRecord]] = {}
    for call in calls:
        if call.purpose is not None and call.purpose.probe_id is not None:
            probes.setdefault(call.purpose.probe_id, []).append(call)
    tags: dict[str, str] = {}
    if purpose is not None:
        tags = {"transcript": purpose.transcript, "point": str(purpose.point)}
        tags |= {"policy": purpose.policy} if purpose.policy else {}
    root = mlflow.start_span_no_context(
        name=f"{purpose.transcript} p{purpose.point}" if purpose else "llm calls",
        span_type=SpanType.CHAIN,
        inputs={**tags, "probes": len(probes)},
        tags=tags,
        experiment_id=experiment_id,
        start_time_ns=calls[0].start_ns,
        attributes={"calls": len(calls)},
    )
    for call in calls:
        if call.purpose is None or call.purpose.probe_id is None:
            _call_span(call, root)
    scores = {}
    for probe_id, probe_calls in probes.items():
        row = rows.get(probe_id, {})
        scores[probe_id] = row.get("score")
        _probe_span(probe_calls, root, row)
    root.end(
        outputs={"scores": scores} if probes else None, end_time_ns=max(c.end_ns for c in calls)
    )


def _probe_span(calls: list[CallRecord], parent: Any, row: dict[str, Any]) -> None:
    """A probe: question and gold in, answer and score out, its calls under it."""
    import mlflow
    from mlflow.entities import SpanType

    purpose = calls[0].purpose
    assert purpose is not None and purpose.probe_id is not None
    asked = next((c for c in calls if c.role == "answerer"), None)
    span = mlflow.start_span_no_context(
        name=f"{purpose.probe_type} · p{purpose.point} · {purpose.probe_id}",
        span_type=SpanType.CHAIN,
        parent_span=parent,
        inputs={"question": row.get("question") or _asked(asked), "gold": row.get("gold")},
        attributes={
            "probe_id": purpose.probe_id,
            "probe_type": purpose.probe_type or "",
            "point": purpose.point,
            "transcript": purpose.transcript,
            "policy": purpose.policy,
        },
        start_time_ns=calls[0].start_ns,
    )
    for call in calls:
        _call_span(call, span)
    answer = row.get("answer", asked.reply if asked is not None else None)
    span.end(
        outputs={"answer": answer, "score": row.get("score")},
        end_time_ns=max(c.end_ns for c in calls),
    )


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
