"""Hook latency with 100k memories: surfacing through the server tool and through the cold command
hook, harvesting on Stop and SessionEnd, and how much context a prompt gets.

    .venv/bin/python tests/benchmarks/bench_hooks.py [--memories 100000] [--runs 200] [--rebuild]

Not a pytest test (timings do not belong in unit tests). The store holds `--memories` realistic
coding memories (commands, ports, decisions, incidents, preferences, some Chinese) in one project
plus a global share, with 384-dim HashEmbedder vectors (deterministic bag-of-words hashing: the
server path runs its vector channel, no model is loaded). It is built once and cached under
/tmp/maple-bench-hooks (`--rebuild` starts over); every measured run works on a copy.

Rows:
  surface, server tool    in-process `memory_surface` as the MCP server runs it (warm store,
                          HashEmbedder, jieba loaded), server-side time; and through an
                          in-memory MCP client (adds the SDK's request handling)
  surface, command hook   `python hooks/run.py user-prompt-submit`, a fresh process per prompt,
                          from spawn to exit, stdin = hook JSON (bytecode compiled, as after pip);
                          on its own (residents off), with a server for the project running (it
                          answers over its local socket: server/resident.py), and with no server
                          at first: the first hook starts a keyword resident that answers the rest
  harvest, Stop / End     `python hooks/run.py stop|session-end`, fresh process, after a new turn
                          (prompt, assistant text, a tool call and its result) was appended
Prompts come in sessions of ten (a session is never shown a memory twice, so later prompts of a
session get less); a tenth of them are acknowledgements or slash commands, as in real sessions.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.lang import text  # noqa: E402
from memory.retrieval import context  # noqa: E402
from memory.store import indexes
from memory.store.memories import NewMemory, Store  # noqa: E402

CACHE = Path("/tmp/maple-bench-hooks")
PROJECT = CACHE / "project"  # no .git: the folder is the project's scope
RUN = ROOT / "hooks" / "run.py"
DIM = 384

SERVICES = (
    "billing invoices payments ledger auth gateway ingest scheduler search notifier reports "
    "exporter importer thumbnails uploads profiles sessions orders catalog inventory"
).split()
TOOLS = "uv pytest ruff mypy docker kubectl terraform helm pnpm vite jest playwright cargo make tox".split()
STORES = "postgres redis kafka rabbitmq elasticsearch minio clickhouse sqlite s3 nginx".split()
ERRORS = (
    "TimeoutError KeyError IntegrityError ConnectionResetError PermissionError "
    "ModuleNotFoundError OOMKilled DeadlockDetected"
).split()
PARTS = (
    "fetch retry cache token parse build index queue handler client worker loader batch "
    "export schema migration metric alert refresh upload vector shard replica backup"
).split()
PEOPLE = "Alice Bob Chen Wei Dana Priya Omar Lena Kenji Sofia".split()
ZH = "数据库 备份 部署 测试 缓存 日志 监控 接口 权限 配置 队列 索引 性能 内存 网络 前端 后端 发布".split()


def ident(r: random.Random) -> str:
    return "_".join(r.sample(PARTS, 2))


def memory_text(r: random.Random) -> tuple[str, str, str, int]:
    """(content, layer, category, importance) of one realistic memory."""
    s, t, st, e = r.choice(SERVICES), r.choice(TOOLS), r.choice(STORES), r.choice(ERRORS)
    n = r.randint(2, 9999)
    kind = r.randrange(12)
    if kind == 0:
        return (
            f"The {s} service's {st} listens on port {r.randint(1024, 65000)} in dev; config in deploy/{s}/{st}.yaml.",
            "fact",
            "config",
            3,
        )
    if kind == 1:
        return (
            f"Tests for {s} run with `{t} run pytest -n {r.randint(2, 16)} tests/{s}` (about {r.randint(20, 900)} s).",
            "fact",
            "command",
            3,
        )
    if kind == 2:
        return (
            (
                f"We chose {st} over {r.choice(STORES)} for the {s} {r.choice(PARTS)} because "
                f"{r.choice(['it keeps ordering', 'ops already runs it', 'it was 4x cheaper', 'it has exactly-once delivery'])}."
            ),
            "decision",
            "decision",
            4,
        )
    if kind == 3:
        return (
            (
                f"{ident(r)}() in src/{s}/{r.choice(PARTS)}.py failed with {e} under load; fixed by "
                f"{r.choice(['adding a retry with backoff', 'raising the pool size', 'an index on created_at', 'batching writes'])} (PR #{n})."
            ),
            "experience",
            "experience",
            3,
        )
    if kind == 4:
        return (
            f"Never run `{t}` against the shared {st} in {s}; use the docker compose one on port {r.randint(5000, 6000)}.",
            "fact",
            "rule",
            4,
        )
    if kind == 5:
        return (
            f"{r.choice(PEOPLE)} owns the {s} {r.choice(PARTS)} and reviews changes to src/{s}/.",
            "fact",
            "ownership",
            3,
        )
    if kind == 6:
        return (
            f"Env var {s.upper()}_{r.choice(PARTS).upper()}_LIMIT defaults to {r.randint(1, 512)}; production sets {r.randint(512, 4096)}.",
            "fact",
            "config",
            2,
        )
    if kind == 7:
        return (
            f"I prefer {r.choice(['small focused commits', 'early returns', 'dataclasses over dicts', 'explicit imports', 'type hints everywhere'])} in the {s} code.",
            "fact",
            "preference",
            4,
        )
    if kind == 8:
        return (
            f"Incident {n}: {s} {r.choice(PARTS)} backlog grew to {r.randint(10, 900)}k messages when {st} {r.choice(['ran out of disk', 'failed over', 'hit max connections'])}.",
            "experience",
            "incident",
            4,
        )
    if kind == 9:
        return (
            f"{s}服务的{r.choice(ZH)}用{t}，{r.choice(ZH)}配置在 deploy/{s}/{r.choice(PARTS)}.yaml。",
            "fact",
            "config",
            3,
        )
    if kind == 10:
        return f"我们决定{s}的{r.choice(ZH)}改用{st}，因为{r.choice(ZH)}更稳定。", "decision", "decision", 4
    return (
        f"Migrated {s} from {r.choice(TOOLS)} {r.randint(1, 9)}.{r.randint(0, 20)} to {r.randint(10, 20)}.0; {r.randint(1, 60)} tests needed fixes.",
        "experience",
        "change",
        2,
    )


def prompt_text(r: random.Random) -> str:
    s, t, st, e = r.choice(SERVICES), r.choice(TOOLS), r.choice(STORES), r.choice(ERRORS)
    kind = r.randrange(10)
    return [
        f"Which port does the {s} {st} use in dev?",
        f"How do I run the {s} tests?",
        f"Why does {ident(r)}() in src/{s} fail with {e} sometimes?",
        f"Should we use {st} or {r.choice(STORES)} for the {s} {r.choice(PARTS)}?",
        f"Add a retry to the {r.choice(PARTS)} client in src/{s}/{r.choice(PARTS)}.py",
        f"Who owns the {s} {r.choice(PARTS)}?",
        f"{s}服务的{r.choice(ZH)}配置在哪里？",
        f"Refactor the {s} {r.choice(PARTS)} handler and keep the tests green with {t}",
        r.choice(["ok", "thanks!", "yes go ahead", "/compact", "继续"]),  # a tenth: nothing to look up
        f"The {s} {r.choice(PARTS)} is slow again after the {st} upgrade, what did we do last time?",
    ][kind]


# -- the store ------------------------------------------------------------------------------------


def build(db_path: Path, n: int, seed: int = 7) -> None:
    r = random.Random(seed)
    home = db_path.parent
    config = config_mod.load(home=home)
    t0 = time.perf_counter()
    scope = str(PROJECT.resolve())
    with Store.open(config, HashEmbedder(DIM), path=db_path) as store:
        done = 0
        while done < n:
            batch = []
            for _ in range(min(2000, n - done)):
                content, layer, category, importance = memory_text(r)
                batch.append(
                    NewMemory(
                        content,
                        layer=layer,
                        category=category,
                        importance=importance,
                        scope="global" if r.random() < 0.05 else scope,
                        session_id=f"s{(done + len(batch)) // 40}",
                        pinned=r.random() < 0.0002,
                    )
                )
            store.add_many(batch)
            done += len(batch)
            print(f"\r  built {done}/{n} memories ({time.perf_counter() - t0:.0f} s)", end="", file=sys.stderr)
        print(file=sys.stderr)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # no ANALYZE: a user's database has no statistics


def fresh_copy(src: Path, dst_home: Path) -> Path:
    if dst_home.exists():
        shutil.rmtree(dst_home)
    dst_home.mkdir(parents=True, mode=0o700)
    dst = dst_home / "memory.db"
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o600)
    return dst


# -- measuring ------------------------------------------------------------------------------------


def session_of(i: int) -> str:
    return f"bench-session-{i // 10}"


def stats(ms: list[float]) -> tuple[float, float]:
    s = sorted(ms)
    return statistics.median(s), s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def hook_env(home: Path, resident_minutes: float = 0) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["MAPLE_HOME"] = str(home)
    env["MAPLE_HOOK_RESIDENT_MINUTES"] = str(resident_minutes)  # 0: each prompt hook on its own
    return env


def run_hook(event: str, payload: dict[str, Any], env: dict[str, str]) -> tuple[float, bytes]:
    data = json.dumps(payload).encode()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, str(RUN), event], input=data, capture_output=True, env=env)
    ms = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    if out.returncode != 0:
        raise SystemExit(f"{event} exited {out.returncode}: {out.stderr.decode()[-500:]}")
    return ms, out.stdout


CPU: list[float] = []  # CPU ms (user + system) of each hook process or in-process call, in order


def context_tokens(stdout: bytes) -> int:
    if not stdout.strip():
        return 0
    return text.estimate_tokens(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])


def bench_server_tool(db: Path, prompts: list[str]) -> dict[str, Any]:
    from server.state import ModelGate

    config = config_mod.load(home=db.parent)
    store = Store.open(config, ModelGate(HashEmbedder(DIM)), path=db)
    indexes.warm(store)  # as the server does after its handshake: the in-memory indexes
    store.defer_checkpoints()  # and its idle worker checkpoints the WAL
    scopes = [str(PROJECT.resolve()), "global"]
    for p in prompts[:10] + ["数据库备份在哪里"]:  # warm: page cache, jieba's dictionary
        context.surface(store, p, scopes, session_id="warm-up")
    ms, tokens = [], []
    for i, p in enumerate(prompts):
        c0, t0 = time.process_time(), time.perf_counter()
        block = context.surface(store, p, scopes, session_id=session_of(i))
        ms.append((time.perf_counter() - t0) * 1000)
        CPU.append((time.process_time() - c0) * 1000)
        tokens.append(text.estimate_tokens(block) if block else 0)
    store.close()
    return {"ms": ms, "tokens": tokens}


def bench_mcp_client(db: Path, prompts: list[str]) -> dict[str, Any]:
    from mcp import Client

    from server.app import build_server

    config = config_mod.load(home=db.parent, database=str(db))
    import logging

    logging.getLogger("maple").setLevel(logging.WARNING)  # the server's start-up lines

    async def go() -> list[float]:
        server = build_server(config, HashEmbedder(DIM), project=str(PROJECT.resolve()))
        out = []
        async with Client(server, mode="legacy") as client:
            for p in prompts[:10]:
                await client.call_tool("memory_surface", {"prompt": p, "session_id": "warm-up"})
            while (await client.call_tool("memory_stats", {})).structured_content["search_indexes"] == "building":
                await asyncio.sleep(0.2)  # the server builds its in-memory indexes after the handshake
            for i, p in enumerate(prompts):
                c0, t0 = time.process_time(), time.perf_counter()
                await client.call_tool("memory_surface", {"prompt": p, "session_id": session_of(i)})
                out.append((time.perf_counter() - t0) * 1000)
                CPU.append((time.process_time() - c0) * 1000)  # client and server: one process
        return out

    return {"ms": asyncio.run(go())}


def bench_command_hook_starting_a_resident(home: Path, prompts: list[str]) -> dict[str, Any]:
    """No server running: the first prompt hook answers on its own and starts a keyword resident
    (server/resident.py), which answers the rest. Every run is timed, the first included."""
    import signal

    try:
        return _command_hook_runs(home, prompts, hook_env(home, resident_minutes=5), warm_up=False)
    finally:
        for sock in (home / "run").glob("*.sock"):
            os.kill(int(sock.name.split(".")[0]), signal.SIGTERM)


def bench_command_hook(home: Path, prompts: list[str], resident: bool = False) -> dict[str, Any]:
    """The command hook, a fresh process per prompt; with `resident`, a server for this database
    and project is running (its socket listener and warm store, in this process: server/resident.py),
    so the hook asks it first."""
    listener = None
    if resident:
        from server import resident as resident_mod
        from server.state import AppState, ModelGate

        store = Store.open(config_mod.load(home=home), ModelGate(HashEmbedder(DIM)))
        indexes.warm(store)
        store.defer_checkpoints()
        listener = resident_mod.Listener(
            AppState(db=store, project=str(PROJECT.resolve()), model=ModelGate(HashEmbedder(DIM))), home
        )
        if not listener.start():
            raise SystemExit("the resident listener did not start")
    try:
        return _command_hook_runs(home, prompts)
    finally:
        if listener is not None:
            listener.stop()
            store.close()


def _command_hook_runs(
    home: Path, prompts: list[str], env: dict[str, str] | None = None, warm_up: bool = True
) -> dict[str, Any]:
    env = env or hook_env(home)
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(PROJECT),
        "permission_mode": "default",
        "transcript_path": str(home / "t.jsonl"),
    }
    for p in prompts[:3] if warm_up else []:  # compiles bytecode once, like pip does at install
        run_hook("user-prompt-submit", {**payload, "prompt": p, "session_id": "warm-up"}, env)
    ms, tokens = [], []
    for i, p in enumerate(prompts):
        t, out = run_hook("user-prompt-submit", {**payload, "prompt": p, "session_id": session_of(i)}, env)
        ms.append(t)
        tokens.append(context_tokens(out))
    return {"ms": ms, "tokens": tokens}


def turn_lines(r: random.Random, sid: str, n: int) -> str:
    """One turn in Claude Code's transcript format: prompt, assistant text, tool call, result."""
    s, t, st = r.choice(SERVICES), r.choice(TOOLS), r.choice(STORES)
    base = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": str(PROJECT),
        "sessionId": sid,
        "version": "2.1.240",
        "gitBranch": "main",
    }
    stamp = f"2026-09-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    tool_id = f"toolu_{uuid.uuid4().hex[:24]}"
    lines = [
        {
            **base,
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "origin": {"kind": "human"},
            "message": {
                "role": "user",
                "content": f"From now on always run `{t} check` before pushing {s} "
                f"changes; the {st} migration job fails otherwise ({n}).",
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "message": {
                "id": f"msg_{n}",
                "role": "assistant",
                "model": "claude-sonnet-5",
                "content": [
                    {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": f"{t} check src/{s}"}}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": f"All checks passed ({n})"}],
            },
            "toolUseResult": {"stdout": "All checks passed", "stderr": "", "interrupted": False},
        },
        {
            **base,
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "message": {
                "id": f"msg_{n}b",
                "role": "assistant",
                "model": "claude-sonnet-5",
                "content": [
                    {
                        "type": "text",
                        "text": f"Done. The {s} {st} migration failed with "
                        f"IntegrityError because the {ident(r)} index was missing; adding it "
                        f"fixed it ({n}).",
                    }
                ],
            },
        },
    ]
    return "".join(json.dumps(x) + "\n" for x in lines)


def bench_harvest(home: Path, event: str, runs: int, seed: int) -> dict[str, Any]:
    env = hook_env(home)
    r = random.Random(seed)
    ms = []
    transcript = None
    sid = ""
    for i in range(runs + 3):
        if i % 20 == 0:  # a new session every 20 turns
            sid = str(uuid.uuid4())
            transcript = home / "projects" / f"{sid}.jsonl"
            transcript.parent.mkdir(parents=True, exist_ok=True)
        assert transcript is not None
        with transcript.open("a") as f:
            f.write(turn_lines(r, sid, i))
        payload = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(PROJECT), "hook_event_name": event}
        t, out = run_hook("stop" if event == "Stop" else "session-end", payload, env)
        assert out == b""
        if i >= 3:  # the first runs compile bytecode
            ms.append(t)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(RUN), "drain", "--wait"], env=env, check=True)  # settle
    settle_s = time.perf_counter() - t0
    from memory.store import db

    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    done = conn.execute("SELECT count(*), sum(status = 'done') FROM jobs WHERE kind = 'harvest_transcript'").fetchone()
    cursors = conn.execute("SELECT count(*) FROM transcript_cursors").fetchone()[0]
    conn.close()
    log = home / "hooks.log"
    if log.exists() and log.read_text().strip():
        print(f"  note: {event} logged: {log.read_text().splitlines()[-1]}", file=sys.stderr)
    print(
        f"  {event}: {done[1]}/{done[0]} harvest jobs done for {cursors} transcripts; "
        f"the background drain finished {settle_s:.1f} s after the last hook",
        file=sys.stderr,
    )
    return {"ms": ms}


# -- main -----------------------------------------------------------------------------------------


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--memories", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--rebuild", action="store_true")
    p.add_argument(
        "--skip", default="", help="comma-separated rows to skip: tool,client,command,resident,alone,stop,end"
    )
    args = p.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    PROJECT.mkdir(parents=True, exist_ok=True)
    base = CACHE / f"base-{args.memories}" / "memory.db"
    if args.rebuild or not base.exists():
        if base.parent.exists():
            shutil.rmtree(base.parent)
        base.parent.mkdir(parents=True, mode=0o700)
        print(f"building a store of {args.memories} memories (cached in {base.parent})", file=sys.stderr)
        build(base, args.memories)
    r = random.Random(11)
    prompts = [prompt_text(r) for _ in range(args.runs)]
    rows: list[tuple[str, dict[str, Any]]] = []
    work = CACHE / "run"

    def measure(name: str, key: str, fn: Callable[[Path], dict[str, Any]]) -> None:
        if key in skip:
            return
        db = fresh_copy(base, work)
        print(f"measuring: {name} ...", file=sys.stderr)
        CPU.clear()
        res = fn(db)
        res["cpu"] = CPU[-len(res["ms"]) :] if CPU else []
        rows.append((name, res))

    measure("surface, server tool (in-process)", "tool", lambda db: bench_server_tool(db, prompts))
    measure("surface, server tool (MCP client)", "client", lambda db: bench_mcp_client(db, prompts))
    measure("surface, command hook, alone", "command", lambda db: bench_command_hook(db.parent, prompts))
    measure(
        "surface, command hook + server", "resident", lambda db: bench_command_hook(db.parent, prompts, resident=True)
    )
    measure(
        "surface, cmd hook, starts a resident",
        "alone",
        lambda db: bench_command_hook_starting_a_resident(db.parent, prompts),
    )
    measure("harvest, Stop (cold)", "stop", lambda db: bench_harvest(db.parent, "Stop", args.runs, 1))
    measure("harvest, SessionEnd (cold)", "end", lambda db: bench_harvest(db.parent, "SessionEnd", args.runs, 2))

    print(
        f"\n{args.memories} memories ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
        f"{args.runs} runs per row\n"
    )
    print(
        f"{'path':<36} {'runs':>5} {'median ms':>10} {'p95 ms':>8} {'cpu med':>8} {'cpu p95':>8} "
        f"{'mean tokens':>12} {'with context':>13}"
    )
    for name, res in rows:
        med, p95 = stats(res["ms"])
        cmed, cp95 = stats(res["cpu"]) if res["cpu"] else (float("nan"), float("nan"))
        tok = res.get("tokens")
        mean_tok = f"{statistics.mean(tok):.0f}" if tok else "-"
        share = f"{sum(1 for t in tok if t) / len(tok):.0%}" if tok else "-"
        print(
            f"{name:<36} {len(res['ms']):>5} {med:>10.1f} {p95:>8.1f} {cmed:>8.1f} {cp95:>8.1f} "
            f"{mean_tok:>12} {share:>13}"
        )
    print(
        "\nms: wall time (the machine is shared: see the load); cpu: CPU time of the hook process "
        "(or of the call, in-process), which load inflates far less"
    )
    with_ctx = [t for name, res in rows for t in res.get("tokens", []) if t]
    if with_ctx:
        print(
            f"\nmean injected tokens per prompt that got context: {statistics.mean(with_ctx):.0f} "
            f"(budget {config_mod.Config().context_budget_tokens})"
        )


if __name__ == "__main__":
    main()
