"""The UserPromptSubmit hook under stress: another process holding the database's lock, and a
4 MB prompt. Prints the median wall time (spawn to exit) of `hooks/run.py user-prompt-submit` per
case, with and without the warm engine, and whether it output context.

    PYTHONPATH=. python tests/benchmarks/bench_hook_budget.py [--runs 7] [--memories 2000]

The baseline row is the hook's fixed cost on this machine (interpreter start, imports, no
recall): subtract it to see what a case adds. Locks: "write lock" is BEGIN EXCLUSIVE in WAL mode (readers go on, writers wait); "exclusive
file lock" is locking_mode=EXCLUSIVE plus a write, which shuts readers out too. "engine paused"
(with the engine only) stops the engine with SIGSTOP: it runs but does not answer (a long
maintenance pass, a reindex), so the hook answers from its own keyword path after RECALL_SECONDS.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import remote  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.store import NewMemory, Store, db  # noqa: E402

RUN = ROOT / "hooks" / "run.py"
PROMPT = "Which port does the test database listen on?"


def env_for(home: Path, engine: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_HOOK_RESIDENT_MINUTES="5" if engine else "0")
    return env


def once(home: Path, project: Path, prompt: str, engine: bool, n: int) -> tuple[float, bool]:
    session = f"s{n}-{time.monotonic_ns()}"  # a new session each time: nothing shown to it yet
    payload = {"session_id": session, "prompt": prompt, "hook_event_name": "UserPromptSubmit", "cwd": str(project)}
    data = json.dumps(payload).encode()
    start = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-S", str(RUN), "user-prompt-submit"],
        input=data,
        capture_output=True,
        env=env_for(home, engine),
    )
    took = (time.perf_counter() - start) * 1000
    assert r.returncode == 0
    if r.stdout.strip():
        json.loads(r.stdout)  # valid hook JSON
    return took, bool(r.stdout.strip())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--memories", type=int, default=2000)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "h", Path(tmp) / "p"
        project.mkdir()
        config = config_mod.load(home=home)
        with Store.open(config, HashEmbedder(64)) as s:
            s.add_many(
                [
                    NewMemory(f"Note {i}: service {i} listens on port {4000 + i}", scope=str(project))
                    for i in range(a.memories)
                ]
            )
            s.add(NewMemory("The test database listens on port 5433", scope=str(project)))
        huge = PROMPT + "\n" + ("log line with port numbers 5433 and words " * 100_000)[:3_900_000]
        print(f"{'case':44} {'engine':>6} {'median ms':>9} {'max ms':>7} {'context':>7}")
        for engine in (False, True):
            if engine:
                remote.start(home, config.db_path, env=env_for(home, True))
                remote.wait_until_up(home, config.db_path, 60)
            for name, prompt, lock in (
                ("baseline: a slash command (skipped at once)", "/clear", None),
                ("plain prompt", PROMPT, None),
                ("write lock held (BEGIN EXCLUSIVE)", PROMPT, "write"),
                ("exclusive file lock held", PROMPT, "file"),
                (f"{len(huge) / 1e6:.1f} MB prompt", huge, None),
                ("engine paused (SIGSTOP): does not answer", PROMPT, "paused"),
            ):
                locker = None
                paused = None
                if lock == "paused":
                    if not engine:
                        continue
                    paused = remote.call(home, config.db_path, "ping", project="", timeout=5.0)["pid"]
                    os.kill(paused, signal.SIGSTOP)
                elif lock:
                    locker = db.connect(config.db_path, vectors=False)
                    if lock == "file":
                        locker.execute("PRAGMA locking_mode=EXCLUSIVE")
                    try:
                        locker.execute("BEGIN EXCLUSIVE")
                        locker.execute("UPDATE memories SET importance = importance WHERE id = 1")
                    except db.DatabaseError as e:  # the engine's open connection keeps a file lock out
                        print(f"{name:44} {'yes' if engine else 'no':>6} cannot take the lock: {e}")
                        locker.close()
                        continue
                try:
                    got = [once(home, project, prompt, engine, n) for n in range(a.runs)]
                finally:
                    if paused is not None:
                        os.kill(paused, signal.SIGCONT)
                    if locker is not None:
                        locker.execute("ROLLBACK")
                        locker.close()
                times = [t for t, _ in got]
                shown = sum(c for _, c in got)
                print(
                    f"{name:44} {'yes' if engine else 'no':>6} {statistics.median(times):>9.0f} {max(times):>7.0f} {shown:>3}/{len(got)}"
                )
        remote.stop(home, config.db_path)


if __name__ == "__main__":
    main()
