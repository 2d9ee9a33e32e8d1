"""MLflow's usage telemetry: off in every process of the benchmark unless asked for.

MLflow 3.x sends usage events to its servers from a background thread, set up when
``mlflow`` is imported. A benchmark that promises no network by default switches it off
with MLflow's own variable (``MLFLOW_DISABLE_TELEMETRY``, read at import and per event),
before MLflow loads in this process; the processes it starts (the tracking child, a
sweep's jobs) inherit it. ``tracking.telemetry: true`` leaves MLflow's default. Either
way the user's own setting of that variable, or of ``DO_NOT_TRACK``, wins.
"""

from __future__ import annotations

import os
import sys

SWITCH = "MLFLOW_DISABLE_TELEMETRY"
USER_SWITCHES = (SWITCH, "DO_NOT_TRACK")
_set_here = False  # SWITCH is this module's doing, not the user's


def apply(enabled: bool = False) -> None:
    """Telemetry off (``enabled`` False) or MLflow's default, unless the user chose."""
    global _set_here
    if not _set_here and any(name in os.environ for name in USER_SWITCHES):
        return  # the user's choice
    if enabled == (not _set_here):
        return  # as asked already
    if enabled:
        os.environ.pop(SWITCH, None)
    else:
        os.environ[SWITCH] = "true"
    _set_here = not enabled
    _restart_client()


def _restart_client() -> None:
    """MLflow imported already decided at import: let it decide again."""
    client = sys.modules.get("mlflow.telemetry.client")
    if client is not None:
        client.set_telemetry_client()
