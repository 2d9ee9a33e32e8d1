"""MLflow tracking: the only layer that talks to MLflow.

The package itself imports nothing, so ``benchmark.tracking.config`` (read by
``benchmark.config.schema``) loads without MLflow: import the stores from
``benchmark.tracking.mlflow_store`` and sweep metadata from ``benchmark.tracking.sweep``.
"""
