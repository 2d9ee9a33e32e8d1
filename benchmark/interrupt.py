"""Ctrl-C: one line on stderr, exit code 130, and the job's run logged as KILLED.

The first SIGINT is Python's ``KeyboardInterrupt`` on the main thread, wherever the
job is: ``run_job`` turns it into :class:`JobInterrupted` carrying what was done,
``__main__`` logs that as a KILLED run and prints :func:`line`. From then on a second
SIGINT must not wait for anything (a slow store, a hung connection): :func:`arm_second`
makes it print its own line and leave at once with ``os._exit``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.results import JobResult

EXIT_CODE = 130  # 128 + SIGINT, what a shell reports for a job ended by Ctrl-C


class JobInterrupted(KeyboardInterrupt):
    """Ctrl-C during a job; ``result`` holds the probes finished so far (``interrupted``)."""

    def __init__(self, result: JobResult) -> None:
        super().__init__("interrupted")
        self.result = result


class Stopped(KeyboardInterrupt):
    """Ctrl-C, handled: ``args[0]`` is the one line to print (see :func:`line`)."""


class LoggingInterrupted(KeyboardInterrupt):
    """Ctrl-C while a run was being logged; the run, ``run_id``, was ended as KILLED."""

    def __init__(self, run_id: str) -> None:
        super().__init__("interrupted while logging")
        self.run_id = run_id


class _State:
    # What the second Ctrl-C's line says about the run; None once the job's own line is out.
    note: str | None = "nothing was logged"


def progress_text(result: JobResult | None) -> str:
    """``after 37 of 52 scheduled probes`` (or why there are none yet)."""
    if result is None:
        return ""
    done = len(result.probe_results)
    scheduled = done + result.unfinished_probes
    if not scheduled:
        return " before any probe was scheduled"
    return f" after {done} of {scheduled} scheduled probes"


def line(result: JobResult | None = None, logged: str | None = None) -> str:
    """The one line of an interrupted job: how far it got and where its run is."""
    where = logged or "nothing was logged"
    return f"error: interrupted (Ctrl-C){progress_text(result)}; {where}"


def arm_second(note: str | None = None) -> None:
    """After the first Ctrl-C: a second one ends the process at once, in one line.

    ``note`` says what it leaves behind (e.g. the run being logged: nothing more is written
    to it, not even its status, as the main thread may hold the store's lock). Only the
    main thread may install a signal handler; elsewhere (a test calling the pipeline on a
    thread) nothing changes.
    """
    if note is not None:
        _State.note = note
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_now)


def exiting() -> None:
    """The job's line is printed and the process is ending: a further Ctrl-C ends it
    silently (no second line, no traceback from an exit handler)."""
    _State.note = None
    arm_second()


def _exit_now(signum: int, frame: Any) -> None:
    sys.stdout.flush()
    if _State.note is not None:
        sys.stderr.write(f"error: interrupted again (Ctrl-C); {_State.note}\n")
    sys.stderr.flush()
    os._exit(EXIT_CODE)
