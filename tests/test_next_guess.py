"""The offline answerer's next-step guess: each rule of benchmark.answerer.next_guess on a
small session, through ExtractiveAnswerer as a job calls it."""

from __future__ import annotations

import pytest
from conftest import call_message, result_message

from benchmark.answerer import AnswerRequest, ExtractiveAnswerer
from benchmark.answerer.next_guess import traceback_file
from benchmark.transcript.models import Message

FAILING = """\
============================= FAILURES =============================
___________________________ test_add ___________________________
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/_pytest/python.py", line 194, in call
  File "/testbed/tests/test_calc.py", line 4, in test_add
  File "/testbed/src/calc.py", line 3, in add
AssertionError: 2 != 3
==================== 1 failed in 0.12s ====================
"""
SOURCE = "1 def add(a, b):\n2     '''Sum.'''\n3     return a - b\n"

SESSION = [
    Message(role="system", content="You are a coding agent."),
    Message(role="user", content="Fix the failing test in tests/test_calc.py."),
    Message.model_validate(call_message("c1", "bash", {"command": "pytest tests/test_calc.py"})),
    Message.model_validate(result_message("c1", FAILING)),
    Message.model_validate(
        call_message(
            "c2", "str_replace_editor", {"command": "view", "path": "/testbed/src/calc.py"}
        )
    ),
    Message.model_validate(result_message("c2", f"Here is /testbed/src/calc.py:\n{SOURCE}")),
    Message.model_validate(
        call_message(
            "c3",
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": "/testbed/src/calc.py",
                "old_str": "return a - b",
                "new_str": "return a + b",
            },
        )
    ),
    Message.model_validate(result_message("c3", "The file /testbed/src/calc.py has been edited.")),
]


def guess(context: list[Message]) -> str:
    request = AnswerRequest(question="What do you do next?", context=context, form="next_action")
    return ExtractiveAnswerer().answer(request).text


# (messages of SESSION kept, the guess): one rule each.
RULES = [
    (4, "edit /testbed/src/calc.py"),  # a failing run: the file its traceback names
    (6, "edit /testbed/src/calc.py"),  # opened, not edited since: edit it
    (8, "bash tests/test_calc.py"),  # just edited: rerun the last test command
    (2, ""),  # no action, no plan: nothing to go on (scored 0)
]


@pytest.mark.parametrize(("kept", "line"), RULES)
def test_guess_follows_the_last_thing_done(kept: int, line: str) -> None:
    assert guess(SESSION[:kept]) == line


def test_a_failing_run_without_a_traceback_edits_the_last_opened_file() -> None:
    quiet = [
        *SESSION[:2],
        *SESSION[4:6],  # opened calc.py
        Message.model_validate(
            call_message("c4", "bash", {"command": "pytest tests/test_calc.py"})
        ),
        Message.model_validate(result_message("c4", "==== 1 failed in 0.1s ====")),
    ]
    assert guess(quiet) == "edit /testbed/src/calc.py"


def test_an_open_plan_item_naming_a_path_is_the_next_edit() -> None:
    todos = {
        "todos": [
            {"content": "Read the issue", "status": "completed", "activeForm": "Reading"},
            {"content": "Handle None in `src/util.py`", "status": "pending", "activeForm": "x"},
        ]
    }
    context = [*SESSION[:2], Message.model_validate(call_message("p1", "TodoWrite", todos))]
    assert guess(context) == "edit src/util.py"


def test_otherwise_the_last_command_is_repeated() -> None:
    listing = [
        *SESSION[:2],
        Message.model_validate(call_message("l1", "bash", {"command": "ls -la /testbed"})),
        Message.model_validate(result_message("l1", "src\ntests\n")),
    ]
    assert guess(listing) == "bash ls"


def test_a_free_text_question_is_answered_as_before() -> None:
    request = AnswerRequest(question="Which file did we edit?", context=SESSION)
    assert "calc.py" in ExtractiveAnswerer().answer(request).text
    assert ExtractiveAnswerer().answer(request).text != guess(SESSION)


TRACEBACKS = [
    (FAILING, "/testbed/src/calc.py"),
    ("src/calc.py:3: AssertionError\n1 failed", "src/calc.py"),  # pytest's short form
    ('File "/usr/lib/python3.11/site-packages/x.py", line 1, in f\n', None),
    ("nothing here", None),
]


@pytest.mark.parametrize(("output", "path"), TRACEBACKS)
def test_traceback_file_is_the_innermost_own_frame(output: str, path: str | None) -> None:
    assert traceback_file(output) == path
