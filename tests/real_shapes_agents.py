"""Round-2 logs of Codex CLI, mini-swe-agent v2 and SWE-agent 1.x, in their on-disk shapes
(see ``real_shapes2`` for Claude Code and why these exist).

* ``codex_rollout``: a Codex CLI 2026 rollout: ``session_meta`` (base instructions, git),
  ``turn_context``, ``event_msg`` (user message, token counts, agent message), the developer
  permissions message, AGENTS.md and environment context, encrypted ``reasoning``,
  ``exec_command`` with a ``write_stdin`` poll that ends in a failure, ``apply_patch`` as a
  custom tool, ``local_shell_call``, ``update_plan``, a ``ghost_snapshot`` and a ``compacted``
  item. ``prelude_words`` sizes the developer instructions (about 1.4 tokens a word).
* ``mini_v2``: a mini-swe-agent v2 ``.traj.json`` with tool calls of ``bash``.
* ``swe_agent_demo``: a SWE-agent 1.x function-calling ``.traj`` whose history opens with a
  demonstration (``put_demos_in_history``: ``is_demo`` entries with their own tool calls).
"""

from __future__ import annotations

import json
from pathlib import Path

CART_PATCH = (
    "*** Begin Patch\n*** Update File: src/shop/cart.py\n@@ def total(self):\n"
    "-        return round(sum(i.price for i in self.items) * (1 - self.discount), 2)\n"
    "+        gross = sum(i.price for i in self.items)\n"
    "+        return (gross * (1 - self.discount)).quantize(CENT, ROUND_HALF_UP)\n"
    "*** End Patch\n"
)


def _env(kind: str, payload: dict, n: int) -> dict:
    return {
        "timestamp": f"2026-05-02T14:{n // 60 % 60:02d}:{n % 60:02d}.{n:03d}Z",
        "type": kind,
        "payload": payload,
    }


def _msg(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _fc(call_id: str, name: str, args: dict) -> dict:
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(args),
        "call_id": call_id,
    }


def _out(call_id: str, text: str) -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _reason(summary: str) -> dict:
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}],
        "content": None,
        "encrypted_content": "gAAAAABo" + "x" * 120,
    }


def _tokens(total: int) -> dict:
    usage = {
        "input_tokens": total,
        "cached_input_tokens": total // 2,
        "output_tokens": 90,
        "reasoning_output_tokens": 40,
        "total_tokens": total + 90,
    }
    return {
        "type": "token_count",
        "info": {
            "total_token_usage": usage,
            "last_token_usage": usage,
            "model_context_window": 272000,
        },
        "rate_limits": {"primary": {"used_percent": 3.0, "window_minutes": 300}},
    }


def codex_rollout(folder: Path, prelude_words: int = 300, filler: int = 0) -> Path:
    """Round discounted cart totals to the cent: read, a failing test run polled with
    ``write_stdin``, a patch, a passing run, a plan update, a compaction, a follow-up."""
    rules = " ".join(
        f"Rule {n % 61}: prefer rg over grep and keep diffs small."
        for n in range(prelude_words // 9)
    )
    meta = {
        "id": "019a9f3e-5c21-7d40-b8e2-6f1a0c9d4e77",
        "timestamp": "2026-05-02T14:00:00.000Z",
        "cwd": "/Users/kim/src/shop",
        "originator": "codex_cli_rs",
        "cli_version": "0.104.0",
        "source": "cli",
        "model_provider": "openai",
        "base_instructions": {"text": "You are Codex, based on GPT-5. " + rules},
        "git": {
            "commit_hash": "4be1c0d",
            "branch": "main",
            "repository_url": "git@example.com:kim/shop.git",
        },
    }
    items: list[tuple[str, dict]] = [("session_meta", meta)]
    ri = lambda p: items.append(("response_item", p))  # noqa: E731
    ev = lambda p: items.append(("event_msg", p))  # noqa: E731
    ri(
        _msg(
            "developer",
            "<permissions instructions>Filesystem sandboxing: workspace-write. "
            "Approval policy: on-request.</permissions instructions>",
        )
    )
    ri(
        _msg(
            "user",
            "# AGENTS.md instructions for /Users/kim/src/shop\n\n<INSTRUCTIONS>\n"
            "Money is Decimal. Run `pytest -q` before you finish.\n</INSTRUCTIONS>",
        )
    )
    ri(
        _msg(
            "user",
            "<environment_context>\n  <cwd>/Users/kim/src/shop</cwd>\n  <approval_policy>"
            "on-request</approval_policy>\n  <shell>zsh</shell>\n</environment_context>",
        )
    )
    items.append(
        (
            "turn_context",
            {
                "cwd": "/Users/kim/src/shop",
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write"},
                "model": "gpt-5.2-codex",
                "effort": "medium",
                "summary": "auto",
            },
        )
    )
    task = (
        "Cart totals with a discount are off by a cent (9.99 instead of 10.00). Fix the rounding."
    )
    ev({"type": "user_message", "message": task, "images": []})
    ri(_msg("user", task))
    ri(_reason("**Locating total computation**"))
    ri(
        _fc(
            "call_rg1",
            "shell_command",
            {"command": 'rg -n "def total" src', "workdir": "/Users/kim/src/shop"},
        )
    )
    ri(
        _out(
            "call_rg1",
            "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nsrc/shop/cart.py:31:    def total(self):\n",  # noqa: E501
        )
    )
    for n in range(filler):
        ri(
            _fc(
                f"call_f{n}", "shell_command", {"command": f"sed -n '1,40p' src/shop/module_{n}.py"}
            )
        )
        ri(
            _out(
                f"call_f{n}",
                f"Exit code: 0\nOutput:\nclass Module{n}:\n    rate = Decimal('0.{n:02d}')\n",
            )
        )
        ri(_msg("assistant", f"module_{n}.py keeps its rate as a Decimal already."))
    ev(_tokens(21000))
    ri(
        _fc(
            "call_t1",
            "exec_command",
            {"cmd": "pytest -q tests/test_cart.py", "yield_time_ms": 1000},
        )
    )
    ri(
        _out(
            "call_t1",
            "Chunk ID: 2f1a\nWall time: 1.0 seconds\nProcess running with session ID 41\nOutput:\n..F",  # noqa: E501
        )
    )
    ri(_fc("call_w1", "write_stdin", {"session_id": 41, "chars": "", "yield_time_ms": 5000}))
    ri(
        _out(
            "call_w1",
            "Chunk ID: 9c0b\nWall time: 2.3 seconds\nProcess exited with code 1\nOutput:\n"
            "FAILED tests/test_cart.py::test_discount_rounding - AssertionError: assert Decimal('9.99') == "  # noqa: E501
            "Decimal('10.00')\n1 failed, 2 passed in 0.21s\n",
        )
    )
    ev(
        {
            "type": "agent_message",
            "message": "The float round() loses the half cent; switching to Decimal quantize.",
        }
    )
    ri(_msg("assistant", "The float round() loses the half cent; switching to Decimal quantize."))
    ri(
        {
            "type": "ghost_snapshot",
            "ghost_commit": {
                "id": "9d2e11f",
                "parent": "4be1c0d",
                "preexisting_untracked_files": [],
                "preexisting_untracked_dirs": [],
            },
        }
    )
    ri(
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "call_p1",
            "name": "apply_patch",
            "input": CART_PATCH,
        }
    )
    ri(
        {
            "type": "custom_tool_call_output",
            "call_id": "call_p1",
            "output": json.dumps(
                {
                    "output": "Success. Updated the following files:\nM src/shop/cart.py\n",
                    "metadata": {"exit_code": 0, "duration_seconds": 0.0},
                }
            ),
        }
    )
    ri(
        {
            "type": "local_shell_call",
            "id": "lsh_01",
            "call_id": "call_l1",
            "status": "completed",
            "action": {
                "type": "exec",
                "command": ["bash", "-lc", "pytest -q"],
                "timeout_ms": 120000,
                "working_directory": "/Users/kim/src/shop",
            },
        }
    )
    ri(_out("call_l1", "Exit code: 0\nOutput:\n...........\n11 passed in 0.40s\n"))
    ri(
        _fc(
            "call_u1",
            "update_plan",
            {
                "explanation": "Rounding fixed",
                "plan": [
                    {"step": "Fix cart rounding", "status": "completed"},
                    {"step": "Add changelog entry", "status": "in_progress"},
                ],
            },
        )
    )
    ri(_out("call_u1", "Plan updated"))
    ev(_tokens(48000))
    items.append(
        (
            "compacted",
            {
                "message": "",
                "replacement_history": [
                    _msg("user", task),
                    {"type": "compaction", "encrypted_content": "gAAAAABpZ" + "y" * 80},
                ],
            },
        )
    )
    ev({"type": "context_compacted"})
    ri(_msg("user", "Also note the fix in CHANGELOG.md under Unreleased."))
    ri(
        _fc(
            "call_c1",
            "exec_command",
            {"cmd": "printf '%s\\n' '- Cart totals round half up to the cent.' >> CHANGELOG.md"},
        )
    )
    ri(
        _out(
            "call_c1",
            "Chunk ID: 1a2b\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n",
        )
    )
    ri(_msg("assistant", "CHANGELOG.md has the entry under Unreleased; all 11 tests pass."))
    for n in range(filler // 3):
        ri(_msg("assistant", f"Tail note {n}: nothing else pending."))
    records = [_env(kind, payload, n) for n, (kind, payload) in enumerate(items)]
    name = "rollout-2026-05-02T14-00-00-019a9f3e-5c21-7d40-b8e2-6f1a0c9d4e77.jsonl"
    path = folder / "2026" / "05" / "02" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _bash(call_id: str, command: str, thought: str) -> dict:
    args = json.dumps({"command": command})
    return {
        "role": "assistant",
        "content": thought,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": args}}
        ],
        "extra": {
            "actions": [{"command": command, "tool_call_id": call_id}],
            "cost": 0.004,
            "timestamp": 1767000000.0,
        },
    }


def _obs(call_id: str, code: int, output: str) -> dict:
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": f"<returncode>{code}</returncode>\n<output>\n{output}</output>",
        "extra": {"raw_output": output, "returncode": code, "timestamp": 1767000001.0},
    }


def mini_v2(folder: Path, filler: int = 0) -> Path:
    """mini-swe-agent v2, tool-call protocol: make ``slugify`` keep digits."""
    steps = [
        {
            "role": "system",
            "content": "You are a helpful assistant that can interact with a computer shell.",
        },
        {
            "role": "user",
            "content": "<pr_description>\nslugify('Route 66') returns 'route-' : digits are "
            "dropped.\n</pr_description>\nFix it in the repository at /testbed.",
        },
        _bash("call_a1", 'grep -rn "def slugify" /testbed/textkit', "Find slugify first."),
        _obs("call_a1", 0, "/testbed/textkit/slug.py:8:def slugify(text):\n"),
        _bash("call_a2", "sed -n '1,20p' /testbed/textkit/slug.py", "Read the function."),
        _obs(
            "call_a2",
            0,
            "import re\n_BAD = re.compile(r'[^a-z]+')\n\ndef slugify(text):\n"
            "    return _BAD.sub('-', text.lower()).strip('-')\n",
        ),
    ]
    for n in range(filler):
        steps += [
            _bash(
                f"call_f{n}",
                f"cat /testbed/textkit/util_{n}.py",
                f"Check util_{n} for other patterns.",
            ),
            _obs(f"call_f{n}", 0, f"def util_{n}(s):\n    return s.strip()\n"),
        ]
    steps += [
        _bash(
            "call_a3",
            "cd /testbed && python -c \"from textkit.slug import slugify; print(slugify('Route 66'))\"",  # noqa: E501
            "Reproduce before changing anything.",
        ),
        _obs("call_a3", 0, "route\n"),
        _bash(
            "call_a4",
            'sed -i "s/\\[^a-z\\]+/[^a-z0-9]+/" /testbed/textkit/slug.py',
            "The character class lacks digits; add 0-9 rather than rewriting the function.",
        ),
        _obs("call_a4", 0, ""),
        _bash("call_a5", "cd /testbed && python -m pytest tests/test_slug.py -q", "Run the tests."),
        _obs(
            "call_a5",
            1,
            "FAILED tests/test_slug.py::test_unicode - AssertionError: 'cafe' != 'caf'\n"
            "1 failed, 4 passed in 0.03s\n",
        ),
        _bash(
            "call_a6",
            "cd /testbed && git stash && python -m pytest tests/test_slug.py -q; git stash pop",
            "Check whether test_unicode failed before my change.",
        ),
        _obs("call_a6", 0, "FAILED tests/test_slug.py::test_unicode\n1 failed, 3 passed\n"),
        {
            "role": "assistant",
            "content": "test_unicode failed before too; it is unrelated. Submitting.",
            "tool_calls": [
                {
                    "id": "call_a7",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps(
                            {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}
                        ),
                    },
                }
            ],
        },
        _obs(
            "call_a7",
            0,
            "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a/textkit/slug.py ...\n",
        ),
        {
            "role": "exit",
            "content": "diff --git a/textkit/slug.py",
            "extra": {"exit_status": "Submitted", "submission": "diff --git a/textkit/slug.py"},
        },
    ]
    data = {
        "info": {
            "model_stats": {"instance_cost": 0.03, "api_calls": 8},
            "config": {
                "agent": {"step_limit": 250},
                "model": {"model_name": "gpt-5-mini"},
                "agent_type": "minisweagent.agents.default.DefaultAgent",
            },
            "mini_version": "2.1.0",
            "exit_status": "Submitted",
            "submission": "diff --git a/textkit/slug.py",
        },
        "messages": steps,
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "textkit__textkit-212",
    }
    path = folder / "textkit__textkit-212" / "textkit__textkit-212.traj.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def _call(n: int, name: str, args: dict, thought: str, demo: bool) -> dict:
    entry = {
        "role": "assistant",
        "content": thought,
        "thought": thought,
        "action": f"{name} ...",
        "agent": "main",
        "message_type": "action",
        "tool_calls": [
            {
                "id": f"call_{'demo' if demo else 'real'}{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }
    if demo:
        entry["is_demo"] = True
    return entry


def _tool(n: int, text: str, demo: bool) -> dict:
    entry = {
        "role": "tool",
        "content": text,
        "agent": "main",
        "message_type": "observation",
        "tool_call_ids": [f"call_{'demo' if demo else 'real'}{n}"],
    }
    if demo:
        entry["is_demo"] = True
    return entry


DEMO_FILE = "/testbed/src/marshmallow/fields.py"


def swe_agent_demo(folder: Path, filler: int = 0) -> Path:
    """SWE-agent 1.x: a demonstration (another repo's fix) in the history, then the task."""
    history: list[dict] = [
        {
            "role": "system",
            "content": "You are a helpful assistant that can interact with a "
            "computer to solve tasks.",
            "agent": "main",
            "message_type": "system_prompt",
        }
    ]
    demo = [
        {
            "role": "user",
            "content": "<uploaded_files>\n/testbed\n</uploaded_files>\n<pr_description>\n"
            "TimeDelta serialization precision\n</pr_description>",
            "agent": "main",
            "message_type": "observation",
        },
        _call(
            1,
            "str_replace_editor",
            {"command": "view", "path": DEMO_FILE, "view_range": [1470, 1480]},
            "Look at TimeDelta._serialize.",
            True,
        ),
        _tool(
            1, "1475\t        return int(value.total_seconds() / base_unit.total_seconds())", True
        ),
        _call(
            2,
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": DEMO_FILE,
                "old_str": "return int(value.total_seconds() / base_unit.total_seconds())",
                "new_str": "return int(round(value.total_seconds() / base_unit.total_seconds()))",
            },
            "Round instead of truncating.",
            True,
        ),
        _tool(2, f"The file {DEMO_FILE} has been edited.", True),
        _call(3, "submit", {}, "Done.", True),
        _tool(3, "diff --git a/src/marshmallow/fields.py", True),
    ]
    for entry in demo:
        entry["is_demo"] = True
    history += demo
    history.append(
        {
            "role": "user",
            "agent": "main",
            "message_type": "observation",
            "content": "<uploaded_files>\n/testbed\n</uploaded_files>\n<pr_description>\nparse_duration('1h30m') "  # noqa: E501
            "returns 3600: the minutes are ignored.\n</pr_description>\nMake the minimal change.",
        }
    )
    real = [
        (
            "str_replace_editor",
            {"command": "view", "path": "/testbed/durations/parse.py"},
            "View the parser.",
            "     1\timport re\n     2\t_UNIT = re.compile(r'(\\d+)([hs])')\n",
        ),
        (
            "bash",
            {
                "command": "cd /testbed && python -c \"from durations.parse import parse_duration as p; print(p('1h30m'))\""  # noqa: E501
            },
            "Reproduce.",
            "3600\n",
        ),
    ]
    for n in range(filler):
        real.append(
            (
                "str_replace_editor",
                {"command": "view", "path": f"/testbed/durations/unit_{n}.py"},
                f"Check unit_{n}.",
                f"     1\tUNIT_{n} = {n * 60}\n",
            )
        )
    real += [
        (
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": "/testbed/durations/parse.py",
                "old_str": "_UNIT = re.compile(r'(\\d+)([hs])')",
                "new_str": "_UNIT = re.compile(r'(\\d+)([hms])')",
            },
            "The unit class lacks m; add it so minutes are matched.",
            "The file /testbed/durations/parse.py has been edited.",
        ),
        (
            "bash",
            {"command": "cd /testbed && python -m pytest tests/test_parse.py -q"},
            "Run tests.",
            "E   KeyError: 'm'\nFAILED tests/test_parse.py::test_minutes - KeyError: 'm'\n",
        ),
        (
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": "/testbed/durations/parse.py",
                "old_str": "_SECONDS = {'h': 3600, 's': 1}",
                "new_str": "_SECONDS = {'h': 3600, 'm': 60, 's': 1}",
            },
            "The table needs minutes too.",
            "The file /testbed/durations/parse.py has been edited.",
        ),
        (
            "bash",
            {"command": "cd /testbed && python -m pytest tests/test_parse.py -q"},
            "Run tests again.",
            "6 passed in 0.02s\n",
        ),
        ("submit", {}, "Submit.", "diff --git a/durations/parse.py b/durations/parse.py"),
    ]
    for n, (name, args, thought, output) in enumerate(real):
        history += [_call(n, name, args, thought, False), _tool(n, output, False)]
    data = {
        "trajectory": [],
        "history": history,
        "info": {
            "exit_status": "submitted",
            "submission": "diff --git a/durations/parse.py",
            "swe_agent_version": "1.1.0",
        },
        "replay_config": json.dumps({"problem_statement": {"id": "durations-77", "type": "text"}}),
        "environment": "main",
    }
    path = folder / "durations-77" / "durations-77.traj"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path
