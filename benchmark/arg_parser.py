"""The command-line parser of every ``python -m benchmark.<tool>``: its errors are one line.

``argparse`` prints its usage and ``<prog>: error: <message>`` on two or more lines, and
quotes the offending argument as typed (a key pasted in the wrong place, a newline, an
escape). Here a refused argument is one ``error: `` line through
:func:`benchmark.errors.print_error` (escaped, scrubbed), exit code 2, as the job's own.
"""

from __future__ import annotations

import argparse
import math
from typing import NoReturn

from benchmark.errors import print_error

__all__ = ["OneLineParser", "finite", "port"]


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one scrubbed line, exit 2."""

    def error(self, message: str) -> NoReturn:
        print_error(f"{message} (see {self.prog} --help)")
        raise SystemExit(2)


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: the system picks one); past it ``bind`` raises
    ``OverflowError``, which no ``OSError`` handler meets."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535 (got {value})")
    return value


def finite(text: str) -> float:
    """A finite number >= 0 (``nan`` passes every comparison, ``inf`` never ends a wait)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (got {text})")
    return value
