"""How fast `python -m server` answers malformed JSON-RPC (server/jsonrpc.py), over a real pipe.

    PYTHONPATH=. python tests/benchmarks/bench_jsonrpc.py [--rounds 5]

Each malformed case of tests/test_server_jsonrpc.py is sent alone, `rounds` times, after the SDK
serves; the time to its last error answer (or, for an ignored line, to the answer of a ping sent
after it) is printed per case, median and max, in milliseconds. Then, from a cold start: a malformed
request written as the server process starts, answered before the SDK has loaded (server.fastpath),
timed from the spawn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from test_server_jsonrpc import CASES, INITIALIZE, INITIALIZED, request, send_and_collect, start_server  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    rounds = p.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(Path(tmp))
        try:
            send_and_collect(proc, [INITIALIZE, INITIALIZED], until_id=0)
            send_and_collect(proc, [request(1, "tools/call", {"name": "memory_stats", "arguments": {}})], until_id=1)
            rid, worst = 1000, 0.0
            print(f"{'case':52} {'answers':>7} {'median ms':>9} {'max ms':>7}")
            for name, raw, expected in CASES:
                times = []
                for _ in range(rounds):
                    rid += 1
                    start = time.perf_counter()
                    if expected:  # to the last error answer
                        proc.stdin.write(raw + b"\n")
                        proc.stdin.flush()
                        got = [json.loads(proc.stdout.readline()) for _ in expected]
                        assert all("error" in m for m in got), got
                    else:  # ignored: to the answer of a ping sent after it
                        send_and_collect(proc, [raw, request(rid, "ping")], until_id=rid)
                    times.append((time.perf_counter() - start) * 1000)
                worst = max(worst, max(times))
                print(f"{name:52} {len(expected):>7} {statistics.median(times):>9.1f} {max(times):>7.1f}")
            print(f"slowest: {worst:.1f} ms (an ignored line: to the answer of a ping sent after it)")
        finally:
            proc.stdin.close()
            proc.wait(timeout=60)
            proc.stdout.close()
        cold = []
        for _ in range(rounds):
            start = time.perf_counter()
            proc = start_server(Path(tmp))
            try:
                proc.stdin.write(b'{"jsonrpc":"1.0","id":7,"method":"ping"}\n')
                proc.stdin.flush()
                answer = json.loads(proc.stdout.readline())
                assert answer["id"] == 7 and answer["error"]["code"] == -32600, answer
                cold.append((time.perf_counter() - start) * 1000)
            finally:
                proc.stdin.close()
                proc.wait(timeout=60)
                proc.stdout.close()
        print(f"cold start, spawn to the error answer: median {statistics.median(cold):.0f} ms")


if __name__ == "__main__":
    main()
