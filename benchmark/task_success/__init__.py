"""Task success after compaction: resume the agent in a real environment (tau2-bench)
at each compaction point and score it by the environment's own evaluator.

Imported only by a job with ``task`` set (``+experiment=task_success``); tau2 itself
only when such a job runs (``tau2_env``). See the README's "Task success" section.
"""
