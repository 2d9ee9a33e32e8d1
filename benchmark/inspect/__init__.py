"""``python -m benchmark.inspect``: another name for ``python -m benchmark.preview``, the
command that shows what a log holds and the probes it gives (``--probes``, ``--review``)."""
