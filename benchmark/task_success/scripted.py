"""The loopback stub playing the agent and the customer with a scripted policy.

NOT A MEASUREMENT: these policies exist so the whole task-success arm runs in tests
and CI with no key. They are deterministic (they read only the request body) and
plainly limited:

* the **customer** opens with the task's reason for calling and its ticket
  (``[ticket airline/12]``), answers the agent's first question with what the
  task says it knows, says it already did to any later question, and says
  ``###STOP###`` to anything that is not a question;
* the **agent**, ``context`` mode, knows the task's plan (its gold actions, by the
  ticket in its history) but not their argument values: it takes the next gold
  action its history does not already show, once every argument value of it is
  stated in its history; else it asks once, then gives up. So a compacted history
  that lost an id stalls and scores lower, and one that lost a call repeats it;
* the **agent**, ``repeat`` mode, repeats a logged session's agent turns in order
  (its n-th turn is the log's n-th), then ends;
* with tools of its own (telecom's phone), the **customer** does what it is asked on
  its device: a request ``Please do this on your device: {"name": ..., "arguments": ...}``,
  or one naming a gold user action of its task, runs that tool as the user, and its next
  turn reports it (``I did this on my device: {...}`` and the tool's reply); the
  ``context`` agent asks for the task's gold user actions in order, and counts one done
  once its history shows that report. A compacted history that lost the report asks
  again, and the customer does it again (toggling airplane mode twice undoes it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from benchmark.task_success.marks import (
    AGENT_MARK,
    DEVICE_ASK,
    DEVICE_DONE,
    STOP,
    TICKET,
    TOOL_RESULT,
    USER_MARK,
    USER_TOOLS,
    WAITING,
)

# The ticket ends its line; task ids may hold brackets ("[mms_issue]...[PERSONA:None]").
_TICKET = re.compile(r"\[ticket ([a-z_]+)/(\S+)\]\s*$", re.MULTILINE)
_RESULT = TOOL_RESULT.split("{", 1)[0]  # how a tool's result opens
ALREADY = "I already gave you my details earlier in this conversation."
CANNOT = "I cannot continue: this conversation does not state the {}."
UNKNOWN_TASK = "I cannot tell which request this is, sorry."
DONE = "Your request is done."


def system_prompt(body: Mapping[str, Any]) -> str:
    messages = body.get("messages") or []
    first = messages[0] if messages and isinstance(messages[0], dict) else {}
    return str(first.get("content", "")) if first.get("role") == "system" else ""


def is_tau2(body: Mapping[str, Any]) -> bool:
    """An agent or user-simulator request of the task-success arm."""
    prompt = system_prompt(body)
    return prompt.startswith(AGENT_MARK) or prompt.startswith(USER_MARK)


class ScriptedTau2:
    """A reply hook for :class:`benchmark.stub.server.OpenAIStub`: the scripted agent and
    customer; any other request goes to ``fallback`` (default: the stub's plain echo).

    ``mode``: ``context`` or ``repeat`` (the agent's policy, see the module). ``logged``:
    for ``repeat``, a session's first customer message -> that log's agent turns (as the
    agent's JSON actions). ``tasks``: ``domain/id`` -> a tau2 Task not shipped with tau2
    (a planted one); shipped tasks are looked up by their ticket.
    """

    def __init__(
        self,
        mode: str = "context",
        logged: Mapping[str, list[str]] | None = None,
        tasks: Mapping[str, Any] | None = None,
        fallback: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.mode = mode
        self.logged = dict(logged or {})
        self.tasks = dict(tasks or {})
        self.fallback = fallback

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = system_prompt(body)
        if prompt.startswith(AGENT_MARK):
            return self.agent(body["messages"][1:])
        if prompt.startswith(USER_MARK):
            return self.user(prompt, body["messages"][1:])
        if self.fallback is None:  # the stub's plain echo (pass scripted_reply for more)
            from benchmark.stub.chat_route import default_reply

            return default_reply(body)
        return self.fallback(body)

    def task(self, ref: str) -> Any:
        if ref in self.tasks:
            return self.tasks[ref]
        from benchmark.errors import UserError
        from benchmark.task_success import tau2_env

        domain, _, task_id = ref.partition("/")
        try:
            return tau2_env.tasks(domain).get(task_id)
        except UserError:
            return None

    # -- the customer -------------------------------------------------------------------

    def user(self, prompt: str, messages: list[dict[str, Any]]) -> str:
        ref = prompt.split(TICKET, 1)[1].split("\n", 1)[0].strip() if TICKET in prompt else ""
        task = self.task(ref)
        info = task.user_scenario.instructions if task is not None else None
        if USER_TOOLS in prompt:
            return self._device_user(ref, task, info, messages)
        own = [m for m in messages if m.get("role") == "assistant"]
        if not own:
            reason = getattr(info, "reason_for_call", None) or str(info or "Hello.")
            return f"{reason.strip()}\n[ticket {ref}]"
        said = [m for m in messages if m.get("role") == "user" and m.get("content") != WAITING]
        last = str(said[-1].get("content", "")) if said else ""
        return _answer(info, last, answered=len(own) > 1)

    def _device_user(self, ref: str, task: Any, info: Any, messages: list[dict[str, Any]]) -> str:
        """The customer with tools of its own: its turns are JSON actions (see the module)."""
        own = [str(m.get("content", "")) for m in messages if m.get("role") == "assistant"]
        if not own:
            reason = getattr(info, "reason_for_call", None) or str(info or "Hello.")
            return _reply(f"{reason.strip()}\n[ticket {ref}]")
        last = str(messages[-1].get("content", "")) if messages[-1].get("role") == "user" else ""
        done = _actions({"content": own[-1]})
        if last.startswith(_RESULT) and done:  # its own tool's result: report it
            what = json.dumps({"name": done[-1]["name"], "arguments": done[-1]["arguments"]})
            shown = last.split("\n", 1)[1] if "\n" in last else ""
            return _reply(f"{DEVICE_DONE}{what}\nIt shows: {shown[:300]}")
        asked = _asked(last, task)
        if asked is not None:
            return json.dumps({"action": "tool", **asked})
        known = getattr(info, "known_info", None) or ""
        return _reply(_answer(info, last, answered=bool(known) and any(known in o for o in own)))

    # -- the agent ------------------------------------------------------------------------

    def agent(self, messages: list[dict[str, Any]]) -> str:
        if self.mode == "repeat":
            return self._repeat(messages)
        text = "\n".join(str(m.get("content", "")) for m in messages)
        found = _TICKET.search(text)
        task = self.task(f"{found[1]}/{found[2]}") if found else None
        if task is None:
            return _reply(UNKNOWN_TASK)
        done = [a for m in messages if m.get("role") == "assistant" for a in _actions(m)]
        reported = [r for m in messages if m.get("role") == "user" for r in _reports(m)]
        criteria = task.evaluation_criteria
        gold = list(criteria.actions or []) if criteria else []
        pending = [
            a
            for a in gold
            if not any(
                _same(a.name, a.arguments, d) for d in (reported if a.requestor == "user" else done)
            )
        ]
        if not pending:
            told = " ".join(criteria.communicate_info or []) if criteria else ""
            return _reply(f"{DONE} {told}".strip())
        action = pending[0]
        if action.requestor == "user":  # the customer's to do, on its device
            what = json.dumps({"name": action.name, "arguments": action.arguments})
            return _reply(f"{DEVICE_ASK}{what}")
        missing = [k for k, v in action.arguments.items() if not _stated(v, text)]
        if not missing:
            return json.dumps(
                {"action": "tool", "name": action.name, "arguments": action.arguments}
            )
        asked = [m for m in messages if m.get("role") == "assistant"]
        if asked and "?" in _said(asked[-1]):
            return _reply(CANNOT.format(", ".join(missing)))
        return _reply(f"To go on I need your {', '.join(missing)}. Could you give me them?")

    def _repeat(self, messages: list[dict[str, Any]]) -> str:
        first = next((m for m in messages if m.get("role") == "user"), None)
        turns = self.logged.get(str(first.get("content", ""))) if first else None
        n = sum(m.get("role") == "assistant" for m in messages)
        if not turns or n >= len(turns):
            return _reply(DONE)
        return turns[n]


def _reply(text: str) -> str:
    return json.dumps({"action": "reply", "message": text})


def _answer(info: Any, last: str, answered: bool) -> str:
    """The customer's words to the agent's ``last``: STOP unless it asks something; the
    task's known information the first time, then that it already gave it."""
    if "?" not in last:
        return STOP
    if answered:
        return ALREADY
    known = getattr(info, "known_info", None)
    return known.strip() if known else "I do not know."


def _asked(text: str, task: Any) -> dict[str, Any] | None:
    """The tool action the agent's ``text`` asks the customer to do on its device: the
    one it spells out, else a gold user action of ``task`` it names (its tool's name, or
    that name's words: "toggle airplane mode")."""
    if DEVICE_ASK in text:
        line = text.split(DEVICE_ASK, 1)[1].split("\n", 1)[0]
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            arguments = data.get("arguments")
            return {
                "name": data["name"],
                "arguments": arguments if isinstance(arguments, dict) else {},
            }
    criteria = getattr(task, "evaluation_criteria", None)
    lowered = text.lower()
    for action in (criteria.actions or []) if criteria else []:
        if action.requestor == "user" and (
            action.name in lowered or action.name.replace("_", " ") in lowered
        ):
            return {"name": action.name, "arguments": action.arguments}
    return None


def _reports(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The device actions a customer's message reports done (its ``DEVICE_DONE`` lines)."""
    found = []
    for line in str(message.get("content", "")).splitlines():
        if line.startswith(DEVICE_DONE):
            try:
                data = json.loads(line[len(DEVICE_DONE) :])
            except ValueError:
                continue
            if isinstance(data, dict):
                found.append(data)
    return found


def _actions(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool actions an agent turn took (its JSON lines)."""
    found = []
    for line in str(message.get("content", "")).splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("action") == "tool":
            found.append(data)
    return found


def _said(message: Mapping[str, Any]) -> str:
    try:
        data = json.loads(str(message.get("content", "")))
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _same(name: str, arguments: Any, done: Mapping[str, Any]) -> bool:
    canon = json.dumps(arguments, sort_keys=True)
    return done.get("name") == name and json.dumps(done.get("arguments"), sort_keys=True) == canon


def _stated(value: Any, text: str) -> bool:
    """Every id, name and number in ``value`` appears in ``text`` (booleans need not)."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, dict):
        return all(_stated(v, text) for v in value.values())
    if isinstance(value, list):
        return all(_stated(v, text) for v in value)
    return str(value) in text


__all__ = ["TOOL_RESULT", "ScriptedTau2", "is_tau2"]
