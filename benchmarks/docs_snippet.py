"""``--write-docs``: a benchmark script's printed figures, also written as a docs snippet.

The speed page (``docs/speed.md``) types no figure: it includes the snippet each script
writes into ``docs/figures/benchmarks/<script>.md`` when run with ``--write-docs``, so the
figures there are what the script printed, with the command and the machine that
printed them. Rerun a script with the flag to refresh its snippet.

Each script calls ``option(parser)`` (so ``--help`` lists the flag) and ends with
``run(main, __file__)``, which prints as before and, with the flag, tees stdout into the
snippet.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FLAG = "--write-docs"
FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures" / "benchmarks"


def option(parser: argparse.ArgumentParser) -> None:
    """Declare the flag (``run`` acts on it; ``main`` ignores it)."""
    parser.add_argument(
        FLAG,
        action="store_true",
        help=f"also write the printed figures to {FIGURES.relative_to(FIGURES.parents[2])}/",
    )


class _Tee(io.TextIOBase):
    """Writes go to the terminal and are kept for the snippet."""

    def __init__(self, target: Any) -> None:
        self.target, self.kept = target, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()


def command(script: str, argv: list[str]) -> str:
    """The command as a reader would type it (the flag left out)."""
    args = [a for a in argv if a != FLAG]
    return shlex.join(["python", f"benchmarks/{Path(script).name}", *args])


def machine() -> str:
    """Where the figures were taken: cores and load matter to every timing here."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} cores, load average {load:.1f}, Python {platform.python_version()}"


def snippet(script: str, argv: list[str], output: str) -> str:
    """The Markdown a docs page includes: the command, the machine, what it printed."""
    body = output.rstrip("\n")
    return (
        f"<!-- written by `{command(script, argv)} {FLAG}`; rerun it to refresh, "
        "do not edit -->\n"
        f"`{command(script, argv)}` ({machine()}):\n\n```text\n{body}\n```\n"
    )


def run(main: Callable[[], Any], script: str) -> Any:
    """``main()``; with ``--write-docs`` its stdout is also written as the script's snippet."""
    argv = sys.argv[1:]
    if FLAG not in argv:
        return main()
    os.environ.setdefault("COLUMNS", "120")  # rich tables: no wrapping at a pipe's 80
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        result = main()
    finally:
        sys.stdout = tee.target
    if result not in (None, 0):
        return result  # a failed run writes no figures
    FIGURES.mkdir(parents=True, exist_ok=True)
    out = FIGURES / f"{Path(script).stem}.md"
    out.write_text(snippet(script, argv, tee.kept.getvalue()), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return result
