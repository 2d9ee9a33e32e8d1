"""A loopback OpenAI-compatible server with latency and fault injection, for tests and benchmarks.

In-process: ``with OpenAIStub(latency=0.05) as stub: ... stub.base_url``. In a child process
(its own CPU, or surviving a killed client): ``with serve_in_subprocess(latency=0.2) as url``.
From a shell: ``python -m benchmark.stub --scripted``. ``OpenAIStub(local=LocalMode())`` (or
``--local``) behaves like a llama.cpp-class server with a small model (:mod:`benchmark.stub.local`).
"""

from benchmark.stub.chat_route import completion, default_reply, message_text
from benchmark.stub.faults import (
    DELETE,
    FAULT_KINDS,
    Fault,
    FaultKind,
    FaultMix,
    StubStats,
    error_body,
)
from benchmark.stub.local import LocalMode, LocalStats
from benchmark.stub.process import serve_in_subprocess, stub_argv
from benchmark.stub.responses import CREATED, decrypt
from benchmark.stub.scripted import scripted_reply
from benchmark.stub.server import OpenAIStub, ReplyHook, StubRequest

__all__ = [
    "CREATED",
    "DELETE",
    "FAULT_KINDS",
    "Fault",
    "FaultKind",
    "FaultMix",
    "LocalMode",
    "LocalStats",
    "OpenAIStub",
    "ReplyHook",
    "StubRequest",
    "StubStats",
    "completion",
    "decrypt",
    "default_reply",
    "error_body",
    "message_text",
    "scripted_reply",
    "serve_in_subprocess",
    "stub_argv",
]
