"""A job's probes and LLM calls as MLflow traces of its run, each probe scored by an assessment.

With ``tracking.trace_probes`` (the default), every probe of the judgments table is a
trace, offline too: inputs the probe (question, probe id and type, transcript, point),
outputs the answer, tags ``probe_id``, ``probe_type``, ``policy``, ``transcript``,
``point``, and the judge's score as a ``score`` feedback (``CODE`` for the reference
judge and next_action's rule, ``LLM_JUDGE`` for an LLM judge or panel; the judgment's
reasoning as its rationale) beside the gold as a ``gold`` expectation. The same probe has
the same inputs in every policy's run, so MLflow's evaluation view lines runs up probe by
probe (it matches traces on their request), and ``feedback.score`` filters them. The
probe's LLM calls (answerer, judge, each panel member, the control arm's) are its spans,
with token usage. Calls that serve a point (the probe writer) make a trace per point,
``<transcript> p<k>``; calls that know no point (an LLM summarizer's) one ``llm calls``.

With ``trace_probes`` off and ``tracking.trace_llm`` on, calls keep the earlier layout:
one trace per point, a span per probe with calls (question and gold in, answer out), the
root's outputs listing the scores. Requests show the bulky context as a pointer to its
artifact (:mod:`benchmark.tracking.trace_requests`). Writing is :mod:`.trace_writer`'s.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from benchmark.llm.untrusted import data_of
from benchmark.llm.usage import CallRecord
from benchmark.run.run_record import RunRecord
from benchmark.tracking.trace_requests import shown_request
from benchmark.tracking.trace_writer import Node, TraceSpec, write_traces

JUDGMENTS = "judgments_table.json"
RESULTS = "results_table.json"
SCORE, GOLD = "score", "gold"  # assessment names
SCORE_DECIMALS = 2  # the UI filters a feedback by its text: 3.42, not 3.4166666666666665
RULE = "next_action"  # a probe type scored by rule, never by the judge

Point = tuple[str, int]


def log_traces(
    record: RunRecord,
    experiment_id: str,
    run_id: str | None,
    probes: bool = True,
    skip: Collection[str] = (),
    now: int | None = None,
) -> int:
    """Log ``record``'s traces into the run ``run_id``: one per probe (``probes``), or one
    per point of its LLM calls; none for the probes in ``skip`` (streamed already, their
    offline times counted back from ``now``); returns how many."""
    specs = trace_specs(record, run_id, probes, skip=skip, now=now)
    return write_traces(specs, experiment_id, run_id) if specs else 0


def trace_specs(
    record: RunRecord,
    run_id: str | None,
    probes: bool,
    skip: Collection[str] = (),
    first: int = 0,
    now: int | None = None,
) -> list[TraceSpec]:
    """The traces of ``record``, in the order they are written; with probe traces, none
    for the probes in ``skip`` (streamed already: ``benchmark.tracking.streamed``).
    ``first``: the judgment rows before ``record``'s (a point's, streamed); ``now``: the
    time an offline probe's counts back from (the default: now)."""
    rows = _rows(record.tables.get(JUDGMENTS) or {})
    places = {
        str(r["probe_id"]): (str(r["transcript"]), int(r["point"]))
        for r in _rows(record.tables.get(RESULTS) or {}).values()
        if r.get("transcript") is not None and r.get("point") is not None
    }
    by_probe: dict[str, list[CallRecord]] = {}
    by_point: dict[Point | None, list[CallRecord]] = {}
    for call in sorted(record.calls, key=lambda c: c.start_ns):
        p = call.purpose
        if p is not None and p.probe_id is not None:
            by_probe.setdefault(p.probe_id, []).append(call)
            places.setdefault(p.probe_id, (p.transcript, p.point))
        else:
            by_point.setdefault(None if p is None else (p.transcript, p.point), []).append(call)
    if not probes:
        return _point_traces(rows, places, by_probe, by_point)
    specs = []
    now = time.time_ns() if now is None else now
    ids = list(rows) + [pid for pid in by_probe if pid not in rows]
    for i, pid in enumerate(ids, start=first):
        if pid in skip:
            continue
        row = rows.get(pid) or _asked_row(pid, by_probe[pid])
        # Offline probes have no times: a millisecond apart, the first newest, so the trace
        # list (newest first) shows them in the table's order.
        node = probe_node(row, places.get(pid), by_probe.get(pid, []), now - i * 1_000_000)
        specs.append(
            TraceSpec(node, probe_tags(row, places.get(pid)), assessments(row, record, run_id))
        )
    for point, calls in by_point.items():
        specs.append(_calls_trace(point, calls))
    return specs


def probe_inputs(row: Mapping[str, Any], place: Point | None) -> dict[str, Any]:
    """What a probe asks, the same in every policy's run: its trace's request."""
    return {
        "question": row.get("question"),
        "probe_id": row.get("probe_id"),
        "probe_type": row.get("type"),
        "transcript": place[0] if place else None,
        "point": place[1] if place else None,
    }


def probe_tags(row: Mapping[str, Any], place: Point | None) -> dict[str, str]:
    tags = {"probe_id": row.get("probe_id"), "probe_type": row.get("type")}
    tags |= {"policy": row.get("policy")}
    if place is not None:
        tags |= {"transcript": place[0], "point": str(place[1])}
    return {k: str(v) for k, v in tags.items() if v is not None}


def probe_node(
    row: Mapping[str, Any], place: Point | None, calls: list[CallRecord], at_ns: int
) -> Node:
    """A probe: its question in, its answer out, its LLM calls under it."""
    start = min((c.start_ns for c in calls), default=at_ns)
    end = max((c.end_ns for c in calls), default=at_ns)
    point = place[1] if place else "?"
    return Node(
        name=f"{row.get('type')} · p{point} · {row.get('probe_id')}",
        span_type="CHAIN",
        start_ns=start,
        end_ns=end,
        inputs=probe_inputs(row, place),
        outputs={"answer": row.get("answer")},
        attributes={
            "probe_id": row.get("probe_id"),
            "probe_type": row.get("type") or "",
            "point": place[1] if place else None,
            "transcript": place[0] if place else None,
            "policy": row.get("policy"),
        },
        error=(row.get("error") or "failed") if row.get("failed") else None,
        children=[call_node(c) for c in calls],
    )


def assessments(row: Mapping[str, Any], record: RunRecord, run_id: str | None) -> list[Any]:
    """The probe's score as a feedback from its judge (an error when it has none), and its
    gold as an expectation; each tagged with the run that logged it."""
    from mlflow.entities import AssessmentError, AssessmentSource, Expectation, Feedback
    from mlflow.tracing.constant import AssessmentMetadataKey

    meta = {AssessmentMetadataKey.SOURCE_RUN_ID: run_id} if run_id else None
    if row.get("type") == RULE:
        source = AssessmentSource(source_type="CODE", source_id="next_action rule")
    else:
        judge = record.tags.get("judge") or "judge"
        source = AssessmentSource(source_type=record.judge_source, source_id=judge)
    score = row.get("score")
    error = None
    if score is None:
        why = str(row.get("error") or "the probe has no score")
        error = AssessmentError(error_code="NOT_SCORED", error_message=why)
    made = [
        Feedback(
            name=SCORE,
            value=shown_score(score),
            error=error,
            source=source,
            rationale=row.get("reasoning") or None,
            metadata=meta,
        )
    ]
    if row.get("gold"):
        gold_source = AssessmentSource(source_type="CODE", source_id="probe")
        made.append(Expectation(name=GOLD, value=row["gold"], source=gold_source, metadata=meta))
    return made


def shown_score(score: float | None) -> float | int | None:
    """The score as the UI shows and filters it: rounded, a whole number as an integer."""
    if score is None:
        return None
    shown = round(float(score), SCORE_DECIMALS)
    return int(shown) if shown.is_integer() else shown


def call_node(call: CallRecord) -> Node:
    """One LLM call: its request (context as a pointer), reply, cost and token usage."""
    from mlflow.tracing.constant import CostKey, SpanAttributeKey, TokenUsageKey

    control = call.purpose is not None and call.purpose.arm == "control"
    failed = call.error is not None
    return Node(
        name=f"{call.role} · {call.endpoint}" + (" (control)" if control else ""),
        span_type="CHAT_MODEL",
        start_ns=call.start_ns,
        end_ns=call.end_ns,
        inputs=shown_request(call.request, call.purpose),
        outputs={"error": call.error} if failed else {"reply": call.reply},
        attributes={
            "role": call.role,
            "arm": call.purpose.arm if call.purpose is not None else "",
            "endpoint": call.endpoint,
            "model": call.model,
            "api": call.api,
            "cached": call.cached,
            "cost_usd": call.cost_usd,
            # The endpoint's own prices: MLflow would guess them from the model's name
            # (and import litellm to do it, seconds per job).
            SpanAttributeKey.LLM_COST: {
                CostKey.INPUT_COST: call.input_cost_usd,
                CostKey.OUTPUT_COST: call.cost_usd - call.input_cost_usd,
                CostKey.TOTAL_COST: call.cost_usd,
            },
            SpanAttributeKey.CHAT_USAGE: {
                TokenUsageKey.INPUT_TOKENS: call.input_tokens,
                TokenUsageKey.OUTPUT_TOKENS: call.output_tokens,
                TokenUsageKey.TOTAL_TOKENS: call.input_tokens + call.output_tokens,
            },
        },
        error=call.error,
    )


def _calls_trace(
    point: Point | None, calls: list[CallRecord], probes: Sequence[Node] = ()
) -> TraceSpec:
    """A point's trace (its probes' spans, if given, and its own calls), or ``llm calls``."""
    policies = [c.purpose.policy for c in calls if c.purpose and c.purpose.policy]
    policies += [n.attributes["policy"] for n in probes if n.attributes.get("policy")]
    tags = {"transcript": point[0], "point": str(point[1])} if point else {}
    tags |= {"policy": policies[0]} if point and policies else {}
    children = [*probes, *(call_node(c) for c in calls)]
    root = Node(
        name=f"{point[0]} p{point[1]}" if point else "llm calls",
        span_type="CHAIN",
        start_ns=min(n.start_ns for n in children),
        end_ns=max(n.end_ns for n in children),
        inputs={**tags, "probes": len(probes)},
        attributes={"calls": len(calls) + sum(len(n.children) for n in probes)},
        children=children,
    )
    return TraceSpec(root, tags)


def _point_traces(
    rows: dict[str, dict[str, Any]],
    places: dict[str, Point],
    by_probe: dict[str, list[CallRecord]],
    by_point: dict[Point | None, list[CallRecord]],
) -> list[TraceSpec]:
    """The layout without probe traces: one trace per point of the calls, the root's
    outputs listing its probes' scores."""
    probes: dict[Point | None, list[Node]] = {}
    for pid, calls in by_probe.items():
        row = rows.get(pid) or _asked_row(pid, calls)
        node = probe_node(row, places.get(pid), calls, calls[0].start_ns)
        node.inputs = {**node.inputs, "gold": row.get("gold")}
        probes.setdefault(places.get(pid), []).append(node)
    specs = []
    for point in [*by_point, *(p for p in probes if p not in by_point)]:
        nodes = probes.get(point, [])
        spec = _calls_trace(point, by_point.get(point, []), nodes)
        pids = [n.attributes["probe_id"] for n in nodes]
        scores = {p: rows.get(p, {}).get("score") for p in pids}
        spec.root.outputs = {"scores": scores} if pids else None
        specs.append(spec)
    return specs


def _rows(table: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """A table's rows by probe id."""
    ids = table.get("probe_id") or []
    return {str(pid): {k: col[i] for k, col in table.items()} for i, pid in enumerate(ids)}


def _asked_row(probe_id: str, calls: list[CallRecord]) -> dict[str, Any]:
    """A probe the judgments table has no row for (its answer failed): from its calls."""
    purpose = calls[0].purpose
    asked = next((c for c in calls if c.role == "answerer"), None)
    question = None
    for message in (asked.request.get("messages") or []) if asked is not None else []:
        if message.get("role") == "user":
            question = data_of(message.get("content", "")).get("question")
    return {
        "probe_id": probe_id,
        "type": purpose.probe_type if purpose else None,
        "policy": purpose.policy if purpose else None,
        "question": question,
        "answer": asked.reply if asked is not None else None,
    }
