"""MLflow tracking: the only layer that talks to MLflow."""

from benchmark.tracking.mlflow_run import log_run
from benchmark.tracking.mlflow_store import (
    prepare_store,
    prepare_tracking,
    store_uri,
    tracking_uri,
)
from benchmark.tracking.sweep import SweepInfo, sweep_info

__all__ = [
    "SweepInfo",
    "log_run",
    "prepare_store",
    "prepare_tracking",
    "store_uri",
    "sweep_info",
    "tracking_uri",
]
