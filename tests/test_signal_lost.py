"""A signal whose ``KeyboardInterrupt`` Python swallowed still ends the job as a signal.

The handler raises in the main thread wherever it is; when that is inside a callback whose
errors Python ignores (a weakref callback such as an import lock's, a ``__del__``), the
exception is printed as "Exception ignored" and lost, and the job went on to exit 0 with
its run FINISHED (seen in CI: Ctrl-C while the record was logged). Here the signal is
delivered inside such a callback, once during the job and once while logging, in a real
in-process job logging to a real SQLite store.
"""

from __future__ import annotations

import os
import signal
import sys
import weakref
from pathlib import Path

import pytest

import benchmark.__main__ as entry
from benchmark.__main__ import main
from benchmark.run import job as job_module

JOB = [
    "transcript.sessions=1",
    "transcript.target_tokens=12000",
    "compaction.context_window=8000",
    "compaction.tail_tokens=1500",
    "cache.dir=null",
]


def signal_swallowed() -> None:
    """SIGINT delivered inside a weakref callback: its handler's raise is ignored."""

    class Box:
        pass

    def callback(_ref: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # the handler runs here, between two bytecodes
            pass

    box = Box()
    ref = weakref.ref(box, callback)
    del box
    assert ref() is None


def signal_wrapped() -> None:
    """SIGINT delivered inside a pydantic serializer: pydantic turns the handler's
    ``KeyboardInterrupt`` into its own ``PydanticSerializationError`` (seen in CI, in
    ``job_files`` dumping a judgment)."""
    from pydantic import BaseModel, field_serializer

    class Row(BaseModel):
        value: int = 1

        @field_serializer("value")
        def _slow(self, value: int) -> int:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):
                pass
            return value

    Row().model_dump()


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def run_here(monkeypatch, capsys, tmp: Path) -> tuple[int, str]:
    monkeypatch.chdir(tmp)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    args = [*JOB, f"hydra.run.dir={tmp / 'out'}", f"tracking.store_dir={tmp / 'mlruns'}"]
    monkeypatch.setattr(sys, "argv", ["benchmark", *args])
    code: int | str | None = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    return int(code or 0), capsys.readouterr().err


def statuses(tmp: Path) -> list[str]:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}")
    ids = [e.experiment_id for e in client.search_experiments()]
    return [r.info.status for r in client.search_runs(ids)]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("where", ["job", "logging", "job-wrapped", "logging-wrapped"])
def test_a_swallowed_ctrl_c_ends_the_job_killed(where, tmp_path, monkeypatch, capsys, handlers):
    deliver = signal_wrapped if where.endswith("wrapped") else signal_swallowed
    if where.startswith("job"):
        real_job = job_module.job

        def job_then_signal(*args, **kwargs):
            done = real_job(*args, **kwargs)
            deliver()
            return done

        monkeypatch.setattr(job_module, "job", job_then_signal)
    else:
        real_log = entry._log

        def log_then_signal(*args, **kwargs):  # the signal as the logging starts
            deliver()
            return real_log(*args, **kwargs)

        monkeypatch.setattr(entry, "_log", log_then_signal)
    code, err = run_here(monkeypatch, capsys, tmp_path)
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 130, err
    assert len(lines) == 1 and "interrupted (Ctrl-C)" in lines[0], err
    assert "KILLED" in lines[0], err
    assert statuses(tmp_path) == ["KILLED"]
