"""Kill -9 at random moments during write runs; after each, the database must open whole.

    run_kills(workdir, runs=200)            the orchestrator (tests and bench_reliability.py)
    python -m reliability.kills writer ...  one write run (started and killed by the orchestrator)

The runs share one database and cycle through every kind of write MAPLE does: stores (batches
with entities and chunks, single adds, updates, archiving and purging), imports (a JSONL file
with chunks, supersession, archived lines and entities), harvests (the hook drain's single
transaction and the job worker's path), maintenance passes (with a clock far enough ahead that
decay, forgetting, consolidation and purging all act) and reindexing to another vector size
(small batches: many commits to land between). Each writer prints `ready` once its store is
open, and is killed with SIGKILL a random moment later (one run in ten is killed while still
starting: opening, migrating). After every run the database must open, pass integrity_check and
every cross-table invariant (harness.check_database): no memory without its FTS and vector rows,
no orphan row anywhere.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from reliability import harness  # noqa: E402

MODES = ("store", "import", "harvest", "maintain", "reindex")
DAY = 86400.0


# -- the writer ----------------------------------------------------------------------------------


def _open(home: Path, clock: Any = time.time) -> Any:
    """The store with an embedder matching whatever vectors the database holds now."""
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import Store

    cfg = config_mod.load(home=home, env={})
    store = Store.open(cfg, None, clock=clock)
    store.embedder = HashEmbedder(store.vector_dim or 64, name=store.vector_model or None)
    return store


def _names(rng: random.Random) -> list[tuple[str, str]]:
    return [
        (rng.choice(["Kestrel", "Juniper", "Halyard", "Marlin", "Osprey"]), "thing"),
        (f"{harness.word(rng, 2).title()} {harness.word(rng, 2).title()}", "person"),
    ]


def write_store(home: Path, rng: random.Random, seed: int) -> None:
    from memory.store import NewMemory

    store = _open(home)
    print("ready", flush=True)
    for i in range(3000):
        live = [
            r[0]
            for r in store.conn.execute(
                "SELECT id FROM memories WHERE deleted_at IS NULL AND parent_id IS NULL ORDER BY random() LIMIT 5"
            )
        ]
        roll = rng.random()
        if roll < 0.35 or not live:
            items = [
                NewMemory(
                    f"Run {seed} batch {i} item {k}: {harness.word(rng, 4)} relies on {harness.word(rng, 3)}",
                    scope=f"/kill/p{rng.randrange(3)}",
                    tags=[harness.word(rng, 2)],
                    metadata={"run": seed, "k": k},
                    entities=_names(rng),
                )
                for k in range(rng.randint(1, 15))
            ]
            store.add_many(items)
        elif roll < 0.5:
            parent = store.add(NewMemory(f"Run {seed} document {i}: {harness.word(rng, 5)}", scope="/kill/p0"))
            store.add_many(
                [
                    NewMemory(
                        f"Run {seed} chunk {i}.{c}: {harness.word(rng, 4)}",
                        scope="/kill/p0",
                        parent_id=parent.id,
                        chunk_index=c,
                    )
                    for c in range(rng.randint(1, 6))
                ]
            )
        elif roll < 0.7:
            store.update(
                rng.choice(live), content=f"Run {seed} updated {i}: {harness.word(rng, 5)}", tags=[harness.word(rng, 2)]
            )
        elif roll < 0.85:
            store.forget(rng.choice(live))
        else:
            store.forget(rng.choice(live), permanent=True)


def write_import(home: Path, rng: random.Random, seed: int) -> None:
    from memory.app import transfer

    store = _open(home)
    scope = f"/kill/import-{seed}"
    lines = []
    for n in range(1, 1500):
        rec: dict[str, Any] = {
            "id": n,
            "content": f"Imported {seed}/{n}: {harness.word(rng, 4)} {harness.word(rng, 3)}",
            "scope": scope,
            "entities": [[rng.choice(["Kestrel", "Marlin"]), "thing"]],
            "tags": ["import"],
        }
        if n % 7 == 0:
            rec["parent_id"] = n - 1
            rec["chunk_index"] = 0
        if n % 11 == 0:
            rec["superseded_by"] = n + 1
        if n % 13 == 0:
            rec["deleted_at"] = "2026-01-01T00:00:00Z"
        lines.append(json.dumps(rec).encode() + b"\n")
    print("ready", flush=True)
    transfer.import_lines(store, lines, project=scope)


def write_harvest(home: Path, rng: random.Random, seed: int, workdir: Path) -> None:
    from memory.app.worker import HANDLERS
    from memory.store import jobs

    path = workdir / f"transcript-{seed}.jsonl"
    cwd = f"/kill/harvest-{seed}"
    with path.open("w", encoding="utf-8") as f:
        for n in range(400):
            fact = harness.harvest_fact(rng)[1]
            f.write(harness.transcript_line("user", fact, session=f"s{seed}", cwd=cwd, n=n) + "\n")
            f.write(harness.transcript_line("assistant", "Noted.", session=f"s{seed}", cwd=cwd, n=n) + "\n")
    store = _open(home)
    print("ready", flush=True)
    if seed % 2:
        from memory.extraction import harvest as harvesting

        harvesting.harvest(store, str(path), scope=cwd)  # the hook drain: one transaction
    else:
        jobs.enqueue(store, "harvest", {"transcript_path": str(path), "scope": cwd})
        jobs.drain(store, HANDLERS, f"killer-{seed}")  # the server's worker path


def write_maintain(home: Path, rng: random.Random, seed: int) -> None:
    from memory.maintenance import agent as maintenance

    ahead = time.time() + (30 + seed % 200) * DAY  # old enough for decay, forgetting and consolidation
    store = _open(home, clock=lambda: ahead)
    print("ready", flush=True)
    maintenance.run_maintenance(store)


def write_reindex(home: Path, rng: random.Random, seed: int) -> None:
    from memory.embed import HashEmbedder
    from memory.store import backup

    store = _open(home)
    pending = store.conn.execute("SELECT value FROM meta WHERE key = 'reindex_model'").fetchone()
    if pending:  # an interrupted reindex: resume it, as the command does
        target = HashEmbedder(int(pending[0].split("-")[1]))
    else:
        target = HashEmbedder(32 if (store.vector_dim or 64) == 64 else 64)
    store.embedder = None  # reindex works on a store opened without the model
    print("ready", flush=True)
    backup.reindex(store, target, batch=8)


def writer_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="reliability.kills writer")
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--seed", type=int, required=True)
    a = p.parse_args(argv)
    rng = random.Random(a.seed)
    home = Path(a.home)
    if a.mode == "harvest":
        write_harvest(home, rng, a.seed, Path(a.workdir))
    else:
        {"store": write_store, "import": write_import, "maintain": write_maintain, "reindex": write_reindex}[a.mode](
            home, rng, a.seed
        )
    print("done", flush=True)
    return 0


# -- the orchestrator -----------------------------------------------------------------------------


def _wait_ready(proc: subprocess.Popen, timeout: float) -> bool:
    """Block until the writer says `ready` (True) or exits (False)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return False
        if line.strip() == b"ready":
            return True
    return False


def run_kills(workdir: Path, runs: int, *, seed: int = 20261202, max_delay: float = 1.0) -> dict[str, Any]:
    """`runs` killed write runs on one database; the invariants checked after every one."""
    rng = random.Random(seed)
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = harness.env_for(home)
    outcomes = {"killed_while_writing": 0, "killed_while_starting": 0, "finished_before_the_kill": 0}
    by_mode = {m: 0 for m in MODES}
    failed: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for run in range(runs):
        # Stores first, so the later kinds have something to import over, harvest next to,
        # maintain and re-embed; after that every kind in turn, in a shuffled order.
        mode = "store" if run < 2 else rng.choice(MODES)
        by_mode[mode] += 1
        proc = subprocess.Popen(
            [
                harness.PY,
                "-m",
                "reliability.kills",
                "writer",
                "--mode",
                mode,
                "--home",
                str(home),
                "--workdir",
                str(workdir),
                "--seed",
                str(seed + run),
            ],
            env=env,
            cwd=str(workdir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        early = rng.random() < 0.1
        if early:
            time.sleep(rng.uniform(0.0, 0.4))
            ready = False
        else:
            ready = _wait_ready(proc, 120)
            time.sleep(rng.uniform(0.0, max_delay))
        alive = proc.poll() is None
        if alive:
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        if alive:
            outcomes["killed_while_writing" if ready else "killed_while_starting"] += 1
        else:
            outcomes["finished_before_the_kill"] += 1
            if proc.returncode != 0:
                failed.append(
                    {
                        "run": run,
                        "mode": mode,
                        "problems": [
                            f"writer failed on its own (exit {proc.returncode}): {err.decode(errors='replace')[-800:]}"
                        ],
                    }
                )
        health = harness.check_database(home / "memory.db", home=home)
        if health["problems"]:
            keep = workdir / f"failed-run-{run}"
            keep.mkdir(exist_ok=True)
            for f in home.glob("memory.db*"):
                shutil.copy2(f, keep / f.name)
            failed.append({"run": run, "mode": mode, "problems": health["problems"], "copy": str(keep)})
    final = harness.check_database(home / "memory.db", home=home)
    return {
        "runs": runs,
        "by_mode": by_mode,
        **outcomes,
        "failed_runs": failed,
        "survived": runs - len({f["run"] for f in failed}),
        "memories_at_end": final.get("memories"),
        "seconds": round(time.perf_counter() - t0, 1),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["writer"]:
        sys.exit(writer_main(sys.argv[2:]))
    sys.exit("usage: python -m reliability.kills writer ... (tests and bench_reliability.py run the kills)")
