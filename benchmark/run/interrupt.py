"""Signals: one line on stderr, exit code 128 + signal, and the job's run logged as KILLED.

Ctrl-C (SIGINT), SIGTERM and SIGHUP take one path. ``install`` (``__main__``) has the first
one raise in the main thread, wherever the job is: ``KeyboardInterrupt`` for SIGINT,
:class:`Terminated` (a ``KeyboardInterrupt``) for the others, so every ``except
KeyboardInterrupt`` of the job handles all three alike: ``run_job`` turns it into
:class:`JobInterrupted` carrying what was done, ``__main__`` logs that as a KILLED run and
prints :func:`line`. From then on a second signal must not wait for anything (a slow store,
a hung connection): it prints its own line, runs what :func:`on_second` registered (e.g.
a helper that ends the run once this process is gone) and leaves at once with
``os._exit``. Inside :func:`deferred` (a store being migrated: stopped halfway it is
broken for good) signals are held and acted on when the section ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.run.results import JobResult

EXIT_CODE = 130  # 128 + SIGINT, what a shell reports for a job ended by Ctrl-C
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_LABELS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C would be so the same handling applies."""

    def __init__(self, signum: int) -> None:
        super().__init__(label(signum))
        self.signum = signum


class JobInterrupted(KeyboardInterrupt):
    """A signal during a job; ``result`` holds the probes finished so far (``interrupted``)."""

    def __init__(self, result: JobResult) -> None:
        super().__init__("interrupted")
        self.result = result


class Stopped(KeyboardInterrupt):
    """A signal, handled: ``args[0]`` is the one line to print (see :func:`line`)."""


class LoggingInterrupted(KeyboardInterrupt):
    """A signal while a run was being logged; the run, ``run_id``, was ended as KILLED."""

    def __init__(self, run_id: str) -> None:
        super().__init__("interrupted while logging")
        self.run_id = run_id


class _State:
    # What the second signal's line says about the run; None once the job's own line is out.
    note: str | None = "nothing was logged"
    signum: int | None = None  # the first signal of this process's job
    deferring = False
    pending: list[int] = []  # signals held by ``deferred``
    on_second: Callable[[], None] | None = None


def label(signum: int | None = None) -> str:
    """``Ctrl-C``, ``SIGTERM`` or ``SIGHUP``: the signal (default: the first one received)."""
    signum = signum or _State.signum or signal.SIGINT
    return _LABELS.get(signum, signal.Signals(signum).name)


def exit_code(signum: int | None = None) -> int:
    """128 + the signal, as a shell reports a process it ended (130 for Ctrl-C)."""
    return 128 + int(signum or _State.signum or signal.SIGINT)


def progress_text(result: JobResult | None) -> str:
    """``after 37 of 52 scheduled probes`` (or why there are none yet)."""
    if result is None:
        return ""
    done = len(result.probe_results)
    scheduled = done + result.unfinished_probes
    if not scheduled:
        return " before any probe was scheduled"
    return f" after {done} of {scheduled} scheduled probes"


def line(result: JobResult | None = None, logged: str | None = None, doing: str = "") -> str:
    """The one line of an interrupted job: what it was ``doing`` (`` while logging``), how
    far it got and where its run is."""
    where = logged or "nothing was logged"
    return f"error: interrupted ({label()}){doing}{progress_text(result)}; {where}"


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> dict[int, Any]:
    """Handle SIGINT, SIGTERM and SIGHUP as above, from a fresh start; the handlers replaced
    (for :func:`restore`). Only the main thread may install one: elsewhere, nothing."""
    forget()
    if not _main_thread():
        return {}
    return {signum: signal.signal(signum, _on_signal) for signum in HANDLED}


def forget() -> None:
    """No signal received yet: the state a fresh process starts with (an in-process
    caller that ran a job a signal stopped starts the next one clean)."""
    _State.note, _State.signum, _State.pending, _State.on_second = (
        "nothing was logged",
        None,
        [],
        None,
    )


def restore(previous: dict[int, Any]) -> None:
    """Put back the handlers ``install`` replaced (an in-process caller's, e.g. pytest's)."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def on_startup() -> None:
    """While ``__main__`` loads its modules: nothing is done yet, so a signal ends the
    process at once in one line (an exception there would be a traceback)."""
    for signum in HANDLED:
        signal.signal(signum, _exit_at_startup)


def _exit_at_startup(signum: int, frame: Any) -> None:
    sys.stderr.write(f"error: interrupted ({label(signum)}) while starting; nothing was logged\n")
    sys.stderr.flush()
    os._exit(exit_code(signum))


def _on_signal(signum: int, frame: Any) -> None:
    if _State.deferring:
        _State.pending.append(signum)
        return
    if _State.signum is None:
        _State.signum = signum
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)
    _exit_now(signum, frame)


def received() -> int | None:
    """The first signal received (None: none yet)."""
    return _State.signum


def arm_second(note: str | None = None) -> None:
    """After the first signal: a second one ends the process at once, in one line.

    ``note`` says what it leaves behind (e.g. the run being logged: nothing more is written
    to it, not even its status, as the main thread may hold the store's lock). A first
    ``KeyboardInterrupt`` that came without :func:`install` (a caller's own handler) counts
    as Ctrl-C. Only the main thread may install a signal handler; elsewhere (a test calling
    the pipeline on a thread) nothing changes.
    """
    if note is not None:
        _State.note = note
    if _State.signum is None:
        _State.signum = signal.SIGINT
    if _main_thread():
        for signum in HANDLED:
            signal.signal(signum, _on_signal)


def set_note(note: str, on_second: Callable[[], None] | None = None) -> None:
    """What a second signal would leave, from now on (a run was opened: where it is and what
    ends it); ``on_second`` runs just before such a signal ends the process."""
    _State.note = note
    _State.on_second = on_second


def exiting() -> None:
    """The job's line is printed and the process is ending: a further signal ends it
    silently (no second line, no traceback from an exit handler)."""
    _State.note = None
    _State.on_second = None
    arm_second()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold signals while the body runs (it must not be stopped halfway), then act on them:
    the first raises as usual, any later one ends the process."""
    if _State.deferring or not _main_thread():
        yield
        return
    _State.deferring = True
    try:
        yield
    finally:
        _State.deferring = False
        pending, _State.pending = _State.pending, []
        if len(pending) > 1 and _State.signum is None:  # twice while held: leave now
            _State.signum = pending[0]
            _exit_now(pending[-1], None)
        if pending:
            _on_signal(pending[-1], None)


def _exit_now(signum: int, frame: Any) -> None:
    sys.stdout.flush()
    if _State.note is not None:
        sys.stderr.write(f"error: interrupted again ({label(signum)}); {_State.note}\n")
    sys.stderr.flush()
    if _State.on_second is not None:
        with contextlib.suppress(Exception):
            _State.on_second()
    os._exit(exit_code(signum))
