"""MLflow in a child process beside the job: its import and store overlap the work.

Importing MLflow and opening its SQLite store costs about 3 s of CPU, most of it holding
the GIL, so neither a thread nor waiting helps: a job that starts ``TrackingChild`` at
its start has it ready by the time the run is logged. The child
(``python -m benchmark.tracking.log_worker``) runs ``prepare_tracking``, says whether the
store is ready, then logs the one record it is sent with ``log_run``, the one writer of
runs, and exits. The parent checks what it can without MLflow first (``check_tracking``),
so a store that is plainly broken is still named before any work.

Protocol, one JSON object a line: the parent sends the ``TrackingConfig`` (the child
imports MLflow), then ``{"prepare": true, "start_ms": ms, "name": name}`` once the job's
parts are built (the store is touched no earlier than in-process); the child opens the
run there, RUNNING since the job's start, and answers ``{"ready": true, "run_id": id}``
or ``{"error": line}``; a job that fails sends ``{"end": "FAILED"}`` (or its input just
ends: the parent is gone, and the child ends the run KILLED) and the child ends the run
so; otherwise the parent sends
``{"record": ..., "sweep": ...}`` (redacted already, and through the pipe only, never
argv or disk); before it, once the run is open, the parent may send any number of
``{"traces": ...}`` lines (a finished point's probe traces, ``trace_stream``), which the
child writes as they come, answering nothing, and skips in the record; the child answers
``{"run_id": id}``, ``{"error": line}``, ``{"interrupted": id}`` (Ctrl-C while logging,
forwarded: the run ended KILLED) or ``{"crash": traceback}``. The child exits on end of
input, so a parent that dies leaves no child waiting (and no run RUNNING); it runs in its
own session, so a Ctrl-C at the terminal reaches the parent only, which sends the KILLED
record or ``{"end": "KILLED"}``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import queue
import select
import signal
import subprocess
import sys
import threading
from typing import Any

import pydantic_core

from benchmark.errors import UserError
from benchmark.run import interrupt
from benchmark.run.interrupt import LoggingInterrupted
from benchmark.run.run_record import RunRecord
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.sweep import SweepInfo

WORKER = "benchmark.tracking.log_worker"
CLOSE_TIMEOUT_S = 5.0
END_TIMEOUT_S = 30.0  # a failed job waits this long at most for its run to be ended


def wanted(tracking: TrackingConfig, in_sweep: bool) -> bool:
    """Whether a child helps: tracking on, a single job (a sweep's jobs import MLflow once
    and reuse it), and MLflow not loaded here already."""
    return tracking.enabled and not in_sweep and "mlflow" not in sys.modules


def encode(message: dict[str, Any]) -> str:
    """One protocol line. NaN and infinities stay numbers (a model's own JSON makes them
    null); paths and nested models become their JSON forms."""
    return json.dumps(message, default=pydantic_core.to_jsonable_python) + "\n"


class TrackingChild:
    """The child process that logs this job's run; see the module docstring."""

    def __init__(
        self, tracking: TrackingConfig, start_ms: int | None = None, name: str | None = None
    ) -> None:
        """``start_ms``: when the job started (None: when the run opens); ``name``: the
        run's name while the job runs (the record's name is set when it is logged)."""
        self.tracking = tracking
        self._start = {"prepare": True, "start_ms": start_ms, "name": name}
        self._status: dict[str, Any] | None = None
        self._prepared = False
        self.ending = False  # ``end`` left the child ending the run (a store slow to open)
        # Lines to the child go through one thread, in order: a job never waits on a child
        # busy writing the traces it was streamed.
        self._outbox: queue.Queue[str | None] = queue.Queue()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # Ctrl-C at the terminal is the parent's to handle
        )
        self._sender = threading.Thread(target=self._deliver, name="tracking-child", daemon=True)
        self._sender.start()
        atexit.register(self.close)
        self._send(tracking.model_dump())

    def prepare(self) -> None:
        """Let the child open (create, migrate) the store or reach the server, in the
        background: call it once the job is sure to run. What can be told without MLflow
        is checked here first: a plainly broken store is one line before any work."""
        if not self._prepared:
            from benchmark.tracking.mlflow_store import check_tracking, store_uri

            check_tracking(self.tracking)
            self._prepared = True
            self._send(self._start)
            # From here the child holds a run; this process gone, it ends it KILLED.
            interrupt.set_note(
                f"the run is ended as KILLED in {store_uri(self.tracking)} by process "
                f"{self._proc.pid}"
            )

    def ready(self) -> None:
        """Wait until the store is ready; a store that cannot be used is a one-line UserError."""
        self.prepare()
        if self._status is None:
            self._status = self._receive("preparing the tracking store")
            if self.run_id is not None:
                from benchmark.tracking.mlflow_store import store_uri

                interrupt.set_note(
                    f"run {self.run_id} in {store_uri(self.tracking)} is ended as KILLED by "
                    f"process {self._proc.pid}"
                )
        if "error" in self._status:
            raise UserError(self._status["error"])

    def streaming(self) -> bool:
        """Whether the child has opened the run, so ``stream`` sends: its answer is read if
        it is there, never waited for (a store it refused is said by ``ready`` later)."""
        if not self._prepared or self._proc.stdout is None:
            return False
        if self._status is None and not select.select([self._proc.stdout], [], [], 0)[0]:
            return False
        try:
            self.ready()
        except Exception:  # a store refused, or the child ended: ``log`` says so in turn
            return False
        return self.run_id is not None

    def stream(self, traces: dict[str, Any]) -> None:
        """Send a finished point's probe traces (see ``trace_stream``); call it only once
        ``streaming`` said so. Returns at once: the child writes them as it reads them."""
        self._send({"traces": traces})

    def ready_now(self) -> bool:
        """Whether the store is ready, without waiting: the child's answer is read if it
        is there (a store that cannot be used is a one-line UserError, as in ``ready``)."""
        if self._status is None:
            out = self._proc.stdout
            if not self._prepared or out is None or not select.select([out], [], [], 0)[0]:
                return False
        self.ready()
        return True

    @property
    def pid(self) -> int:
        """The child's process id, for lines that say what is left to it."""
        return self._proc.pid

    @property
    def run_id(self) -> str | None:
        """The run opened at the job's start, once ``ready`` has seen it (None before)."""
        return None if self._status is None else self._status.get("run_id")

    def log(self, record: RunRecord, sweep: SweepInfo | None = None) -> str:
        """``log_run(record, tracking, sweep)`` in the child; the run's id. Ctrl-C while it
        logs ends the run as KILLED there (``LoggingInterrupted``), as in-process."""
        self.ready()
        self._send({"record": record.model_dump(), "sweep": sweep and sweep.model_dump()})
        if record.status == "KILLED":  # a second Ctrl-C leaves at once: say what it leaves
            self._arm_second()
        try:
            reply = self._receive("logging the run")
        except KeyboardInterrupt:
            self._arm_second()
            self._proc.send_signal(signal.SIGINT)
            reply = self._receive("logging the run")
        if "interrupted" in reply:
            if reply["interrupted"] is None:
                raise KeyboardInterrupt
            raise LoggingInterrupted(reply["interrupted"])
        if "error" in reply:
            raise UserError(reply["error"])
        return str(reply["run_id"])

    def end(self, status: str) -> str | None:
        """The job ends without a record (an error, a signal): the run opened at its start
        (or being opened: a store is never stopped halfway) ends as ``status`` rather than
        staying RUNNING; waits for that, then ``close``. The run's id, once ended (None:
        no run was opened, or it is not ended yet)."""
        ended = None
        if self._prepared and self._proc.poll() is None:
            self._send({"end": status})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=END_TIMEOUT_S)
            ended = self._ended(status)
            self.ending = self._proc.poll() is None  # still opening the store: it goes on
        self.close()
        return ended

    def _ended(self, status: str) -> str | None:
        """The id of the run the child reported ended as ``status``, read from its replies
        once it has exited (it writes no more; a child still busy is not waited for)."""
        if self._proc.poll() is None or self._proc.stdout is None:
            return None
        replies = [json.loads(line) for line in self._proc.stdout.read().splitlines() if line]
        return next((r["run_id"] for r in replies if r.get("ended") == status), None)

    def close(self) -> None:
        """End the child: at end of input it exits. One that is opening a local store is
        left to finish (stopped there, a migration would break the store for good); one
        still importing, or done, is stopped after a grace period."""
        proc = self._proc
        self._outbox.put(None)  # what was sent is delivered first (the child may be gone)
        if self._sender.is_alive() and threading.current_thread() is not self._sender:
            self._sender.join(timeout=CLOSE_TIMEOUT_S)
        if proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):  # it ended already
                proc.stdin.close()
        if proc.poll() is not None:
            return
        if self._status is None:
            if self._prepared and self.tracking.uri is None:
                return  # opening a local store: it finishes, then ends at end of input
            proc.kill()  # still importing, or reaching a server: nothing to lose
        try:
            proc.wait(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _arm_second(self) -> None:
        """What a second Ctrl-C leaves: the child goes on logging the run, and ends it."""
        from benchmark.tracking.mlflow_store import store_uri

        interrupt.arm_second(
            f"run {self.run_id} is still being logged as KILLED to "
            f"{store_uri(self.tracking)} by process {self._proc.pid}"
        )

    def _send(self, message: dict[str, Any]) -> None:
        """``message`` to the child, after every line sent before it (encoded here, so a
        value that cannot be is the caller's error)."""
        self._outbox.put(encode(message))

    def _deliver(self) -> None:
        """The sending thread: each line in turn, until ``close``."""
        stdin = self._proc.stdin
        assert stdin is not None
        while (line := self._outbox.get()) is not None:
            try:
                stdin.write(line)
                stdin.flush()
            except (OSError, ValueError):
                pass  # the child ended (its input closed): its reply, or its absence, says why

    def _receive(self, doing: str) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.wait()
            raise RuntimeError(f"the MLflow logging process ended ({code}) while {doing}")
        reply: dict[str, Any] = json.loads(line)
        if "crash" in reply:
            raise RuntimeError(f"the MLflow logging process failed:\n{reply['crash']}")
        return reply
