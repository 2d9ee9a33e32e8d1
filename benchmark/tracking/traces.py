"""LLM calls as an MLflow trace, so a user can open any judge (or answerer...) call in the UI.

Calls are recorded by the LLM layer while the job runs (with their real start
and end times) and turned into one trace here, inside the job's run, so the
trace is linked to the run and MLflow stays out of the hot path. One trace
per job (root span -> one span per role -> one span per call) rather than one
per call: MLflow writes a trace in ~40 ms but a span in ~8 ms (measured).
"""

from __future__ import annotations

import logging
from itertools import groupby

from benchmark.llm.usage import CallRecord


def log_traces(calls: list[CallRecord], experiment_id: str, name: str = "llm calls") -> int:
    """Log ``calls`` as one trace of the active run; returns the number of call spans."""
    import mlflow
    from mlflow.entities import SpanType

    if not calls:
        return 0
    # We flush below; MLflow's exit hook would still announce a (now empty) flush.
    logging.getLogger("mlflow.tracing.export.async_export_queue").setLevel(logging.WARNING)
    ordered = sorted(calls, key=lambda c: (c.role, c.start_ns))
    root = mlflow.start_span_no_context(
        name=name,
        span_type=SpanType.CHAIN,
        experiment_id=experiment_id,
        start_time_ns=min(c.start_ns for c in calls),
        attributes={"calls": len(calls)},
    )
    for role, group in groupby(ordered, key=lambda c: c.role):
        role_calls = list(group)
        parent = mlflow.start_span_no_context(
            name=role,
            span_type=SpanType.CHAIN,
            parent_span=root,
            start_time_ns=role_calls[0].start_ns,
            attributes={"calls": len(role_calls)},
        )
        for call in role_calls:
            span = mlflow.start_span_no_context(
                name=f"{role}: {call.api}",
                span_type=SpanType.CHAT_MODEL,
                parent_span=parent,
                inputs=call.request,
                attributes={
                    "role": role,
                    "endpoint": call.endpoint,
                    "model": call.model,
                    "input_tokens": call.input_tokens,
                    "output_tokens": call.output_tokens,
                    "cost_usd": call.cost_usd,
                },
                start_time_ns=call.start_ns,
            )
            failed = call.error is not None
            span.end(
                outputs={"error": call.error} if failed else {"reply": call.reply},
                status="ERROR" if failed else "OK",
                end_time_ns=call.end_ns,
            )
        parent.end(end_time_ns=max(c.end_ns for c in role_calls))
    root.end(end_time_ns=max(c.end_ns for c in calls))
    mlflow.flush_trace_async_logging()
    return len(calls)
