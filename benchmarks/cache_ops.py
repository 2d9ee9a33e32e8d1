"""Cost per call of the LLM reply cache: get (miss), put, get (hit), and a put from many threads.

    python benchmarks/cache_ops.py [--n 2000] [--threads 8]

Prints microseconds per operation on a fresh cache in a temporary folder. The
cache must stay far below 1 ms per call so it never limits a job's throughput
(~300 LLM calls/s at most). Machines here are shared and noisy: read the order
of magnitude, not the last digit.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import docs_snippet

from benchmark.llm.reply_cache import ResponseCache, request_key


def _keys(n: int, tag: str) -> list[str]:
    return [
        request_key(
            api="chat.completions",
            model="bench-model",
            base_url=None,
            body={"messages": [{"role": "user", "content": f"{tag} question {i}"}]},
        )
        for i in range(n)
    ]


def _per_op(fn: Callable[[str], object], keys: list[str]) -> float:
    start = time.perf_counter()
    for key in keys:
        fn(key)
    return (time.perf_counter() - start) / len(keys) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="operations per measurement")
    parser.add_argument("--threads", type=int, default=8)
    docs_snippet.option(parser)
    args = parser.parse_args()

    # A typical judge reply: a short JSON verdict plus usage counts.
    reply = {
        "text": '{"scores": {"c1": 4, "c2": 3}, "rationale": "' + "x" * 600 + '"}',
        "input_tokens": 3200,
        "output_tokens": 180,
        "response_format": "json_schema",
    }
    with tempfile.TemporaryDirectory() as folder, ResponseCache(folder) as cache:
        keys = _keys(args.n, "main")
        start = time.perf_counter()
        _keys(args.n, "again")
        key_us = (time.perf_counter() - start) / args.n * 1e6
        big = {"messages": [{"role": "user", "content": "y" * 200_000}], "temperature": 0.0}
        start = time.perf_counter()
        for _ in range(100):
            request_key(api="chat.completions", model="bench-model", base_url=None, body=big)
        big_key_us = (time.perf_counter() - start) / 100 * 1e6
        cache.put(keys[0], 0, reply, model="bench-model", role="judge")  # create the file
        miss = _per_op(lambda k: cache.get(k, 1), keys)
        put = _per_op(lambda k: cache.put(k, 0, reply, model="bench-model", role="judge"), keys)
        hit = _per_op(cache.get, keys)
        assert all(cache.get(k) == reply for k in keys[:10])

        shared = _keys(args.n, "threads")
        chunks = [shared[i :: args.threads] for i in range(args.threads)]
        start = time.perf_counter()
        with ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(lambda ks: [cache.put(k, 0, reply, role="judge") for k in ks], chunks))
        threaded = (time.perf_counter() - start) / args.n * 1e6
        size = cache.stats().bytes

    print(f"request_key          {key_us:8.1f} us/op")
    print(f"request_key, 200 KB  {big_key_us:8.1f} us/op (a ~50k-token context)")
    print(f"get (miss)           {miss:8.1f} us/op")
    print(f"put                  {put:8.1f} us/op")
    print(f"get (hit)            {hit:8.1f} us/op")
    print(f"put, {args.threads:2d} threads      {threaded:8.1f} us/op (wall time / ops)")
    print(f"file size            {size / 1024:8.0f} KB for {2 * args.n} entries")


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
