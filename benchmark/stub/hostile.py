"""What the stub sends for a hostile :class:`~benchmark.stub.faults.Fault`: a broken or
hostile server, over real sockets, so the client's reading of replies is tested against
bytes on the wire and not against a mock.

* ``patched``: a valid completion with one field replaced by any JSON (or dropped);
* ``json``: any JSON body (a list, a number, ``null``...);
* ``raw``: any bytes with any content-type, status and headers (HTML with 200, an event
  stream, ``Content-Encoding: gzip`` on plain bytes, invalid JSON);
* ``reset``: the connection reset (TCP RST) before any reply;
* ``cut``: a chunked body cut mid-way, the connection dropped;
* ``trickle``: headers, then one byte every ``seconds``, forever (until the client goes
  or the stub stops): a read timeout never fires;
* ``huge``: a valid completion whose content is ``size`` bytes, streamed (the stub never
  holds it whole).
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

import benchmark.stub.responses as responses_api
from benchmark.stub.chat_route import completion, default_reply
from benchmark.stub.faults import DELETE, Fault

Sleep = Callable[[float], Awaitable[None]]
_CHUNK = 1 << 16


async def serve(
    fault: Fault,
    request: web.Request,
    body: dict[str, Any],
    serial: int,
    chat: bool,
    sleep: Sleep,
    closing: Callable[[], bool],
) -> web.StreamResponse:
    """The response for hostile ``fault`` (``chat``: the chat route, else a Responses one)."""
    name = fault.name
    if name == "patched":
        text = fault.message or default_reply(body)
        payload = (
            completion(body, text, serial) if chat else responses_api.response(body, text, serial)
        )
        return web.json_response(_patch(payload, fault.path, fault.value))
    if name == "json":
        return web.json_response(fault.value)
    if name == "raw":
        headers = {"Content-Type": fault.content_type, **dict(fault.headers)}
        return web.Response(body=fault.body, status=fault.status_code, headers=headers)
    if name == "reset":
        _reset(request)
        return web.Response(status=204)  # never sent: the connection is gone
    if name == "cut":
        text = json.dumps(completion(body, default_reply(body), serial)).encode()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(text[: len(text) // 2])
        _reset(request)
        return response
    if name == "trickle":
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            while not closing():
                await response.write(b" ")
                await sleep(fault.seconds)
        except (ConnectionError, RuntimeError):
            pass  # the client gave up
        return response
    if name == "huge":
        return await _huge(request, body, serial, fault.size)
    raise ValueError(f"unknown hostile fault {name!r}")


def _patch(payload: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``payload`` with the field at dotted ``path`` set to ``value`` (dropped: DELETE);
    a list index is a number (``choices.0.message``)."""
    *parents, last = path.split(".")
    node: Any = payload
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        if value is DELETE:
            del node[int(last)]
        else:
            node[int(last)] = value
    elif value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value
    return payload


def _reset(request: web.Request) -> None:
    """Drop the connection with a TCP reset (SO_LINGER 0), not an orderly close."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _huge(
    request: web.Request, body: dict[str, Any], serial: int, size: int
) -> web.StreamResponse:
    """A completion of ``size`` bytes of content, written in chunks as the client reads."""
    marker = "@@CONTENT@@"
    head, tail = json.dumps(completion(body, marker, serial)).encode().split(marker.encode())
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.content_length = len(head) + size + len(tail)
    await response.prepare(request)
    chunk = b"x" * _CHUNK
    try:
        await response.write(head)
        left = size
        while left > 0:
            await response.write(chunk[: min(left, _CHUNK)])
            left -= _CHUNK
        await response.write(tail)
        await response.write_eof()
    except (ConnectionError, RuntimeError):
        pass  # the client stopped reading: what it should do
    return response
