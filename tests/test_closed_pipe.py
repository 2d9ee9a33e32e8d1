"""Output read by a pipe that closes early (``--help | head -1``): no traceback, exit 141."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("args", [["--help"], ["--cfg", "job"]])
def test_a_closed_pipe_ends_quietly(args, tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader has left before the first line (`head -0`): every write fails
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "benchmark", *args],
            cwd=tmp_path,
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(write)
    err = proc.stderr.decode()
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
