"""The child of ``logger_process.TrackingChild``: prepare the store, log one record, exit.

``python -m benchmark.tracking.log_worker`` reads its ``TrackingConfig`` from stdin (one
JSON line) and imports MLflow; told to prepare (a second line, with the job's start and
name), it runs ``prepare_tracking``, opens the job's run (RUNNING since the job's start)
and answers whether the store is ready, then reads one record and logs it into that run
with ``log_run``; before the record, it writes each point's traces it is streamed
(``streamed``) and leaves them out of the record's. Told to end instead (the job failed,
or was stopped by a signal), it ends the open run as told and exits; at end of input
(the parent went away, killed) it ends it KILLED; before the run is open, end of input
ends it quietly. SIGINT, SIGTERM and
SIGHUP are ignored (the parent decides; a store is never stopped halfway through its
migration) but while logging, where they end the run as KILLED (SIGINT is the parent's
forwarded Ctrl-C). Whatever way the child ends, a run it still holds ends KILLED, never
FINISHED as MLflow's exit handler would have it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from benchmark.errors import UserError
from benchmark.run.interrupt import LoggingInterrupted
from benchmark.tracking.logger_process import encode

if TYPE_CHECKING:
    from benchmark.run.run_record import RunRecord
    from benchmark.tracking.config import TrackingConfig
    from benchmark.tracking.streamed import StreamedTraces
    from benchmark.tracking.sweep import SweepInfo


def _reply(out: TextIO, **message: Any) -> None:
    out.write(encode(message))
    out.flush()


def serve(inp: TextIO, out: TextIO) -> int:
    """The protocol of ``logger_process``; the exit code."""
    line = inp.readline()
    if not line:
        return 0
    from benchmark.tracking.config import TrackingConfig
    from benchmark.tracking.store_check import preload

    tracking = TrackingConfig.model_validate_json(line)
    from benchmark.tracking import telemetry

    telemetry.apply(tracking.telemetry)  # inherited from the job already: this restates it
    preload()  # the seconds of imports, touching no store
    line = inp.readline()
    if not line:  # the job stopped before its work: leave the store untouched
        return 0
    start = json.loads(line)
    opened: list[str] = []
    experiment: list[str] = []
    code = _answer(out, lambda: _open(tracking, start, opened, experiment), tracking)
    streamed = None
    message = _next(inp) if code == 0 else {"end": "KILLED"}
    while "traces" in message:  # a finished point's traces, as they come
        from benchmark.tracking.streamed import StreamedTraces

        streamed = streamed or StreamedTraces(experiment[0], opened[0])
        streamed.write(message["traces"])
        message = _next(inp)
    if "end" in message:  # the job failed or stopped before its record: no run stays RUNNING
        if opened:
            _answer(out, lambda: _end(message["end"], opened[0]), tracking)
        return code
    from benchmark.run.run_record import RunRecord
    from benchmark.tracking.sweep import SweepInfo

    record = RunRecord.model_validate(message["record"])
    sweep = SweepInfo.model_validate(message["sweep"]) if message.get("sweep") else None
    return _answer(out, lambda: _log(record, tracking, sweep, opened[0], streamed), tracking)


def _next(inp: TextIO) -> dict[str, Any]:
    """The parent's next message; at end of input (the parent went away) the run is KILLED."""
    line = inp.readline()
    return json.loads(line) if line else {"end": "KILLED"}


def _open(
    tracking: TrackingConfig, start: dict[str, Any], opened: list[str], experiment: list[str]
) -> dict[str, Any]:
    """Ready the store and open the job's run there, started when the job started."""
    from benchmark.tracking.mlflow_run import open_run
    from benchmark.tracking.mlflow_store import prepare_tracking

    experiment_id = prepare_tracking(tracking)
    experiment.append(experiment_id)
    opened.append(open_run(tracking, experiment_id, start.get("name"), start.get("start_ms")))
    return {"ready": True, "experiment_id": experiment_id, "run_id": opened[0]}


def _end(status: str, run_id: str) -> dict[str, Any]:
    from benchmark.tracking.mlflow_run import end_open_run

    end_open_run(status)
    return {"ended": status, "run_id": run_id}


def _answer(out: TextIO, step: Callable[[], dict[str, Any]], tracking: TrackingConfig) -> int:
    """Run one step and send its reply: its result, a user error's line (a write the disk
    refused is one too), or a traceback. The exit code, should the child end there."""
    from benchmark.tracking.mlflow_store import refused_write
    from benchmark.tracking.tracking_uri import local_store

    try:
        reply = step()
    except UserError as exc:
        _reply(out, error=str(exc))
        return 2
    except Exception as exc:
        refused = refused_write(exc, local_store(tracking))
        if refused is not None:
            _reply(out, error=str(refused))
            return 2
        _reply(out, crash=traceback.format_exc())
        return 1
    _reply(out, **reply)
    return 130 if "interrupted" in reply else 0


def _log(
    record: RunRecord,
    tracking: TrackingConfig,
    sweep: SweepInfo | None,
    opened: str,
    streamed: StreamedTraces | None = None,
) -> dict[str, Any]:
    """``log_run`` into the run opened at the job's start (the probes whose traces were
    streamed are not traced again), the parent's forwarded Ctrl-C ending it as KILLED."""
    from benchmark.tracking.mlflow_run import log_run

    _signals(_raise)
    try:
        run_id = log_run(record, tracking, sweep, opened=opened, streamed=streamed)
        import mlflow

        mlflow.flush_trace_async_logging()  # the run is whole when the parent reports it
        return {"run_id": run_id}
    except LoggingInterrupted as stop:
        return {"interrupted": stop.run_id}
    except KeyboardInterrupt:
        return {"interrupted": None}
    finally:
        _signals(signal.SIG_IGN)


def _raise(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _signals(handler: Any) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


def _end_held() -> None:
    """A run still active here (the parent went away mid-reply) ends KILLED."""
    if "mlflow" in sys.modules:
        import mlflow

        with contextlib.suppress(Exception):
            if mlflow.active_run() is not None:
                mlflow.end_run("KILLED")


def main() -> NoReturn:
    _signals(signal.SIG_IGN)
    # The protocol keeps stdout to itself: whatever else prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        code = serve(sys.stdin, out)
    except BrokenPipeError:
        code = 0  # the parent is gone
    _end_held()
    # The answer is out. Tearing down MLflow's thousands of modules takes 0.6 s of CPU
    # that the job's own exit would otherwise wait for: run the exit handlers (MLflow's
    # temporary folders) and leave without it.
    with contextlib.suppress(BrokenPipeError):
        out.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    main()
