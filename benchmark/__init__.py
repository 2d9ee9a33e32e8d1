"""A benchmark for context compaction in LLM agents.

One job: transcript -> compaction points -> probes -> policy -> answerer -> judge
-> rubric -> MLflow. Each stage is a plain function or small class over the
pydantic models in the stage's package; ``benchmark.run.pipeline`` wires them.
"""

__version__ = "0.1.0"
