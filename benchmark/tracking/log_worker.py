"""The child of ``logger_process.TrackingChild``: prepare the store, log one record, exit.

``python -m benchmark.tracking.log_worker`` reads its ``TrackingConfig`` from stdin (one
JSON line) and imports MLflow; told to prepare (a second line), it runs
``prepare_tracking`` and answers whether the store is ready, then reads one record and
logs it with ``log_run``. End of input at any point ends
it quietly (the parent went away or had nothing to log). SIGINT is ignored but while
logging, where it is the parent's forwarded Ctrl-C and ends the run as KILLED.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from typing import Any, TextIO

from benchmark.errors import UserError
from benchmark.interrupt import LoggingInterrupted
from benchmark.tracking.logger_process import encode


def _reply(out: TextIO, **message: Any) -> None:
    out.write(encode(message))
    out.flush()


def serve(inp: TextIO, out: TextIO) -> int:
    """The protocol of ``logger_process``; the exit code."""
    line = inp.readline()
    if not line:
        return 0
    from benchmark.tracking.config import TrackingConfig
    from benchmark.tracking.mlflow_run import log_run
    from benchmark.tracking.mlflow_store import prepare_tracking
    from benchmark.tracking.store_check import preload

    tracking = TrackingConfig.model_validate_json(line)
    preload()  # the seconds of imports, touching no store
    if not inp.readline():  # the job stopped before its work: leave the store untouched
        return 0
    try:
        prepare_tracking(tracking)
    except UserError as exc:
        _reply(out, error=str(exc))
        return 2
    except Exception:
        _reply(out, crash=traceback.format_exc())
        return 1
    _reply(out, ready=True)
    line = inp.readline()
    if not line:
        return 0
    from benchmark.run_record import RunRecord
    from benchmark.tracking.sweep import SweepInfo

    message = json.loads(line)
    record = RunRecord.model_validate(message["record"])
    sweep = SweepInfo.model_validate(message["sweep"]) if message.get("sweep") else None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run_id = log_run(record, tracking, sweep)
    except LoggingInterrupted as stop:
        _reply(out, interrupted=stop.run_id)
        return 130
    except KeyboardInterrupt:
        _reply(out, interrupted=None)
        return 130
    except UserError as exc:
        _reply(out, error=str(exc))
        return 2
    except Exception:
        _reply(out, crash=traceback.format_exc())
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _reply(out, run_id=run_id)
    return 0


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol keeps stdout to itself: whatever else prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        return serve(sys.stdin, out)
    except BrokenPipeError:
        return 0  # the parent is gone


if __name__ == "__main__":
    sys.exit(main())
