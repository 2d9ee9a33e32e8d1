"""Size limits every config value meets, whatever its key: a key's length, a text's, a
list's, how deep values nest, how large a number is.

The schema bounds each known setting (``benchmark.config.validators``); these limits catch what
no field bounds: a part's own options, extra keys, a seed of a thousand digits. Past them a
value is a slip that would fail late (MLflow refuses a param key over 250 characters after
the whole job ran) or be copied into every record, so it is refused up front, in one line
naming the key. The value itself is never repeated: it may be 100 KB, or hold a credential.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchmark.errors import UserError

# MLflow's limit on a param key (mlflow.utils.validation.MAX_ENTITY_KEY_LENGTH): every
# dotted key of the config is logged as one.
MAX_KEY_CHARS = 250
MAX_TEXT_CHARS = 10_000  # a setting's text (the longest shipped: a URL of ~60)
MAX_ITEMS = 1_000  # entries of one list or mapping (a longer list: a folder or a glob)
MAX_DEPTH = 20  # levels of nesting (the deepest shipped: 5)
MAX_INT = 2**63 - 1  # what a 64-bit integer holds (SQLite, numpy, JSON readers)
MAX_FLOAT = 1e15  # no setting needs more; 1e300 is a typo
SHOWN_KEY_CHARS = 80  # an over-long key is named by its start
# Names that title runs, tables and folders: one printable line each.
NAME_KEYS = ("name", "run_name", "experiment")


def shown_key(key: str) -> str:
    """``key`` as an error names it: an over-long one cut, with its length."""
    if len(key) <= SHOWN_KEY_CHARS:
        return key
    return f"{key[:SHOWN_KEY_CHARS]}... ({len(key):,} characters)"


def check_limits(data: Any, key: str = "", depth: int = 0) -> None:
    """Every key and value of ``data`` (the resolved config) within the limits above."""
    where = f"config key '{shown_key(key or 'config')}'"
    if len(key) > MAX_KEY_CHARS:
        raise UserError(f"{where}: key too long (at most {MAX_KEY_CHARS} characters)")
    if depth > MAX_DEPTH:
        raise UserError(f"{where}: nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(data, bool) or data is None:
        return
    if isinstance(data, int):
        if not -MAX_INT - 1 <= data <= MAX_INT:
            raise UserError(f"{where}: number too large (at most {MAX_INT:,} in magnitude)")
    elif isinstance(data, float):
        if not math.isfinite(data):  # NaN passes `< 0` and `> 1` checks
            raise UserError(f"{where}: must be a finite number (got {data})")
        if abs(data) > MAX_FLOAT:
            raise UserError(f"{where}: number too large (at most {MAX_FLOAT:g} in magnitude)")
    elif isinstance(data, str):
        if key.rsplit(".", 1)[-1] in NAME_KEYS and not data.isprintable():
            raise UserError(
                f"{where}: a name must be printable text, without line breaks, tabs or "
                "control characters"
            )
        if len(data) > MAX_TEXT_CHARS:
            raise UserError(
                f"{where}: text of {len(data):,} characters is too long "
                f"(at most {MAX_TEXT_CHARS:,})"
            )
    elif isinstance(data, Mapping | list | tuple):
        if len(data) > MAX_ITEMS:
            raise UserError(f"{where}: {len(data):,} entries, too many (at most {MAX_ITEMS:,})")
        items = data.items() if isinstance(data, Mapping) else enumerate(data)
        # Values before sections: a bad `seed` is named, not the `transcript.seed` copying it.
        for name, value in sorted(items, key=lambda item: isinstance(item[1], Mapping | list)):
            check_limits(value, f"{key}.{name}" if key else str(name), depth + 1)
