"""The tracking child's side of streamed traces: each finished point's probe traces written
as they come, and which probes they were, so the record's traces leave them out.

A message (``benchmark.tracking.trace_stream``) holds a point's judgment rows, its probes'
places and LLM calls, the judge's name and source: what ``traces.trace_specs`` reads of a
whole record, for that point. It is read as such a record, so a streamed trace is built by
the same code as one written at the end; ``first`` (the rows before it) and one ``now`` for
the job keep an offline probe's time where the end would put it (a millisecond apart, in
the table's order). A point whose traces the store refused is not counted as written: the
record's logging tries them again (and warns, as for any trace the store refuses).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from benchmark.llm.usage import CallRecord
from benchmark.run.run_record import RunRecord, columns
from benchmark.tracking.trace_writer import write_traces
from benchmark.tracking.traces import JUDGMENTS, RESULTS, trace_specs

logger = logging.getLogger(__name__)


class StreamedTraces:
    """The probes whose traces were written into run ``run_id`` of ``experiment_id``."""

    def __init__(self, experiment_id: str, run_id: str) -> None:
        self.experiment_id = experiment_id
        self.run_id = run_id
        self.now = time.time_ns()  # offline probes count back from here, streamed or not
        self.probes: set[str] = set()

    def write(self, message: dict[str, Any]) -> None:
        """Write one point's probe traces (a message the child was sent)."""
        try:
            record = point_record(message)
            specs = trace_specs(record, self.run_id, True, first=message["first"], now=self.now)
        except Exception as exc:  # the record's logging writes them instead
            logger.warning("a point's traces were left for the end: %s", exc)
            return
        if specs and write_traces(specs, self.experiment_id, self.run_id) == len(specs):
            self.probes.update(str(row["probe_id"]) for row in message["rows"])


def point_record(message: dict[str, Any]) -> RunRecord:
    """The message as the part of a run record its traces are built from."""
    places = [
        {"probe_id": probe, "transcript": place[0], "point": place[1]}
        for probe, place in message["places"].items()
    ]
    return RunRecord(
        run_name="",
        params={},
        tags={"judge": message["judge"]},
        tables={JUDGMENTS: columns(message["rows"]), RESULTS: columns(places)},
        calls=[CallRecord.model_validate(call) for call in message["calls"]],
        judge_source=message["judge_source"],
    )
