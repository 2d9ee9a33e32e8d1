"""Traces written to the store in few transactions: one per ``TRACE_BATCH`` traces.

MLflow's tracing export (``mlflow.start_span_no_context`` and its async queue) writes each
trace with its own ``start_trace`` and spans in batches from several threads, and each
assessment (``mlflow.log_feedback``) in a transaction of its own: ~27 ms per one-span
trace on SQLite, ~16 ms more per assessment, and traces were dropped when the threads
raced. Here a trace is built in memory (:class:`Node` trees) and written in order: its
``TraceInfo`` with its tags, its run and its assessments through ``start_trace``
(``SqlAlchemyStore.start_trace`` stores ``TraceInfo.assessments`` with it, and a tracking
server takes them in the same request), then the spans through ``log_spans``. On a
SQLite (or other SQL) store, a batch of traces and their spans is one transaction
(:func:`one_transaction`): a commit per trace was ~20 ms of disk sync each, 10 s for 500
probes on a busy machine; within it the starts share one experiment read and one flush
(:mod:`.trace_batch`, on the MLflow versions checked). Spans are MLflow ``LiveSpan``
objects over a private OpenTelemetry tracer that exports nothing, so attributes are
encoded exactly as MLflow's own spans are. A span that states its cost
(``mlflow.llm.cost``) is not priced again by MLflow, which would import litellm for it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from benchmark.tracking.trace_batch import quick_starts

SPAN_BATCH = 500  # spans per log_spans call
TRACE_BATCH = 200  # traces (and their spans) per transaction of a SQL store
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

    store = TracingClient().store
    tracer = _tracer()
    written = 0
    try:
        for at in range(0, len(specs), TRACE_BATCH):
            built = [
                _build(spec, tracer, experiment_id, run_id) for spec in specs[at : at + TRACE_BATCH]
            ]
            with one_transaction(store) as session:
                spans = []
                with quick_starts(store, session):  # one experiment read, one flush
                    for info, its_spans in built:
                        store.start_trace(info)  # before its spans: log_spans makes bare traces
                        spans += its_spans
                for first in range(0, len(spans), SPAN_BATCH):
                    store.log_spans(location=experiment_id, spans=spans[first : first + SPAN_BATCH])
            written += len(built)
    except Exception as exc:  # the run's metrics and artifacts are logged already
        logger.warning("%d of %d traces not logged: %s", len(specs) - written, len(specs), exc)
    return written


@contextlib.contextmanager
def one_transaction(store: Any) -> Iterator[Any]:
    """Within it, this thread's writes to a SQL ``store`` share one session (yielded),
    committed (or rolled back) at the end, not one commit per call; other threads (MLflow's
    system metrics) keep their own sessions. Any other store is left as it is (None)."""
    maker = getattr(store, "ManagedSessionMaker", None)
    if maker is None or "ManagedSessionMaker" not in vars(store):
        yield None
        return
    owner = threading.get_ident()
    with maker(read_only=False) as session:

        @contextlib.contextmanager
        def shared(read_only: bool = True) -> Iterator[Any]:
            if threading.get_ident() != owner:
                with maker(read_only=read_only) as own:
                    yield own
            else:
                yield session  # flushed as the store goes; committed once, below

        store.ManagedSessionMaker = shared
        try:
            yield session
        finally:
            store.ManagedSessionMaker = maker


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
