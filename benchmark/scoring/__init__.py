"""Scoring and statistics: per-probe scores rolled up into what a run reports.

Owns the metric names (``metric_names``), the rubric roll-up's estimates and their
intervals (``stats``, ``jackknife``, ``rollup_estimates``, ``clusters``), fact
survival (``survival``), next-action scoring by rule (``next_action_score``),
abstention, and the printed scorecard (``scorecard``). Plain functions over the
probe, judge and rubric models: it may import ``probe``, ``judge``, ``rubric``,
``activity`` and ``transcript`` models and ``run.results``' types; never the run
loop, ``tracking`` or an LLM client. This ``__init__`` imports nothing.
"""
