"""Serve the loopback stub until SIGTERM or SIGINT.

    python -m benchmark.stub [--host 127.0.0.1] [--port 0] [--latency 0.2] [--fault-rate 0.0]
        [--fault-kinds 429,500,hang,malformed] [--seed 0] [--hang-s 5] [--retry-after 0.05]
        [--scripted] [--local [--local-model NAME] [--context-window 8192] [--tokens-per-s 0]]

The first line on stdout is exactly ``listening on http://HOST:PORT/v1`` (flushed), so a parent
process can read the port; nothing else is printed there. A whole sweep can dry-run against it:
``OPENAI_API_KEY=x python -m benchmark judge=gpt4o judge.endpoint.base_url=<that url>``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from pydantic import ValidationError

from benchmark.arg_parser import OneLineParser, finite, port
from benchmark.errors import print_error
from benchmark.stub.faults import FAULT_KINDS, FaultMix
from benchmark.stub.local import LocalMode
from benchmark.stub.scripted import judge_criteria, scripted_reply
from benchmark.stub.server import OpenAIStub


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m benchmark.stub",
        description="A loopback OpenAI-compatible server with latency and fault injection.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port, default=0, help="0 picks a free port")
    p.add_argument("--latency", type=finite, default=0.0, help="seconds added to every call")
    p.add_argument("--fault-rate", type=finite, default=0.0, help="fraction of calls that fault")
    p.add_argument("--fault-kinds", default=",".join(FAULT_KINDS))
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    p.add_argument("--hang-s", type=finite, default=5.0, help="how long a hang lasts")
    p.add_argument("--retry-after", type=finite, default=0.05, help="Retry-After of a 429")
    p.add_argument("--scripted", action="store_true", help="answer the benchmark's prompts validly")
    local = p.add_argument_group(
        "local mode", "a llama.cpp-class server with a small (scripted) model behind it"
    )
    local.add_argument(
        "--local",
        action="store_true",
        help="500 on json_schema, schema-in-JSON-mode grammar, length stops, one slot",
    )
    local.add_argument("--local-model", default=None, help="the model name /v1/models lists")
    local.add_argument("--context-window", type=int, default=None, help="tokens (default 8192)")
    local.add_argument("--tokens-per-s", type=finite, default=None, help="0 = instant (default)")
    return p


def local_mode(args: argparse.Namespace) -> LocalMode | None:
    """The local mode the flags ask for; its flags without ``--local`` are an error."""
    given = {
        "model": args.local_model,
        "context_window": args.context_window,
        "tokens_per_s": args.tokens_per_s,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if not args.local:
        if given:
            raise ValueError("--local-model, --context-window and --tokens-per-s need --local")
        return None
    return LocalMode(**given)


def build(args: argparse.Namespace) -> OpenAIStub:
    """The stub the arguments describe (not started); bad values raise ``ValueError``."""
    faults = None
    if args.fault_rate > 0:
        faults = FaultMix(
            rate=args.fault_rate,
            kinds=args.fault_kinds,
            seed=args.seed,
            retry_after=args.retry_after,
            hang_s=args.hang_s,
        )
    if args.latency < 0:
        raise ValueError("--latency must be >= 0")
    local = local_mode(args)
    stub = OpenAIStub(
        latency=args.latency,
        faults=faults,
        host=args.host,
        bind_port=args.port,
        record=False,
        local=local,
    )
    if args.scripted or local is not None:
        stub.reply = scripted_reply
        # Its judge replies import the judge package (~1 s): at the first judge request that
        # would stall every call in flight, so it is done before the stub listens.
        judge_criteria()
    return stub


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        stub = build(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        flags = {"rate": "fault-rate", "kinds": "fault-kinds", "model": "local-model"}
        flag = flags.get(field, field.replace("_", "-"))
        print(f"error: --{flag}: {first['msg']}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print_error(exc)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        stub.start()
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"listening on {stub.base_url}", flush=True)
        while not stop.wait(timeout=1.0):  # the timeout keeps signals deliverable everywhere
            pass
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
