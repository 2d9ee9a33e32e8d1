"""Prompt text of the LLM answerer, on the chat path and the Responses API path.

The wording is ours. On the chat path the context and the question are
untrusted (they come from the session), so they travel as JSON data in the
user message (:mod:`benchmark.llm.untrusted`).
"""

from __future__ import annotations

from benchmark.activity.next_step import VERBS
from benchmark.llm import untrusted
from benchmark.llm.prompting import CONTEXT_FORMAT

_ANSWER_RULES = """\
from that context alone, precisely and briefly, quoting exact names, paths, values and \
commands where they matter.

If the context does not contain the answer, write NOT IN CONTEXT on the first line, \
then give your best guess on the next line."""

_RESUMING = (
    "You are an AI coding assistant resuming a long working session. Part of the session "
    "was shortened; what is left of it is "
)
_CHAT_CONTEXT = '"data.context": ' + CONTEXT_FORMAT + '. Answer the question in "data.question" '
_ITEMS_CONTEXT = (
    "the conversation up to the last user message, which holds the question. Answer it "
)
ANSWERER_TASK = _RESUMING + _CHAT_CONTEXT + _ANSWER_RULES
ANSWERER_SYSTEM = untrusted.system_text(ANSWERER_TASK)

# A next-action question (AnswerRequest.form "next_action"): one line, scored by rule.
_NEXT_ACTION_RULES = (
    "with the one action you would take next to carry on the work: a single line "
    "`verb target`, nothing else. verb is one of " + ", ".join(VERBS) + " or a tool name "
    "the question lists; target is the file path, the test id, or the shell command "
    "(after bash). If you cannot tell, still give your best guess in that format."
)
NEXT_ACTION_TASK = _RESUMING + _CHAT_CONTEXT + _NEXT_ACTION_RULES
NEXT_ACTION_ITEMS_SYSTEM = _RESUMING + _ITEMS_CONTEXT + _NEXT_ACTION_RULES

# The Responses API path (a context holding a provider's encrypted item): the context is the
# conversation itself, sent as items, so the prompt points there rather than at data. The
# one exception to the data rule (see benchmark/answerer/llm.py): the item must stay in place.
ANSWERER_ITEMS_SYSTEM = _RESUMING + _ITEMS_CONTEXT + _ANSWER_RULES


def question_text(question: str) -> str:
    """How the question is put to the answerer, on either path."""
    return f"Question: {question}"


def answerer_messages(question: str, context: str, form: str = "text") -> list[dict[str, str]]:
    """The chat request of the answerer: the context, then the question, both as data
    (``form`` "next_action": the one-line ``verb target`` instructions)."""
    task = NEXT_ACTION_TASK if form == "next_action" else ANSWERER_TASK
    return untrusted.messages(task, {"context": context, "question": question})


def items_system(form: str = "text") -> str:
    """The instructions of the Responses API path for a reply of ``form``."""
    return NEXT_ACTION_ITEMS_SYSTEM if form == "next_action" else ANSWERER_ITEMS_SYSTEM
