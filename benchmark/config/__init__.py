"""Configuration: what a job may be asked to do, checked before any work starts.

Owns the typed config (``schema.BenchmarkConfig``, built from Hydra's composed
``conf/``), the checks and bounds on every value (``checks``, ``limits``, ``rules``,
``validators``), the command line read before Hydra (``cli_checks``), a sweep's
validation of every job (``sweep_check``), building parts from ``_target_`` classes
(``instantiate``) and the output folders Hydra writes to (``hydra_outputs``,
``output_folders``). It may import each group's own config model where that lives
(``transcript``, ``policy``, ``probe``, ``answerer``, ``judge``, ``rubric``,
``summarizer``, ``tracking.config``, ``task_success``, ``audit``,
``run.compaction``, ``run.storage``, ``scoring.clusters``), ``llm`` (endpoint
checks), ``redaction`` and ``errors``; never the run loop (``run.job``,
``run.pipeline``, ``run.scheduling``). This ``__init__`` imports nothing, so a check
loads only what it needs.
"""
