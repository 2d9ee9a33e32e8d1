"""The stub's answers before or instead of a reply: the 4xx a real server gives a request
it will not serve, and the response of an injected fault."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web

import benchmark.stub.responses as responses_api
from benchmark.stub.chat_route import completion
from benchmark.stub.faults import Fault, error_body, error_type

Route = Literal["chat", "responses", "compact"]


def refuse(
    request: web.Request,
    body: dict[str, Any] | None,
    route: Route,
    require_key: str | None,
    json_schema: str,
) -> web.StreamResponse | None:
    """The 4xx a real server would answer before doing any work, if any."""
    if require_key is not None:
        sent = request.headers.get("Authorization", "")
        if sent != f"Bearer {require_key}":
            return web.json_response(
                error_body(
                    "Incorrect API key provided.",
                    "invalid_request_error",
                    None,
                    "invalid_api_key",
                ),
                status=401,
            )
    if body is None:
        return web.json_response(
            error_body("Request body must be a JSON object.", "invalid_request_error"),
            status=400,
        )
    problem = responses_api.input_problem(body) if route != "chat" else None
    if problem is not None:
        return web.json_response(error_body(problem, "invalid_request_error", "input"), status=400)
    fmt = body.get("response_format")
    if json_schema == "reject" and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return web.json_response(
            error_body(
                "response_format json_schema is not supported",
                "invalid_request_error",
                "response_format",
            ),
            status=400,
        )
    return None


def fault_response(
    fault: Fault, body: dict[str, Any], serial: int, route: Route
) -> web.StreamResponse:
    """What the stub sends for an injected ``fault``: a broken body, no choices, or an error."""
    if fault.kind == "malformed":
        return web.Response(
            status=200,
            text='{"id": "chatcmpl-broken", "choices": [',
            content_type="application/json",
        )
    if fault.kind == "empty_choices" and route == "compact":
        return web.json_response({**responses_api.compacted(body, serial), "output": []})
    if fault.kind == "empty_choices" and route == "responses":
        return web.json_response(responses_api.response(body, None, serial))
    if fault.kind == "empty_choices":
        payload = completion(body, "", serial)
        payload["choices"] = []
        return web.json_response(payload)
    type_, code = error_type(fault.status_code)
    message = fault.message or f"stub fault: HTTP {fault.status_code}"
    headers = {}
    if isinstance(fault.retry_after, str):
        headers["Retry-After"] = fault.retry_after
    elif fault.retry_after is not None:
        headers["Retry-After"] = f"{fault.retry_after:g}"
    return web.json_response(
        error_body(message, type_, None, code), status=fault.status_code, headers=headers
    )
