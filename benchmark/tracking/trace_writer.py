"""Traces written to the store in few transactions: one per trace, and one per 500 spans.

MLflow's tracing export (``mlflow.start_span_no_context`` and its async queue) writes each
trace with its own ``start_trace`` and spans in batches from several threads, and each
assessment (``mlflow.log_feedback``) in a transaction of its own: ~27 ms per one-span
trace on SQLite, ~16 ms more per assessment, and traces were dropped when the threads
raced. Here a trace is built in memory (:class:`Node` trees) and written in order: its
``TraceInfo`` with its tags, its run and its assessments in one ``start_trace``
(``SqlAlchemyStore.start_trace`` stores ``TraceInfo.assessments`` in that transaction,
and a tracking server takes them in the same request), then every trace's spans through
``log_spans``, which writes spans of many traces in one transaction (``SPAN_BATCH`` at
a time). Spans are MLflow ``LiveSpan`` objects over a private OpenTelemetry tracer that
exports nothing, so attributes are encoded exactly as MLflow's own spans are.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

SPAN_BATCH = 500  # spans per log_spans transaction
PREVIEW_CHARS = 1_000  # of a trace's request and response previews (MLflow's own cut)

logger = logging.getLogger(__name__)


@dataclass
class Node:
    """One span to be: what it did, when, and the spans under it."""

    name: str
    span_type: str
    start_ns: int
    end_ns: int
    inputs: Any = None
    outputs: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the span ends as ERROR with this message
    children: list[Node] = field(default_factory=list)


@dataclass
class TraceSpec:
    """One trace to be: its root span, tags, and assessments (MLflow ``Assessment``)."""

    root: Node
    tags: dict[str, str] = field(default_factory=dict)
    assessments: list[Any] = field(default_factory=list)


def write_traces(specs: list[TraceSpec], experiment_id: str, run_id: str | None) -> int:
    """Write ``specs`` into ``experiment_id``, each linked to ``run_id``; returns how many
    were written. A store that refuses them is warned about once: the run stands."""
    from mlflow.tracing.client import TracingClient

    client = TracingClient()
    tracer = _tracer()
    written, spans = 0, []
    try:
        for spec in specs:
            info, built = _build(spec, tracer, experiment_id, run_id)
            client.start_trace(info)  # before its spans: log_spans would make a bare trace
            written += 1
            spans += built
            if len(spans) >= SPAN_BATCH:
                client.log_spans(experiment_id, spans)
                spans = []
        if spans:
            client.log_spans(experiment_id, spans)
    except Exception as exc:  # the run's metrics and artifacts are logged already
        logger.warning("%d of %d traces not logged: %s", len(specs) - written, len(specs), exc)
    return written


def _tracer() -> Any:
    """An OpenTelemetry tracer of its own: no processor, so no span leaves through MLflow's
    exporter (which would write each trace a second time)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    # No resource: the store would keep its service.name as a tag of every trace.
    return TracerProvider(resource=Resource.get_empty()).get_tracer("benchmark.tracking")


def _build(spec: TraceSpec, tracer: Any, experiment_id: str, run_id: str | None) -> tuple:
    """The trace's ``TraceInfo`` and its spans (as MLflow ``Span`` objects), root first."""
    from mlflow.entities import TraceInfo, TraceLocation, TraceState
    from mlflow.tracing.constant import (
        TRACE_SCHEMA_VERSION,
        TRACE_SCHEMA_VERSION_KEY,
        TraceMetadataKey,
        TraceTagKey,
    )

    spans: list[Any] = []
    trace_id = _span(spec.root, tracer, None, None, spans)
    root = spec.root
    metadata = {TRACE_SCHEMA_VERSION_KEY: str(TRACE_SCHEMA_VERSION)}
    if run_id is not None:
        metadata[TraceMetadataKey.SOURCE_RUN] = run_id
    for assessment in spec.assessments:
        assessment.trace_id = trace_id
    info = TraceInfo(
        trace_id=trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=root.start_ns // 1_000_000,
        execution_duration=max(0, (root.end_ns - root.start_ns) // 1_000_000),
        state=TraceState.ERROR if root.error is not None else TraceState.OK,
        request_preview=preview(root.inputs),
        response_preview=preview(root.outputs),
        trace_metadata=metadata,
        tags={TraceTagKey.TRACE_NAME: root.name, **spec.tags},
        assessments=spec.assessments,
    )
    return info, spans


def _span(node: Node, tracer: Any, parent: Any, trace_id: str | None, out: list) -> str:
    """Build ``node`` and its children into ``out``; returns the trace's id."""
    from mlflow.entities import SpanStatus, SpanStatusCode
    from mlflow.entities.span import LiveSpan
    from mlflow.tracing.utils import generate_mlflow_trace_id_from_otel_trace_id
    from opentelemetry import trace

    context = trace.set_span_in_context(parent) if parent is not None else None
    otel = tracer.start_span(node.name, context=context, start_time=node.start_ns)
    if trace_id is None:
        trace_id = generate_mlflow_trace_id_from_otel_trace_id(otel.get_span_context().trace_id)
    span = LiveSpan(otel, trace_id, node.span_type)
    if node.inputs is not None:
        span.set_inputs(node.inputs)
    span.set_attributes(node.attributes)
    at = len(out)
    out.append(None)  # the span's place, before its children's
    for child in node.children:
        _span(child, tracer, otel, trace_id, out)
    status = SpanStatus(SpanStatusCode.ERROR, node.error) if node.error is not None else None
    span.end(outputs=node.outputs, status=status, end_time_ns=node.end_ns)
    out[at] = span.to_immutable_span()
    return trace_id


def preview(value: Any) -> str | None:
    """A trace's request or response as the trace list shows it: the JSON, cut short.
    The same inputs give the same preview, which is what lines runs up in the UI."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 3] + "..."
