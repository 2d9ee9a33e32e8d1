"""tau2 calls ``load_dotenv()`` when imported: a ``.env`` in the working folder must not reach
this process's environment when the task-success arm imports tau2. Each case is a fresh
``python -c`` process in a folder holding a planted ``.env`` (``python -c`` is where dotenv
looks in the working folder, as in a REPL, a notebook or a debugger)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("tau2", reason="the 'tau2' extra is not installed (pip install -e '.[tau2]')")

PLANTED = {"PLANTED_BY_DOTENV": "from-the-dotenv", "OPENAI_API_KEY": "sk-planted-by-dotenv-0123"}

# The arm's imports of tau2 (its domains, tasks, evaluators, a replay, a reward), then what
# the environment holds, and whether dotenv's own loader is back for the user's code.
SCRIPT = """
import json, os, sys
import dotenv, dotenv.main
original = dotenv.load_dotenv
from benchmark.task_success import tau2_env
if sys.argv[1] == "unguarded":
    import contextlib
    tau2_env._no_dotenv = contextlib.nullcontext
from benchmark.task_success.session import tau2_messages
tau2_env.tau2_loaded()
for domain in ("telecom", "airline"):
    task = next(iter(tau2_env.tasks(domain).values()))
    env = tau2_env.replay(domain, task, tau2_messages([]))
    tau2_env.reward(domain, task, [], env, True)
seen = {k: os.environ.get(k) for k in ("PLANTED_BY_DOTENV", "OPENAI_API_KEY")}
restored = dotenv.load_dotenv is original and dotenv.main.load_dotenv is original
dotenv.load_dotenv()  # the user's own call still loads the file
after = os.environ.get("PLANTED_BY_DOTENV")
print(json.dumps({"seen": seen, "restored": restored, "after": after}))
"""


def arm_imports_tau2(folder, mode: str = "guarded") -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PLANTED}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def planted(tmp_path):
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in PLANTED.items()))
    return tmp_path


def test_a_dotenv_in_the_working_folder_is_not_loaded_by_tau2s_import(planted):
    got = arm_imports_tau2(planted)
    assert got["seen"] == {"PLANTED_BY_DOTENV": None, "OPENAI_API_KEY": None}
    assert got["restored"] is True
    assert got["after"] == "from-the-dotenv"  # the file was there to find


def test_without_the_guard_tau2s_import_loads_it(planted):
    """The case above would catch the leak: unguarded, tau2's import loads the file."""
    got = arm_imports_tau2(planted, "unguarded")
    assert got["seen"] == PLANTED
