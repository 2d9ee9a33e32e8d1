"""The inspect_ai task that :mod:`peer_inspect` runs: our job's LLM phase, as inspect does it.

Loaded by ``inspect eval`` in inspect_ai's own interpreter (it is not a dependency of this
package, and nothing here imports ``benchmark``). Each sample is a long agent-session
context and a question; ``generate()`` answers it and ``model_graded_qa()`` grades the
answer with the same model, so two calls per sample, like our answerer then judge.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate


@task
def llm_phase(dataset: str) -> Task:
    """``dataset``: a JSONL file of ``{"id", "input", "target"}`` rows."""
    return Task(dataset=json_dataset(dataset), solver=generate(), scorer=model_graded_qa())
