"""Four teammates on one PostgreSQL database at once: lost writes and leaks of personal memories.

    .venv/bin/python tests/benchmarks/bench_team.py [--machines 4] [--writes 500] [--durable]

Starts a private PostgreSQL (tests/pg_support.py), makes the schema's owner role and one login role
per machine as the README tells an admin to, then runs each machine in a process of its own (its
own MAPLE home and role; the hash-64 test embedder) writing `--writes` memories through the
application API, one in five global (personal), searching every fifth write (tests/team_load.py).
Prints lost writes, leaks (in search results during the run; in each machine's full listing and
its plain SQL after), shared memories a machine could not see, errors, and write and search
latencies (median / p95 ms). `--durable`: fsync on, as a real server runs.

`--rls-rows N` instead measures what the row-level security costs a search: N of bench_store's
memories (a fifth of them global) written by the owner role, then the same queries timed as a
superuser (policies skipped, as bench_backends.py runs) and as the owner (policies applied). Not a test.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent), str(HERE)]

import pg_support  # noqa: E402
import team_load  # noqa: E402


def _machine(args: tuple[int, str, str, str, int]) -> str:
    machine, role, url, home, writes = args
    return team_load.run_machine(machine, role, url, Path(home), writes).to_json()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machines", type=int, default=4)
    ap.add_argument("--writes", type=int, default=500)
    ap.add_argument("--durable", action="store_true")
    ap.add_argument("--rls-rows", type=int, default=0)
    ap.add_argument("--queries", type=int, default=100)
    a = ap.parse_args()
    if a.rls_rows:
        return rls_cost(a.rls_rows, a.queries, a.durable)
    import psycopg

    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import Store

    server = pg_support.start(durable=a.durable)
    try:
        url = server.create_database()
        owner = server.create_role(url, "owner")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"GRANT CREATE ON SCHEMA public TO {owner.name}")
        with tempfile.TemporaryDirectory(prefix="maple-team-") as tmp:
            # The owner opens the database first: the tables, the policies and the vector table.
            Store.open(config_mod.load(home=Path(tmp) / "owner", env={}, database=owner.url), HashEmbedder(64)).close()
            machines = []
            for i in range(a.machines):
                role = server.create_role(url, f"m{i}")
                machines.append((i, role.name, role.url, Path(tmp) / f"machine{i}"))
            t0 = time.perf_counter()
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(a.machines) as pool:
                raw = pool.map(_machine, [(i, r, u, str(h), a.writes) for i, r, u, h in machines])
            wall = time.perf_counter() - t0
            results = [team_load.MachineResult.from_json(r) for r in raw]
            v = team_load.check(url, machines, results)
        writes = [x for r in results for x in r.write_ms]
        searches = [x for r in results for x in r.search_ms]
        print(f"{a.machines} machines x {a.writes} writes, {'durable' if a.durable else 'fsync off'}, hash-64")
        print(f"stored {v.stored} of {a.machines * a.writes}; lost writes {v.lost}; leaks {v.leaks}; ")
        print(f"shared memories a machine could not see {v.unseen_shared}; errors {v.errors}")
        print(f"own personal memories found by the searches: {sum(r.own_found for r in results)}")
        print(
            f"write ms median {team_load.median(writes):.1f} p95 {team_load.p95(writes):.1f}; "
            f"search ms median {team_load.median(searches):.1f} p95 {team_load.p95(searches):.1f}; wall {wall:.1f} s"
        )
        for r in results:
            for e in r.errors[:3]:
                print(f"  machine {r.machine}: {e}")
    finally:
        server.stop()


def rls_cost(rows: int, queries: int, durable: bool) -> None:
    import dataclasses

    import psycopg
    from bench_store import latencies, make_items, make_queries, ms

    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.retrieval import ranking
    from memory.store import Store

    server = pg_support.start(durable=durable)
    try:
        url = server.create_database()
        owner = server.create_role(url, "owner")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"GRANT CREATE ON SCHEMA public TO {owner.name}")
        with tempfile.TemporaryDirectory(prefix="maple-team-") as tmp:
            as_owner = Store.open(config_mod.load(home=Path(tmp) / "o", env={}, database=owner.url), HashEmbedder(64))
            items = make_items(rows, seed=7)
            items = [dataclasses.replace(it, scope="global") if n % 5 == 0 else it for n, it in enumerate(items)]
            for start in range(0, rows, 500):
                as_owner.add_many(items[start : start + 500])
            as_owner.conn.execute("ANALYZE")
            as_admin = Store.open(config_mod.load(home=Path(tmp) / "a", env={}, database=url), HashEmbedder(64))
            qs = [ranking.make_query(q, scopes) for q, scopes in make_queries(queries, seed=11)]

            def ids(store: Store, q: ranking.Query) -> list[int]:
                return [r.memory.id for r in ranking.search(store, q, record=False)][:10]

            bypass = latencies(lambda q: ids(as_admin, q), qs)
            policed = latencies(lambda q: ids(as_owner, q), qs)
            same = sum(ids(as_admin, q) == ids(as_owner, q) for q in qs)
            print(f"{rows} memories (a fifth global), {len(qs)} queries, hash-64; search median / p95 wall ms:")
            print(f"  superuser (no policies)  {ms(bypass)}")
            print(f"  owner role (policies)    {ms(policed)}")
            print(f"  same top 10 for {same} of {len(qs)} queries (all rows are the owner's)")
            as_owner.close()
            as_admin.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
