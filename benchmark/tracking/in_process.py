"""The job's run held in this process: what ``TrackingChild`` does, without a child.

A sweep's jobs (and a process with MLflow loaded already) log in-process. Opening their
run when the job's parts are built costs one store write, so such a run too shows
RUNNING while the job works, starts at the job's start, nests under the sweep's parent
from the start, and samples system metrics for the job's span when asked.
"""

from __future__ import annotations

from benchmark.run.run_record import RunRecord
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.sweep import SweepInfo


class InProcessRun:
    """``prepare`` opens the run, ``log`` logs the record into it, ``end`` ends it without one."""

    def __init__(
        self, tracking: TrackingConfig, start_ms: int, name: str, sweep: SweepInfo | None
    ) -> None:
        self.tracking = tracking
        self.start_ms = start_ms
        self.name = name  # the run's name while the job runs: ``run_name`` of its policy
        self.sweep = sweep
        self.run_id: str | None = None
        self.parent: str | None = None

    def prepare(self) -> None:
        """Ready the store (migrate it, reach the server) and open the run: before any work."""
        if self.run_id is not None:
            return
        from benchmark.tracking.mlflow_run import open_run
        from benchmark.tracking.mlflow_store import prepare_tracking, store_uri
        from benchmark.tracking.run_end import hold
        from benchmark.tracking.sweep_parent import PARENT_RUN_TAG, parent_run

        experiment_id = prepare_tracking(self.tracking)
        sweep = self.sweep
        parent = parent_run(self.tracking, experiment_id, sweep) if sweep is not None else None
        self.parent = parent
        tags = {PARENT_RUN_TAG: parent} if parent is not None else None
        self.run_id = open_run(self.tracking, experiment_id, self.name, self.start_ms, tags)
        hold(store_uri(self.tracking), self.run_id, parent)  # what a second signal leaves

    def ready(self) -> None:
        self.prepare()

    def ready_now(self) -> bool:
        """Prepared before any work, in this process: ready whenever asked."""
        self.prepare()
        return True

    def log(self, record: RunRecord, sweep: SweepInfo | None = None) -> str:
        """``log_run`` into the open run (opened now, should the job not have opened it)."""
        from benchmark.tracking.mlflow_run import log_run

        return log_run(record, self.tracking, sweep, self.start_ms, opened=self.run_id)

    def end(self, status: str) -> str | None:
        """The job ends without a record: its open run ends as ``status``, not RUNNING;
        its id (None: no run was open)."""
        ended = self.run_id
        if ended is not None:
            from benchmark.tracking.mlflow_run import end_open_run
            from benchmark.tracking.sweep_parent import end_parent

            end_open_run(status)
            self.run_id = None
            if self.parent is not None:  # the sweep's end moves to this job's
                end_parent(self.parent, "KILLED" if status == "KILLED" else "FINISHED")
        return ended

    def close(self) -> None:
        """Nothing to stop: the run ends in ``log`` or ``end``."""
