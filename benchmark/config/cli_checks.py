"""The command line read before Hydra reads it, so that what Hydra would report in a page
of usage text or a traceback is one line naming the flag or the key.

Hydra's flags go through Hydra's own argument parser, with its usage page held back. Each
override is parsed alone with Hydra's override parser: Python refuses to read an integer
of more than 4,300 digits (a ``ValueError``), and a value nested a few hundred brackets
deep exhausts the parser's recursion; both escape Hydra as tracebacks. Syntax errors are
left to Hydra, which names them (``benchmark.config.checks.override_error``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

from benchmark.config.limits import MAX_DEPTH, MAX_ITEMS, MAX_KEY_CHARS, shown_key
from benchmark.errors import UserError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"  # the same conf/ however it is run
MAX_ARGUMENT_CHARS = 100_000  # one override; a value is further held to MAX_TEXT_CHARS
# Flags Hydra answers by printing and exiting: left to it.
_PRINTING_FLAGS = ("-h", "--help", "--hydra-help", "--version")


def check_arguments(argv: list[str]) -> None:
    """Hydra's flags and each override readable, keys and values within their limits."""
    if not any(arg in _PRINTING_FLAGS for arg in argv):
        _check_flags(argv)
    for arg in argv:
        if "=" in arg and not arg.startswith("-"):
            check_override(arg)


def _check_flags(argv: list[str]) -> None:
    from hydra._internal.utils import get_args_parser

    parser = get_args_parser()

    def refuse(message: str) -> NoReturn:
        given = message.partition("unrecognized arguments: ")[2].split()
        if any(not arg.startswith("-") for arg in given):  # an override after a flag
            message += " (flags such as -m go before the overrides)"
        raise UserError(f"{message} (see python -m benchmark --help)")

    parser.error = refuse  # type: ignore[method-assign]  # argparse prints usage, then exits
    parser.parse_args(argv)


def check_override(arg: str) -> None:
    """One override: its key short enough to be logged, its value readable by Hydra."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    key = arg.split("=", 1)[0].lstrip("+~")
    where = f"config key '{shown_key(key)}'"
    if len(key) > MAX_KEY_CHARS:
        raise UserError(f"{where}: key too long (at most {MAX_KEY_CHARS} characters)")
    if len(arg) > MAX_ARGUMENT_CHARS:
        raise UserError(
            f"{where}: value of {len(arg):,} characters is too long "
            f"(at most {MAX_ARGUMENT_CHARS:,} on the command line)"
        )
    # Hydra's parser takes seconds per thousand list entries (quadratic), and recurses per
    # bracket: both bounded before it reads the value.
    if arg.count(",") >= MAX_ITEMS:
        raise UserError(f"{where}: more than {MAX_ITEMS:,} entries (or commas) in one value")
    if _depth(arg) > MAX_DEPTH:
        raise UserError(f"{where}: value nested too deeply (at most {MAX_DEPTH} levels)")
    try:
        override = OverridesParser.create().parse_override(arg)
    except RecursionError:
        raise UserError(f"{where}: value nested too deeply to read") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise UserError(
                f"{where}: a number of more than {sys.get_int_max_str_digits():,} digits "
                "is too large (quote it to give it as text)"
            ) from None
        raise UserError(f"{where}: cannot read the value ({exc})") from None
    except Exception:  # noqa: BLE001 - Hydra reports its own syntax errors, by override
        return
    if key.startswith("hydra.") and not override.is_delete():
        check_hydra_setting(key, override.value())


# Hydra's settings that hold a mapping, whatever their schema says (``Any``): a launcher
# or a sweeper given as 5 fails in a traceback when the sweep starts (or never, in a run).
_MAPPINGS = {
    "hydra.launcher": "the launcher's settings; choose a launcher with hydra/launcher=<option>",
    "hydra.sweeper": "the sweeper's settings; choose a sweeper with hydra/sweeper=<option>",
    "hydra.callbacks": "callbacks by name, each a mapping with a _target_",
}


def check_hydra_setting(key: str, value: Any) -> None:
    """A ``hydra.*`` override Hydra would take and then fail on, in a traceback."""
    where = f"config key '{key}'"
    parent = key.rsplit(".", 1)[0]
    if key in _MAPPINGS and not isinstance(value, dict):
        raise UserError(f"{where}: holds {_MAPPINGS[key]} (got {type(value).__name__})")
    if parent == "hydra.callbacks" and not (isinstance(value, dict) and "_target_" in value):
        raise UserError(f"{where}: a callback is a mapping with a _target_ (a Callback class)")
    if key == "hydra.verbose" and not _is_verbose(value):
        raise UserError(
            f"{where}: must be true, false, a logger's name or a list of them (got {value!r})"
        )
    if key == "hydra.sweeper.max_batch_size" and not _positive_or_none(value):
        raise UserError(f"{where}: must be null or a whole number > 0 (got {value!r})")
    if key in ("hydra.launcher._target_", "hydra.sweeper._target_"):
        kind = key.split(".")[1]
        known = _plugins(kind)
        if value not in known:
            raise UserError(
                f"{where}: not a Hydra {kind} (choose one with hydra/{kind}=<option>; "
                f"{kind}s installed: {', '.join(sorted(known))})"
            )


def _depth(text: str) -> int:
    """How deep brackets and braces nest in ``text`` (quotes not told apart: an upper bound)."""
    depth = deepest = 0
    for char in text:
        if char in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]})":
            depth -= 1
    return deepest


def _is_verbose(value: Any) -> bool:
    if isinstance(value, bool | str):
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _positive_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


def _plugins(kind: str) -> set[str]:
    """The class paths of the installed Hydra launchers or sweepers."""
    from hydra.core.plugins import Plugins
    from hydra.plugins.launcher import Launcher
    from hydra.plugins.sweeper import Sweeper

    base = Launcher if kind == "launcher" else Sweeper
    return {f"{c.__module__}.{c.__name__}" for c in Plugins.instance().discover(base)}


def check_options(argv: list[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject an unknown config-group option in one line, before Hydra lists a page of them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        overrides = OverridesParser.create().parse_overrides(
            [a for a in argv if "=" in a and not a.startswith("-")]
        )
    except HydraException:
        return  # Hydra reports syntax errors itself
    for override in overrides:
        group = override.key_or_group
        folder = conf_dir / group
        # hydra/... options (launchers, sweepers) come from plugins, not only from conf/.
        if override.is_delete() or group.startswith("hydra/") or not _is_dir(folder):
            continue
        try:
            values = (
                list(override.sweep_string_iterator())
                if override.is_sweep_override()
                else [override.get_value_element_as_str()]
            )
        except HydraException:
            continue  # glob() sweeps need Hydra's config loader
        options = sorted(p.stem for p in folder.glob("*.yaml"))
        for value in values:
            if value not in options:
                raise UserError(f"unknown {group} '{value}' (choose from: {', '.join(options)})")


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long for the filesystem, a NUL
        return False
