"""Loopback HTTP servers that misbehave on purpose, one per behaviour, on raw sockets.

The hostile batteries (tracking servers that are not MLflow, LLM endpoints that never
give a usable reply) need what no well-behaved server library does: lying lengths,
endless bodies, a close after the headers. Each connection runs in its own thread.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def read_request(conn: socket.socket) -> None:
    """The request's head and its body (by Content-Length), so the reply follows a full read."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def send(conn: socket.socket, head: bytes, body: bytes = b"") -> None:
    conn.sendall(b"HTTP/1.1 " + head + b"\r\n\r\n" + body)


@contextmanager
def raw_servers(
    behaviours: dict[str, Callable[[socket.socket], None]], path: str = ""
) -> Iterator[dict[str, str]]:
    """One server per behaviour, each reading a request then acting; their URLs by name
    (``path`` appended), all closed on exit."""
    listening: list[socket.socket] = []

    def serve(sock: socket.socket, behave: Callable[[socket.socket], None]) -> None:
        def handle(conn: socket.socket) -> None:
            with conn:
                try:
                    read_request(conn)
                    behave(conn)
                except OSError:
                    pass

        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    urls = {}
    for name, behave in behaviours.items():
        sock = socket.create_server(("127.0.0.1", 0))
        listening.append(sock)
        threading.Thread(target=serve, args=(sock, behave), daemon=True).start()
        urls[name] = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
    try:
        yield urls
    finally:
        for sock in listening:
            sock.close()
