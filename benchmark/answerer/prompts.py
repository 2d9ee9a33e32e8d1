"""Prompt text of the LLM answerer, on the chat path and the Responses API path.

The wording is ours. On the chat path the context and the question are
untrusted (they come from the session), so they travel as JSON data in the
user message (:mod:`benchmark.llm.untrusted`).
"""

from __future__ import annotations

from benchmark.llm import untrusted
from benchmark.llm.prompting import CONTEXT_FORMAT

_ANSWER_RULES = """\
from that context alone, precisely and briefly, quoting exact names, paths, values and \
commands where they matter.

If the context does not contain the answer, write NOT IN CONTEXT on the first line, \
then give your best guess on the next line."""

ANSWERER_TASK = (
    "You are an AI coding assistant resuming a long working session. Part of the session "
    'was shortened; what is left of it is "data.context": ' + CONTEXT_FORMAT + ". Answer "
    'the question in "data.question" ' + _ANSWER_RULES
)
ANSWERER_SYSTEM = untrusted.system_text(ANSWERER_TASK)

# The Responses API path (a context holding a provider's encrypted item): the context is the
# conversation itself, sent as items, so the prompt points there rather than at data. The
# one exception to the data rule (see benchmark/answerer/llm.py): the item must stay in place.
ANSWERER_ITEMS_SYSTEM = (
    "You are an AI coding assistant resuming a long working session. Part of the session "
    "was shortened; what is left of it is the conversation up to the last user message, "
    "which holds the question. Answer it " + _ANSWER_RULES
)


def question_text(question: str) -> str:
    """How the question is put to the answerer, on either path."""
    return f"Question: {question}"


def answerer_messages(question: str, context: str) -> list[dict[str, str]]:
    """The chat request of the answerer: the context, then the question, both as data."""
    return untrusted.messages(ANSWERER_TASK, {"context": context, "question": question})
