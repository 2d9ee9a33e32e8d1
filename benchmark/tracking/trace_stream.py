"""A job's probe traces sent to its tracking child point by point, so they are written while
the job still works and the end sends only what is left.

Written at the end, a job's traces were most of its logging (~2 s of the child's CPU for
514 probes after the job's last probe, the job waiting for it). :class:`TraceStream` is
the job's sink around ``RunFiles.point``: once points' files are written, their probes'
judgment rows (scrubbed already, ``judgment_row``), places and LLM calls (scrubbed by the
client, as the record's are) go to the child as ``{"traces": ...}``, ``STREAM_BATCH``
probes or more a line (a transaction per point cost the child ~13% more CPU), which the
child writes without answering (``log_worker``); the record at the end still holds
everything, and the child skips the probes whose traces it wrote. Nothing is sent before
the child has opened the run (a store being opened or migrated is never waited for):
what finished before waits for the next batch, what is left at the end goes with the
record. Only the probe-trace layout (``tracking.trace_probes``) streams; a point's own
calls (the probe writer's) stay for the end, which writes them with the rest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

STREAM_BATCH = 100  # probes per message: the child writes a transaction per message

if TYPE_CHECKING:
    from benchmark.llm.usage import UsageLedger
    from benchmark.run.job_files import RunFiles
    from benchmark.run.results import PointResult
    from benchmark.tracking.logger_process import TrackingChild


class TraceStream:
    """The sink that writes a point's files (``files.point``), then streams its traces."""

    def __init__(
        self,
        child: TrackingChild,
        files: RunFiles,
        ledger: UsageLedger,
        judge: str,
        judge_source: str,
    ) -> None:
        """``judge``, ``judge_source``: the record's ``judge`` tag and ``judge_source``."""
        self.child = child
        self.files = files
        self.ledger = ledger
        self.judge = {"judge": judge, "judge_source": judge_source}
        self._offset = 0  # of the ledger's calls read so far
        self._calls: dict[str, list[dict[str, Any]]] = {}  # by probe, its point not done
        self._first = 0  # the first judgment row not sent
        self._sending: list[dict[str, Any]] = []  # the calls of the rows not sent
        self._places: dict[str, list[Any]] = {}  # of the probes not sent

    def __call__(self, point: PointResult) -> PointResult:
        lean = self.files.point(point)
        self._read_calls()
        for r in point.probes:
            self._places[r.probe.id] = [r.probe.transcript_id, r.probe.point]
            self._sending += self._calls.pop(r.probe.id, [])
        rows = self.files.judgment_rows
        if len(rows) - self._first >= STREAM_BATCH and self.child.streaming():
            batch = rows[self._first :]
            places = {str(row["probe_id"]): self._places[str(row["probe_id"])] for row in batch}
            message = {"first": self._first, "rows": batch, "places": places}
            self.child.stream({**message, "calls": self._sending, **self.judge})
            self._first, self._sending, self._places = len(rows), [], {}
        return lean

    def _read_calls(self) -> None:
        """The calls landed since the last point, kept by probe (a point's own: dropped,
        the record has them)."""
        lines, self._offset = self.ledger.call_lines(self._offset)
        for line in lines:
            call = json.loads(line)
            probe = (call.get("purpose") or {}).get("probe_id")
            if probe is not None:
                self._calls.setdefault(probe, []).append(call)
