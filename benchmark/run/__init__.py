"""The job's run loop: from a checked config to one run record.

Owns ``job`` (one job start to end), ``parts`` (policy, answerer, judge built once),
``pipeline`` (transcripts, compaction points, probes), ``scheduling`` (compaction and
the probes in flight), ``evaluation`` (answer and judge one probe), ``compaction``
(where points fall), ``results`` and ``run_record`` (what a job returns, what is
logged), the files a job writes (``job_files``, ``context_files``, ``storage``,
``disk_errors``), ``progress`` and signals (``interrupt``). It may import ``config``,
``scoring``, ``text`` and the part packages; only ``job`` imports ``tracking`` (to hand
the record over), and nothing here imports ``report``. This ``__init__`` imports nothing.
"""
