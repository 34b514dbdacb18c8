"""`maple-memory backfill` on 100 generated Claude Code transcripts (about 20 MB, the shape real
ones have: prompts, thinking, tool calls with their results, hook attachments, system lines),
measured as a user meets it (issue 21's targets: at most 2 minutes warm, 5 minutes cold, on 2 cores):

- warm: the engine is running with its model loaded; backfill hands each transcript to it;
- cold: no MAPLE process running; backfill starts the engine, waits for it, then harvests;
- engine off (hook_resident_minutes 0): backfill loads the model in its own process;
- again: a second run that finds nothing new (no model is loaded).

Each row: wall seconds, the backfill process's peak RSS and, when there is one, the engine's peak
RSS (VmHWM), plus what was stored.

    .venv/bin/python tests/benchmarks/bench_backfill.py [--sessions 100] [--exchanges 15] [--model NAME]

The real default model unless --model (hash-64: no meaning, for a quick look). One run each:
these machines are shared and noisy, so compare rows of the same run. Not a pytest test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import remote  # noqa: E402
from memory.app import backfill  # noqa: E402

FACTS = [
    "We use pnpm, not npm, in this repository; run pnpm install after pulling.",
    "The staging Postgres database listens on port {port}; connect with psql -p {port}.",
    "Always run the integration tests with TZ=UTC before pushing to main.",
    "Never commit directly to the release branch; open a pull request against main.",
    "The billing service retries failed webhooks three times with exponential backoff.",
    "Our CI runs on GitHub Actions with the ubuntu-24.04 runner image.",
    "The feature flag service is LaunchDarkly; flags are named team.feature.variant.",
    "Use structlog for logging in the api package; plain logging is only for scripts.",
    "I prefer short commit messages in the imperative mood.",
    "The frontend talks to the api through /api/v2; /api/v1 is deprecated.",
]
TASKS = [
    "Fix the failing test in tests/test_orders.py",
    "Add a retry to the fetch helper in src/http.py",
    "Why does the build fail on CI but not locally?",
    "Refactor the invoice builder into smaller functions",
    "Write a migration that adds a channel column to orders",
    "Can you explain what the scheduler module does?",
    "Rename chargeSvc to chargeService everywhere",
    "Update the README with the new setup steps",
]
CODE = "\n".join(
    f"{n:>6}\tdef handler_{n}(request, *, retries=3):\n{n + 1:>6}\t    return process(request, retries=retries)"
    for n in range(1, 80, 2)
)


def _line(kind: str, sid: str, cwd: str, when: str, n: int, **extra: Any) -> str:
    env = {
        "parentUuid": f"{sid}-{n - 1}" if n else None,
        "isSidechain": False,
        "type": kind,
        "uuid": f"{sid}-{n}",
        "timestamp": when,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.1.332",
        "gitBranch": "main",
    }
    return json.dumps({**env, **extra})


def transcript(i: int, cwd: str, exchanges: int, rng: random.Random) -> list[str]:
    sid = f"{i:08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
    when = f"2026-10-{1 + i % 28:02d}T{8 + i % 10:02d}:00:00.000Z"
    lines = [json.dumps({"type": "queue-operation", "operation": "enqueue", "timestamp": when, "sessionId": sid})]
    n = 0
    for x in range(exchanges):
        prompt = rng.choice(TASKS)
        if x % 4 == 0:
            prompt = rng.choice(FACTS).format(port=5400 + i % 7) + " " + prompt
        usage = {"input_tokens": 3, "cache_read_input_tokens": 14210, "output_tokens": 88}
        msg = f"msg_{i:04d}{x:04d}"
        tool = f"toolu_{i:04d}{x:04d}"
        rows = [
            (
                "user",
                {"message": {"role": "user", "content": prompt}, "promptId": f"p{x}", "origin": {"kind": "human"}},
            ),
            (
                "attachment",
                {
                    "attachment": {
                        "type": "hook_additional_context",
                        "content": ["<memory-context>\n- " + "\n- ".join(rng.sample(FACTS, 3)) + "\n</memory-context>"],
                        "hookName": "UserPromptSubmit",
                        "hookEvent": "UserPromptSubmit",
                    }
                },
            ),
            (
                "assistant",
                {
                    "message": {
                        "id": msg,
                        "role": "assistant",
                        "model": "claude-opus-5-5",
                        "content": [
                            {"type": "thinking", "thinking": "Let me look at the code. " * 20, "signature": "x" * 300}
                        ],
                        "usage": usage,
                    },
                    "requestId": f"req_{msg}",
                },
            ),
            (
                "assistant",
                {
                    "message": {
                        "id": msg,
                        "role": "assistant",
                        "model": "claude-opus-5-5",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": tool,
                                "name": "Read",
                                "input": {"file_path": f"{cwd}/src/m{x}.py"},
                            }
                        ],
                        "usage": usage,
                    }
                },
            ),
            (
                "user",
                {
                    "message": {
                        "role": "user",
                        "content": [{"tool_use_id": tool, "type": "tool_result", "content": CODE}],
                    },
                    "toolUseResult": {"type": "text", "file": {"filePath": f"{cwd}/src/m{x}.py", "content": CODE}},
                },
            ),
            (
                "assistant",
                {
                    "message": {
                        "id": msg + "b",
                        "role": "assistant",
                        "model": "claude-opus-5-5",
                        "content": [
                            {
                                "type": "text",
                                "text": f"I changed handler_{x} to pass the retries through and ran the tests: "
                                "all green. The helper now raises a clear error after the last attempt.",
                            }
                        ],
                        "usage": usage,
                    }
                },
            ),
            ("system", {"subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [], "hookErrors": []}),
        ]
        for kind, extra in rows:
            lines.append(_line(kind, sid, cwd, when, n, **extra))
            n += 1
    lines.append(json.dumps({"type": "last-prompt", "lastPrompt": prompt, "sessionId": sid}))
    return lines


def generate(claude: Path, project: Path, sessions: int, exchanges: int) -> int:
    rng = random.Random(21)
    folder = claude / "projects" / backfill.folder_name(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    old = time.time() - 5 * 86400
    total = 0
    for i in range(sessions):
        lines = transcript(i, str(project), exchanges, rng)
        path = folder / f"session-{i:03d}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (old, old))
        total += path.stat().st_size
    return total


def engine_hwm(env: dict[str, str]) -> float | None:
    home = Path(env["MAPLE_HOME"])
    try:
        pid = remote.call(home, home / "memory.db", "ping", project="", timeout=2.0)["pid"]
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    except (remote.EngineUnavailable, OSError, KeyError):
        return None
    return None


def wait_ready(env: dict[str, str]) -> None:
    home = Path(env["MAPLE_HOME"])
    subprocess.run([sys.executable, "-m", "memory.cli", "stats"], env=env, check=True, capture_output=True)
    remote.start(home, home / "memory.db", env=env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            s = remote.call(home, home / "memory.db", "ping", project="", timeout=2.0)
            if s["model"] == "ready":
                return
        except remote.EngineUnavailable:
            pass
        time.sleep(0.2)
    raise SystemExit("the engine did not get ready")


def backfill_run(env: dict[str, str], project: Path) -> tuple[float, float, dict[str, Any]]:
    """(seconds, peak RSS in MB of the backfill process, its JSON answer)."""
    started = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "memory.cli", "--json", "backfill"],
        env=env,
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out = p.stdout.read() if p.stdout else b""
    err = p.stderr.read() if p.stderr else b""
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if p.returncode != 0:
        raise SystemExit(f"backfill failed ({p.returncode}): {err.decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024, json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--exchanges", type=int, default=15, help="prompt-to-answer rounds per session (~10 KB each)")
    ap.add_argument("--model", default=None, help="embedding model (default: the configured default)")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="maple-bench-backfill-"))
    claude = base / "claude"
    project = base / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    size = generate(claude, project, a.sessions, a.exchanges)
    print(f"{a.sessions} transcripts, {size / 1e6:.1f} MB, in {claude}/projects; {os.cpu_count()} cores")
    env0 = {k: v for k, v in os.environ.items() if not k.startswith(("MAPLE_", "CLAUDE"))}
    env0.update(PYTHONPATH=str(ROOT), CLAUDE_CONFIG_DIR=str(claude))
    if a.model:
        env0["MAPLE_MODEL"] = a.model
    print(f"{'run':<12} {'seconds':>8} {'backfill RSS':>13} {'engine RSS':>11}  harvested  stored  merged  superseded")

    def row(name: str, env: dict[str, str], seconds: float, rss: float, d: dict[str, Any]) -> None:
        hwm = engine_hwm(env) if env.get("MAPLE_HOOK_RESIDENT_MINUTES") != "0" else None
        engine = f"{hwm:8.0f} MB" if hwm else "          -"
        print(
            f"{name:<12} {seconds:8.1f} {rss:10.0f} MB {engine}  {d['harvested']:>9}  {d['stored']:>6}  "
            f"{d['merged'] + d['reinforced']:>6}  {d['superseded']:>10}"
        )

    try:
        for name in ("warm", "cold", "engine off"):
            env = {**env0, "MAPLE_HOME": str(base / name.replace(" ", "-"))}
            if name == "engine off":
                env["MAPLE_HOOK_RESIDENT_MINUTES"] = "0"
            if name == "warm":
                wait_ready(env)
            seconds, rss, d = backfill_run(env, project)
            row(name, env, seconds, rss, d)
            if name == "warm":
                seconds, rss, d = backfill_run(env, project)
                row("again", env, seconds, rss, d)
            remote.stop(Path(env["MAPLE_HOME"]), Path(env["MAPLE_HOME"]) / "memory.db")
    finally:
        for name in ("warm", "cold", "engine off"):
            home = base / name.replace(" ", "-")
            remote.stop(home, home / "memory.db")


if __name__ == "__main__":
    main()
