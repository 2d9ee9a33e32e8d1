"""Before any work, ask every LLM endpoint the job uses whether it can serve the job.

Without this, a wrong ``base_url`` surfaces only as a job whose every probe
failed, and a misnamed model on a server that answers any name is never
noticed. So, once per distinct endpoint (base_url, model, key variable) that the
built parts hold, all endpoints at once:

1. ``GET {base_url}/models``. A 404, 405 or any answer without a list means the
   server keeps none (fine); 401/403 means the key was refused.
2. When the server lists models, the configured model must be listed (Ollama's
   ``name:latest`` also matches ``name``).
3. One chat completion of ``max_tokens`` 1. 401/403: the key; 404: no such model
   or path; a 400/422 naming the model: a misnamed model.

Each failure above, and an endpoint that cannot be connected to (refused, host
not resolved, no connection within a few seconds), is a :class:`UserError`: one
line naming the role(s), endpoint, model and base_url (credentials stripped),
exit 2 before any work. Anything else (a 5xx, a 429, a slow reply) is logged as
a warning and the job goes on: the server answered, and the job's own retries
and timeouts apply. Preflight requests bypass :class:`LLMClient`: they are never
served from the reply cache (the point is the live server) and are not counted
as the job's calls or cost. ``preflight: false`` on an endpoint skips all of it,
e.g. for a server whose ``/models`` lists names other than those it serves, or to
rerun a fully cached job with the server down.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

import aiohttp

from benchmark.errors import UserError
from benchmark.llm.client import LLMClient
from benchmark.llm.endpoint import Endpoint, normalise_base_url
from benchmark.llm.http import read_capped
from benchmark.llm.loop import run
from benchmark.llm.reach import connect_failure, shown_url
from benchmark.redaction import clip

log = logging.getLogger(__name__)

CONNECT_S = 5.0  # longest wait for a connection (at most the endpoint's connect_timeout_s)
LIST_READ_S = 4.0  # longest wait for the model list once connected
PING_READ_S = 20.0  # longest wait for the 1-token reply (a model still loading: a warning)
PREFLIGHT_BYTES = 4 << 20  # of an answer read: a model list, or a 1-token reply
PING_MESSAGES = [{"role": "user", "content": "Reply with OK."}]
_SHOWN_MODELS = 5  # listed models a message quotes


@dataclass(frozen=True)
class Target:
    """One distinct endpoint and the roles that use it."""

    endpoint: Endpoint
    roles: tuple[str, ...]

    @property
    def label(self) -> str:
        ep = self.endpoint
        return f"{' and '.join(self.roles)} endpoint '{ep.name}' ({ep.model})"

    @property
    def url(self) -> str:
        return shown_url(self.endpoint.base_url)

    def clip(self, text: str) -> str:
        names = (self.endpoint.api_key_env,) if self.endpoint.api_key_env else ()
        return clip(text, 200, first_line=True, key_names=names)


def preflight(*roots: object) -> None:
    """Check every endpoint an :class:`LLMClient` under ``roots`` (the job's parts) calls;
    an endpoint that cannot serve the job raises :class:`UserError`. No client: no work."""
    found = targets(llm_clients(*roots))
    if found:
        run(_check_all(found))


def llm_clients(*roots: object) -> list[LLMClient]:
    """The LLM clients reachable from ``roots`` through this package's objects and their
    lists and dicts (a panel's members, a policy's summarizer), breadth first, once each.
    A part that holds no client (an unused summarizer is not held) contributes none."""
    found: list[LLMClient] = []
    seen: set[int] = set()
    queue: deque[Any] = deque(roots)
    while queue:
        obj = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, LLMClient):
            found.append(obj)
        elif isinstance(obj, dict):
            queue.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            queue.extend(obj)
        elif type(obj).__module__.startswith("benchmark.") and hasattr(obj, "__dict__"):
            queue.extend(vars(obj).values())
    return found


def targets(clients: list[LLMClient]) -> list[Target]:
    """The distinct endpoints to check (``preflight: false`` ones left out), in order."""
    by_key: dict[tuple[str, str, str | None], tuple[Endpoint, list[str]]] = {}
    for client in clients:
        ep = client.endpoint
        if not ep.preflight:
            continue
        key = (normalise_base_url(ep.base_url), ep.model, ep.api_key_env)
        _, roles = by_key.setdefault(key, (ep, []))
        if client.role not in roles:
            roles.append(client.role)
    return [Target(ep, tuple(roles)) for ep, roles in by_key.values()]


async def _check_all(found: list[Target]) -> None:
    results = await asyncio.gather(*(_check(t) for t in found), return_exceptions=True)
    for result in results:  # the first failure in the parts' order
        if isinstance(result, BaseException):
            raise result


async def _check(target: Target) -> None:
    ep = target.endpoint
    headers = {"Authorization": f"Bearer {ep.api_key(target.roles[0])}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        models = _listed(target, await _request(session, target, "GET", "/models", LIST_READ_S))
        if models is not None and not _served(ep.model, models):
            more = ", ..." if len(models) > _SHOWN_MODELS else ""
            shown = ", ".join(models[:_SHOWN_MODELS]) + more
            raise UserError(
                f"{target.label}: {target.url} does not list this model (it lists "
                f"{target.clip(shown)}); set the endpoint's model to a listed one, or "
                "preflight: false if the server serves names it does not list"
            )
        body = {"model": ep.model, "messages": PING_MESSAGES, "max_tokens": 1, "temperature": 0}
        answer = await _request(session, target, "POST", "/chat/completions", PING_READ_S, body)
    if answer is not None:
        _judge_ping(target, *answer)
    log.info("preflight: %s at %s ok", target.label, target.url)


async def _request(
    session: aiohttp.ClientSession,
    target: Target,
    method: str,
    path: str,
    read_s: float,
    body: dict[str, Any] | None = None,
) -> tuple[int, str] | None:
    """(status, body text); None when connected but no usable answer (logged). A
    connection that cannot be made raises the unreachable line."""
    connect_s = min(target.endpoint.connect_timeout_s, CONNECT_S)
    timeout = aiohttp.ClientTimeout(total=None, connect=connect_s, sock_read=read_s)
    url = normalise_base_url(target.endpoint.base_url) + path
    # In all, a bound: a server trickling bytes resets the read timeout at each one.
    total_s = min(connect_s + read_s, target.endpoint.request_deadline_s)
    try:
        async with asyncio.timeout(total_s):
            async with session.request(method, url, json=body, timeout=timeout) as response:
                raw = await read_capped(response, PREFLIGHT_BYTES, cut=True)
        text = raw.decode("utf-8", "replace")
    except aiohttp.ConnectionTimeoutError:
        raise _unreachable(target, f"no connection within {connect_s:g} s") from None
    except aiohttp.ClientSSLError as exc:
        raise _unreachable(target, f"TLS failed ({type(exc).__name__})") from None
    except (aiohttp.ClientError, ValueError) as exc:
        reason = connect_failure(exc)
        if reason is not None:
            raise _unreachable(target, reason) from None
        log.warning("preflight: %s %s on %s: %s", method, path, target.label, target.clip(str(exc)))
        return None
    except (TimeoutError, asyncio.TimeoutError):
        log.warning(
            "preflight: %s at %s sent no reply to %s %s within %g s; going on",
            target.label,
            target.url,
            method,
            path,
            min(read_s, total_s),
        )
        return None
    if response.status in (401, 403):
        env = target.endpoint.api_key_env
        fix = (
            f"check the environment variable {env}"
            if env
            else "set api_key_env to the variable holding its key"
        )
        raise UserError(
            f"{target.label} at {target.url} refused the API key (HTTP {response.status}); {fix}"
        )
    return response.status, text


def _unreachable(target: Target, reason: str) -> UserError:
    return UserError(
        f"{target.label} unreachable at {target.url}: {reason} "
        "(checked before any work; is the server up and base_url right?)"
    )


def _listed(target: Target, answer: tuple[int, str] | None) -> list[str] | None:
    """The model ids a ``/models`` answer lists; None: the server keeps no list."""
    if answer is None or answer[0] != 200:
        return None
    try:
        data = json.loads(answer[1]).get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    ids = [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    return ids or None


def _served(model: str, listed: list[str]) -> bool:
    return model in listed or f"{model}:latest" in listed


def _judge_ping(target: Target, status: int, text: str) -> None:
    """Fail on an answer that says the model (or the path) does not exist."""
    if status < 400:
        return
    message = target.clip(_error_message(text))
    model = target.endpoint.model
    if status == 404:
        raise UserError(
            f"{target.label}: not found at {target.url} (HTTP 404: {message}); "
            "check the model name and base_url"
        )
    named = re.search(rf"(?<![\w.:/-]){re.escape(model)}(?![\w.:/-])", text)
    if status in (400, 422) and ("model_not_found" in text or (named and "model" in text)):
        raise UserError(
            f"{target.label}: {target.url} refused the model (HTTP {status}: {message}); "
            "check the model name"
        )
    log.warning(
        "preflight: %s at %s answered a 1-token completion with HTTP %d (%s); going on",
        target.label,
        target.url,
        status,
        message,
    )


def _error_message(text: str) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body itself."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return text
