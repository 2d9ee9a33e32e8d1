"""Run the stub in its own process, for clients that must not share a GIL with it.

A benchmark of the client measures the client alone only when the server
burns its CPU elsewhere; a test that kills a process needs the server to
survive it. :func:`serve_in_subprocess` starts ``python -m benchmark.stub``
and reads the port from its first line.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

_PREFIX = "listening on "


def stub_argv(**options: Any) -> list[str]:
    """CLI arguments for ``options`` (``fault_rate=0.2`` -> ``--fault-rate 0.2``).

    ``True`` is a bare flag, ``False`` and ``None`` are left out, and a list or tuple
    is joined with commas (``fault_kinds=("429", "hang")``).
    """
    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


def _first_line(stream: IO[str], timeout: float) -> str | None:
    """The stream's first line, or ``None`` if none comes in ``timeout`` seconds."""
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True)
    reader.start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


@contextmanager
def serve_in_subprocess(startup_timeout: float = 30.0, **options: Any) -> Iterator[str]:
    """Serve ``python -m benchmark.stub`` with ``options`` (its CLI flags) in a child
    process; yields the base URL, and terminates the child on exit."""
    command = [sys.executable, "-m", "benchmark.stub", *stub_argv(**options)]
    child = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        assert child.stdout is not None
        line = _first_line(child.stdout, startup_timeout)
        if line is None or not line.startswith(_PREFIX):
            code = child.poll()
            state = f"exited with {code}" if code is not None else "gave no address"
            raise RuntimeError(f"stub server {state}: {(line or '').strip()!r}")
        yield line[len(_PREFIX) :].strip()
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
