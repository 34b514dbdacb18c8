"""How often does a prompt meet passive recall's cold path (no vector to judge it by)?

The UserPromptSubmit hook (`hooks/run.py user-prompt-submit`) asks the warm engine; with none it
recalls on its own from keywords and entities, and an engine still loading its model answers the
same way (no vector yet). Either way the gate is `Confidence.speaks` on words alone, the cold path.
This script runs the real hook scripts as Claude Code runs them, on a fresh MAPLE home with a store
and the default model: `session-start`, then `user-prompt-submit` after a delay, and reports for
each situation which path answered:

  first prompt   right after SessionStart returns (the fastest a person can type: no delay)
  after 1 s / 3 s
  after idle     the engine exited after `hook_resident_minutes` without a request (here set to
                 --idle-seconds), then a prompt

  hook     the hook's own keyword path (no engine answered)           - cold
  loading  the engine answered, its model still loading (words only)  - cold
  ready    the engine answered with its model loaded (the vector gate) - warm
  late     the engine took the prompt but did not answer within 300 ms, or the hook gave up: nothing shown

Which path answered is read from the hook's own `Delivery` (the hook runs as `run.py` does, with
`hooks.surface.run` observed) and the engine's ping (model state) just before and after the prompt.

    .venv/bin/python tests/benchmarks/bench_cold_share.py [--runs 5] [--model NAME] [--idle-seconds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed, remote  # noqa: E402
from memory.store import NewMemory, Store  # noqa: E402

VERBOSE = False
PROMPT = "which port does the staging database listen on?"
MEMORIES = [
    "The staging database listens on port 6543.",
    "billing-service deploys go through the release-train job on Tuesdays.",
    "Use ruff for linting and formatting; black is not used.",
    "The ledger-api reads its settings from LEDGER_CONFIG.",
]
# `hooks/run.py user-prompt-submit` as it is, with the path that answered written to a file.
OBSERVED_HOOK = """
import json, os, sys
sys.path[0] = {root!r}
from hooks import common, surface
from hooks.common import exit_if_late
from hooks.main import main

inner, start = surface.run, common.start_engine
own = []

def start_engine():
    own.append(1)  # only the hook's own recall starts the engine afterwards
    return start()

def run(event):
    found = inner(event)
    with open(os.environ["BENCH_PATH_FILE"], "w") as f:
        json.dump({{"engine": found.engine, "own": bool(own), "shown": len(found.ids)}}, f)
    return found

common.start_engine = start_engine

surface.run = run
main(["user-prompt-submit"])
exit_if_late()
"""


def world(base: Path, model: str | None, idle_seconds: float) -> tuple[dict[str, str], Path]:
    home, project = base / "maple", base / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAPLE_", "CLAUDE"))}
    env.update(MAPLE_HOME=str(home), MAPLE_HOOK_RESIDENT_MINUTES=str(idle_seconds / 60))
    if model:
        env["MAPLE_MODEL"] = model
    config = config_mod.load(home=home, env=env)
    with Store.open(config, embed.from_config(config)) as store:
        wait = getattr(store.embedder, "wait", None)
        if wait is not None:
            wait()
        for m in MEMORIES:
            store.add(NewMemory(m, scope=str(project.resolve())))
    return env, project


def hook(env: dict[str, str], args: list[str], data: dict, path_file: Path | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(
        args,
        input=json.dumps(data),
        env={**env, "BENCH_PATH_FILE": str(path_file or "")},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return time.perf_counter() - started


def model_state(home: Path) -> str:
    try:
        return str(remote.call(home, home / "memory.db", "ping", project="", timeout=1.0)["model"])
    except remote.EngineUnavailable:
        return "none"


def stop_engine(home: Path) -> None:
    remote.stop(home, home / "memory.db")
    while remote.running(home, home / "memory.db"):
        time.sleep(0.05)


def session(env: dict[str, str], project: Path, n: int) -> dict:
    return {
        "session_id": f"bench-cold-{n}",
        "transcript_path": str(project / f"t{n}.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


def prompt_once(env: dict[str, str], project: Path, n: int, tmp: Path) -> dict:
    home = Path(env["MAPLE_HOME"])
    log = home / "hooks.log"
    logged = len(log.read_text().splitlines()) if log.exists() else 0
    before = model_state(home)
    out = tmp / f"path-{n}.json"
    out.unlink(missing_ok=True)
    took = hook(
        env,
        [sys.executable, "-c", OBSERVED_HOOK.format(root=str(ROOT))],
        {
            "session_id": f"bench-cold-{n}",
            "transcript_path": str(project / f"t{n}.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": PROMPT,
        },
        out,
    )
    after = model_state(home)
    seen = json.loads(out.read_text()) if out.exists() else {"engine": False, "own": False, "shown": 0}
    if seen["own"]:
        path = "hook"
    elif not seen["engine"]:
        path = "late"  # the engine took the prompt and did not answer within the budget: nothing shown
    elif before == "ready":
        path = "ready"
    elif after == "ready":
        path = "loading?"  # loading just before, ready just after: counted cold (the worse case)
    else:
        path = "loading"
    lines = log.read_text().splitlines()[logged:] if log.exists() else []
    if not out.exists():
        path = "late"  # the hook gave up (its watchdog) before recall was done
    if VERBOSE:
        print(f"    {path:<9} {took * 1000:6.0f} ms  before {before:<8} after {after:<8} {' | '.join(lines)[:200]}")
    return {"path": path, "ms": took * 1000, "shown": seen["shown"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", default="", help="embedding model (default: MAPLE's default)")
    ap.add_argument("--idle-seconds", type=float, default=6.0, help="hook_resident_minutes, in seconds, for the run")
    ap.add_argument("--verbose", action="store_true", help="print each prompt's path, time and hooks.log lines")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    rows: dict[str, list[dict]] = {}
    starts: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env, project = world(base, args.model or None, args.idle_seconds)
        home = Path(env["MAPLE_HOME"])
        print(f"model {config_mod.load(home=home, env=env).embedding_model or '(default)'}; {args.runs} runs each")
        n = 0
        try:
            for _ in range(args.runs):
                for label, delay in (("first prompt", 0.0), ("after 1 s", 1.0), ("after 3 s", 3.0)):
                    stop_engine(home)
                    n += 1
                    hook(
                        env, [sys.executable, str(ROOT / "hooks" / "run.py"), "session-start"], session(env, project, n)
                    )
                    time.sleep(delay)
                    rows.setdefault(label, []).append(prompt_once(env, project, n, base))
                # The engine is up now; leave it idle until it exits on its own, then prompt.
                t0 = time.monotonic()
                while remote.running(home, home / "memory.db") and time.monotonic() - t0 < args.idle_seconds + 30:
                    time.sleep(0.2)
                n += 1
                rows.setdefault("after idle", []).append(prompt_once(env, project, n, base))
                # How long the engine takes from SessionStart to a loaded model.
                stop_engine(home)
                n += 1
                t0 = time.perf_counter()
                hook(env, [sys.executable, str(ROOT / "hooks" / "run.py"), "session-start"], session(env, project, n))
                while model_state(home) != "ready" and time.perf_counter() - t0 < 120:
                    time.sleep(0.05)
                starts.append(time.perf_counter() - t0)
        finally:
            stop_engine(home)
    print(f"\nSessionStart to a loaded model (median of {len(starts)}): {statistics.median(starts):.2f} s")
    print(
        f"\n  {'prompt':<14} {'n':>3} {'hook':>6} {'loading':>8} {'ready':>6} {'late':>5} {'cold share':>11} {'hook ms':>8}"
    )
    for label, got in rows.items():
        k = len(got)
        share = {p: sum(g["path"].startswith(p) for g in got) / k for p in ("hook", "loading", "ready", "late")}
        print(
            f"  {label:<14} {k:>3} {share['hook']:>6.2f} {share['loading']:>8.2f} {share['ready']:>6.2f} {share['late']:>5.2f} "
            f"{share['hook'] + share['loading']:>11.2f} {statistics.median(g['ms'] for g in got):>8.0f}"
        )
    print("\n  cold = the hook's own path or an engine still loading: the gate judges by words alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
