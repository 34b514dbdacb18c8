"""The warm engine, measured where users meet it (issue 14's targets):

1. `maple-memory search` and `add` wall time: cold (no MAPLE process running; the command starts
   the engine and answers without waiting for it), warm (the engine answers, model loaded), and for
   comparison with the engine off (every command loads the model itself, as before the engine);
2. the first `memory_search` of a freshly started MCP server: with vectors when the engine is
   warm; when it is cold, the result says the model is not ready (never silently keyword-only);
3. total RSS of three concurrent sessions' MAPLE processes (three MCP servers started with the
   command `install` registers, each having answered a search, plus the one engine);
4. UserPromptSubmit as the real Claude Code runs it, from its `--debug-file` ("finished with
   status 0 (NNNms)"), with the default install and a warm engine: p50, p95, max over --prompts
   runs (skipped without Claude Code: set MAPLE_CLAUDE or run .ci/run once).

    .venv/bin/python tests/benchmarks/bench_engine.py [--memories 500] [--runs 7] [--prompts 20]
        [--model NAME]

The real default model unless --model. Medians of one run each; these machines are noisy, so
compare figures from the same run. Not a pytest test: timings do not belong in unit tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from memory import config as config_mod  # noqa: E402
from memory import embed, remote  # noqa: E402
from memory.app.commands import server_command  # noqa: E402
from memory.store import NewMemory, Store  # noqa: E402

TOPICS = ("database", "deploy", "tests", "billing-service", "ledger-api", "release", "logging", "queue")
TARGET = "The staging database listens on port 6543"


def world(base: Path, model: str | None, memories: int) -> tuple[dict[str, str], Path]:
    """A MAPLE home with `memories` memories (embedded), a git project, and the environment for it."""
    home, project = base / "maple", base / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAPLE_", "CLAUDE"))}
    env.update(MAPLE_HOME=str(home), PYTHONPATH=str(ROOT))
    if model:
        env["MAPLE_MODEL"] = model
    os.environ.update({k: v for k, v in env.items() if k.startswith("MAPLE_")})
    config = config_mod.load()
    with Store.open(config, embed.from_config(config)) as store:
        scope = str(project.resolve())
        store.add(NewMemory(TARGET, scope=scope))
        for i in range(memories - 1):
            topic = TOPICS[i % len(TOPICS)]
            store.add(NewMemory(f"Note {i} about the {topic}: step {i % 13} of the {topic} checklist", scope=scope))
    return env, project


def cli(env: dict[str, str], project: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memory.cli", "--project", str(project), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"maple-memory {' '.join(args)} failed: {done.stderr}")
    return elapsed, done


def stop_engine(env: dict[str, str]) -> None:
    remote.stop(Path(env["MAPLE_HOME"]), Path(env["MAPLE_HOME"]) / "memory.db")


def wait_ready(env: dict[str, str], seconds: float = 300.0) -> float:
    """Start the engine if needed and wait until its model and indexes are ready; the seconds it took."""
    home = Path(env["MAPLE_HOME"])
    started = time.perf_counter()
    remote.start(home, home / "memory.db", env=env)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            s = remote.call(home, home / "memory.db", "ping", project="", timeout=2.0)
            if s["model"] == "ready" and s["indexes"] != "building":
                return time.perf_counter() - started
        except remote.EngineUnavailable:
            pass
        time.sleep(0.1)
    raise SystemExit("the engine did not get ready")


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.0f} ms"


def cli_rows(env: dict[str, str], project: Path, runs: int) -> None:
    print("\n1. maple-memory search / add, wall time (median of", runs, "runs)")
    cold_search, cold_add, warm_search, warm_add = [], [], [], []
    cold_vectors = 0
    for i in range(runs):
        stop_engine(env)
        t, done = cli(env, project, "--json", "search", "which port does the staging database use")
        cold_search.append(t)
        cold_vectors += json.loads(done.stdout)["model"] == "ready"
        stop_engine(env)
        cold_add.append(cli(env, project, "add", f"Cold add {i}: the ledger-api retries three times")[0])
    stop_engine(env)
    load = wait_ready(env)
    for i in range(runs):
        t, done = cli(env, project, "--json", "search", "which port does the staging database use")
        warm_search.append(t)
        assert json.loads(done.stdout)["model"] == "ready", "a warm engine ranks with vectors"
        warm_add.append(cli(env, project, "add", f"Warm add {i}: the billing-service retries twice")[0])
    off = {**env, "MAPLE_HOOK_RESIDENT_MINUTES": "0"}
    stop_engine(env)
    off_search = [cli(off, project, "search", "staging database port")[0] for _ in range(max(1, runs // 3))]
    print(f"   search  cold {ms(cold_search)}   warm {ms(warm_search)}   engine off {ms(off_search)}")
    print(f"   add     cold {ms(cold_add)}   warm {ms(warm_add)}")
    print(f"   cold searches that said 'model not ready' instead of ranking with vectors: {runs - cold_vectors}/{runs}")
    print(f"   engine start to model and indexes ready: {load:.1f} s")


async def first_search(env: dict[str, str], project: Path) -> dict:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = config_mod.load()
    command, args, extra = server_command(config)
    params = StdioServerParameters(command=command, args=args, env={**env, **extra}, cwd=str(project))
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            result = await client.call_tool("memory_search", {"query": "which port does the staging database use"})
    return result.structured_content


def server_rows(env: dict[str, str], project: Path) -> None:
    print("\n2. the first memory_search of a newly started MCP server")
    stop_engine(env)
    cold = asyncio.run(first_search(env, project))
    wait_ready(env)
    warm = asyncio.run(first_search(env, project))
    for name, r in (("engine cold", cold), ("engine warm", warm)):
        top = r["results"][0] if r["results"] else {}
        print(
            f"   {name}: model {r['model']!r}, top hit uses vectors: {'vector' in top.get('channels', {})}, "
            f"top hit is the target: {top.get('content') == TARGET}"
        )


def maple_processes(home: str) -> dict[int, str]:
    """pid -> command line of every process whose environment names this MAPLE home."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"MAPLE_HOME={home}".encode() in environ and "python" in cmdline:
            found[int(entry.name)] = cmdline
    return found


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def three_sessions(env: dict[str, str], project: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = config_mod.load()
    command, args, extra = server_command(config)
    params = StdioServerParameters(command=command, args=args, env={**env, **extra}, cwd=str(project))
    with open(os.devnull, "w") as errlog:
        async with (
            Client(stdio_client(params, errlog=errlog), mode="legacy") as a,
            Client(stdio_client(params, errlog=errlog), mode="legacy") as b,
            Client(stdio_client(params, errlog=errlog), mode="legacy") as c,
        ):
            for client in (a, b, c):
                await client.call_tool("memory_search", {"query": "staging database port"})
            procs = maple_processes(env["MAPLE_HOME"])
            sizes = {pid: rss_mb(pid) for pid in procs}
            servers = [s for pid, s in sizes.items() if "engine" not in procs[pid]]
            engines = [s for pid, s in sizes.items() if "engine" in procs[pid]]
            print("\n3. three concurrent sessions: RSS of MAPLE's processes")
            print(
                f"   {len(servers)} servers {' + '.join(f'{s:.0f}' for s in servers)} MB, "
                f"{len(engines)} engine {' + '.join(f'{s:.0f}' for s in engines)} MB: "
                f"total {sum(sizes.values()):.0f} MB"
            )


def prompt_rows(env: dict[str, str], prompts: int) -> None:
    from claude_harness import ClaudeCode, claude_path

    claude = claude_path()
    print(f"\n4. UserPromptSubmit as Claude Code runs it (--debug-file), {prompts} prompts, warm engine")
    if claude is None:
        print("   skipped: no Claude Code (set MAPLE_CLAUDE, or run .ci/run once to install it)")
        return
    base = Path(tempfile.mkdtemp(prefix="maple-bench-cc-"))
    cc = ClaudeCode(base, base / "maple", claude)
    cc.env["MAPLE_MODEL"] = config_mod.load().embedding_model  # the harness defaults to the test embedder
    try:
        cc.maple("install")
        cc.add(TARGET)
        for i in range(30):
            cc.add(f"Note {i} about the {TOPICS[i % len(TOPICS)]}")
        wait_ready(cc.env)
        times, outside = [], 0
        cc.api.script(["OK."] * prompts)
        for i in range(prompts):
            run = cc.run_claude(f"Which port does the staging database listen on? ({i})")
            found = re.findall(r"UserPromptSubmit \[[^\]]*\] finished with status (\d+) \((\d+)ms\)", run.debug)
            if not found:
                outside += 1
                continue
            status, took = found[0]
            times.append(int(took) / 1000)
            outside += status != "0"
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(
            f"   p50 {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms "
            f"({len(times)} timed; {outside} without a status-0 line)"
        )
    finally:
        cc.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--memories", type=int, default=500)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--prompts", type=int, default=20)
    p.add_argument("--model", default=None, help="embedding model (default: the configured default)")
    a = p.parse_args()
    base = Path(tempfile.mkdtemp(prefix="maple-bench-engine-"))
    env, project = world(base, a.model, a.memories)
    model = embed.preferred_model(a.model or config_mod.load().embedding_model)
    print(f"engine benchmark: {a.memories} memories, model {model}, {os.cpu_count()} cores")
    try:
        cli_rows(env, project, a.runs)
        server_rows(env, project)
        asyncio.run(three_sessions(env, project))
    finally:
        stop_engine(env)
    if a.prompts:
        prompt_rows(env, a.prompts)


if __name__ == "__main__":
    main()
