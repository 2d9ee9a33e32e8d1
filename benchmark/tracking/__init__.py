"""MLflow tracking: the only layer that talks to MLflow."""

from benchmark.tracking.mlflow_store import log_job, prepare_store, tracking_uri

__all__ = ["log_job", "prepare_store", "tracking_uri"]
