"""Maintenance benchmark: a full pass over 100k memories, and LoCoMo retrieval before and after.

    .venv/bin/python tests/benchmarks/bench_maintenance.py [--n 100000] [--skip-locomo] [--months 3]

Part 1 seeds a store of N memories (default 100,000) spread over ten projects and the global
scope, about 70% distinct and 30% near-duplicates of them (cosine about 0.97, the same words plus
one), stored on the day they happened over the past two years (so every project was in use most
days), mostly never recalled (stale), with clusters of related episodes and a few thousand recent
searches in the access log. Vectors are precomputed random
unit rows handed out by a lookup embedder, so embedding is excluded (the summaries and entity
names maintenance embeds go through a 384-dim hash embedder). The pass then runs in a fresh
process: wall time and peak RSS of that process, database size before and after, what changed.

Part 2 runs tests/benchmarks/bench_locomo.py's `run()` twice on the LoCoMo dev split: as is, and
with a full maintenance pass on each conversation store between ingest and the queries, with the
clock set some months after the conversation's last session and each turn stored on the day it
was said (so the store was in use on the session days: decay has something to count). Retrieval
must not drop.

Not a pytest test: timings do not belong in unit tests.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the machine is shared: one BLAS thread (measurements §0)

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from datetime import datetime  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.store.memories import NewMemory, Store  # noqa: E402

DIM = 384
DAY = 86400.0
NOW = 1_767_225_600.0  # 2026-01-01: the maintenance clock of part 1
MODEL = "bench-lookup-384"
SCOPES = [
    f"/home/dev/src/{n}" for n in ("billing", "web", "infra", "ml", "mobile", "dwh", "auth", "cli", "docs", "search")
] + ["global"]
PEOPLE = "Alice Bob Chen Dana Priya Omar Lena Kenji Sofia Wei".split()
SERVICES = "postgres redis kafka nginx celery rabbitmq elasticsearch minio clickhouse grafana".split()
TOOLS = "pytest uv ruff mypy docker kubectl terraform helm npm vite jest cargo make tox".split()
WORDS = (
    "fetch retry user cache token parse build index session queue order invoice payment config loader "
    "worker handler client server record event stream batch export import schema migration report "
    "metric alert auth login refresh profile upload image search query ranker vector shard replica "
    "backup restore deploy release timeout error flaky slow memory leak lock deadlock"
).split()


# -- part 1: 100k memories ---------------------------------------------------------------------


class LookupEmbedder:
    """Hands out precomputed vectors by text; anything else (summaries, names) gets a hash vector."""

    def __init__(self, table: dict[str, Any]):
        self.table = table
        self.name = MODEL
        self.dim = DIM
        self.fallback = HashEmbedder(DIM, name=MODEL)

    def embed(self, texts: Sequence[str]) -> list[Any]:
        return [self.table[t] if t in self.table else self.fallback.embed([t])[0] for t in texts]

    def embed_query(self, text: str) -> Any:
        return self.embed([text])[0]


def sentence(r: random.Random, i: int) -> tuple[str, str]:
    """(text, layer): a realistic coding memory with names, tools and a unique number."""
    kind = r.random()
    w = r.sample(WORDS, 4)
    if kind < 0.35:
        return (
            f"The {w[0]} {w[1]} bug in the {r.choice(SERVICES)} {w[2]} path was fixed by {r.choice(PEOPLE)}; "
            f"the {w[3]} step {i} now passes",
            "experience",
        )
    if kind < 0.55:
        return (
            f"We decided to use {r.choice(TOOLS)} for the {w[0]} {w[1]} because the {w[2]} {w[3]} "
            f"was too slow (case {i})",
            "decision",
        )
    return (
        f"The {w[0]} {w[1]} service reads its {w[2]} from {r.choice(SERVICES)} and writes "
        f"{w[3]} records with {r.choice(TOOLS)} (rule {i})",
        "fact",
    )


def seed(path: Path, n: int, seed_value: int = 7) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(seed_value)
    r = random.Random(seed_value)
    distinct = int(n * 0.7)
    topics = rng.standard_normal((400, DIM)).astype(np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    rows: list[tuple[str, str, str, float, int, Any]] = []
    for i in range(distinct):
        text, layer = sentence(r, i)
        if layer == "experience":  # episodes cluster by topic: consolidation has work to do
            v = topics[r.randrange(400)] + rng.standard_normal(DIM).astype(np.float32) * (0.65 / DIM**0.5)
        else:
            v = rng.standard_normal(DIM).astype(np.float32)
        rows.append(
            (
                text,
                layer,
                r.choice(SCOPES),
                NOW - r.random() * 730 * DAY,
                r.choice((1, 2, 2, 3, 3, 3, 4, 5)),
                v / np.linalg.norm(v),
            )
        )
    for _j in range(n - distinct):  # near-duplicates: the same words plus one, a vector ~0.97 away
        text, layer, scope, occurred, importance, v = rows[r.randrange(distinct)]
        dup = v + rng.standard_normal(DIM).astype(np.float32) * (0.25 / DIM**0.5)
        rows.append(
            (
                f"{text} {r.choice(WORDS)}",
                layer,
                scope,
                occurred + r.random() * 30 * DAY,
                r.choice((1, 2, 3, 4)),
                dup / np.linalg.norm(dup),
            )
        )
    r.shuffle(rows)
    table = {t: v for t, _, _, _, _, v in rows}
    cfg = config_mod.load(home=path.parent, env={}, database=str(path))
    store = Store.open(cfg, LookupEmbedder(table), clock=lambda: NOW - 1)
    t0 = time.perf_counter()
    for start in range(0, len(rows), 5000):
        store.add_many(
            [
                NewMemory(
                    content=t,
                    layer=layer,
                    scope=scope,
                    occurred_at=occ,
                    importance=imp,
                    session_id=f"s{int(occ // DAY)}",
                )
                for t, layer, scope, occ, imp, _ in rows[start : start + 5000]
            ]
        )
    seeded = time.perf_counter() - t0
    with store.tx.atomic() as conn:  # as if each memory was harvested on the day it happened
        conn.execute("UPDATE memories SET created_at = occurred_at, updated_at = occurred_at")
    ids = [row[0] for row in store.conn.execute("SELECT id FROM memories")]
    with store.tx.atomic() as conn:  # 3,000 recent searches answered by 5 memories each: recall and co-retrieval
        for k in range(3000):
            at = NOW - r.random() * 30 * DAY
            hits = r.sample(ids[:20000], 5)
            conn.executemany(
                "INSERT INTO access_log (memory_id, at, kind, session_id) VALUES (?, ?, 'answer', ?)",
                [(h, at, f"q{k}") for h in hits],
            )
            conn.executemany(
                "UPDATE memories SET last_activated_at = max(coalesce(last_activated_at, 0), ?), "
                "activation_count = activation_count + 1 WHERE id = ?",
                [(at, h) for h in hits],
            )
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {"seconds": seeded, "memories": len(rows), "near_duplicates": n - distinct}


def run_pass(path: str) -> None:
    """In its own process: one full maintenance pass, then print the figures as JSON."""
    from memory.maintenance import agent as maintenance

    cfg = config_mod.load(home=Path(path).parent, env={}, database=path)
    store = Store.open(cfg, HashEmbedder(DIM, name=MODEL), clock=lambda: NOW)
    before = maintenance.size_report(store)
    t0, c0 = time.perf_counter(), time.process_time()
    report = maintenance.run_maintenance(store)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    load = os.getloadavg()[0]
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    after = maintenance.size_report(store)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ok = store.integrity()["ok"]
    # Once the archive's retention period has passed, the next pass purges it and vacuums.
    store.clock = lambda: NOW + (cfg.maintenance_archive_retention_days + 1) * DAY
    t1 = time.perf_counter()
    later = maintenance.run_maintenance(store)
    later_seconds = time.perf_counter() - t1
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    purged = maintenance.size_report(store)
    ok = ok and store.integrity()["ok"]
    store.close()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "load": load,
                "rss_mb": rss,
                "counts": report.counts(),
                "before": before,
                "after": after,
                "integrity_ok": ok,
                "notes": report.notes,
                "purged": purged,
                "later_seconds": later_seconds,
                "later_counts": later.counts(),
            }
        )
    )


def part1(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        print(f"seeding {n} memories ...", file=sys.stderr)
        seeded = seed(path, n)
        print(f"seeded in {seeded['seconds']:.0f}s; running the pass in a fresh process ...", file=sys.stderr)
        out = subprocess.run([sys.executable, __file__, "--run-pass", str(path)], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(out.stderr)
        return {"seed": seeded, **json.loads(out.stdout.strip().splitlines()[-1])}


# -- part 2: LoCoMo before and after -----------------------------------------------------------


def part2(months: float) -> tuple[dict, dict, dict[str, int]]:
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    import bench_locomo

    from memory.embed import SentenceTransformerEmbedder
    from memory.maintenance import agent as maintenance

    data = json.loads(bench_locomo.DEFAULT_DATA.read_text())
    cache = Path(tempfile.gettempdir()) / "maple-bench-embeddings.npz"
    emb = bench_locomo.CachedEmbedder(SentenceTransformerEmbedder(), cache)
    before = bench_locomo.run(data, emb, {}, verbose=False)
    last_session = {}
    for sample in data:
        turns = bench_locomo.turns_of(sample)
        last_session[sample["sample_id"]] = max(datetime.fromisoformat(w).timestamp() for _, _, w, _ in turns)
    counts: dict[str, int] = {}

    class MaintainedStore(Store):
        """bench_locomo's store, with a maintenance pass right after ingest, months later."""

        def add_many(self, items, **kw):  # type: ignore[override]
            out = super().add_many(items, **kw)
            with self.tx.atomic() as conn:  # as if harvested on the day each turn was said
                conn.execute("UPDATE memories SET created_at = occurred_at, updated_at = occurred_at")
            sample = (items[0].session_id or "").split("/")[0]
            now = last_session[sample] + months * 30 * DAY
            report = maintenance.run_maintenance(self, now=now)
            for step, k in report.counts().items():
                counts[step] = counts.get(step, 0) + k
            return out

    bench_locomo.Store = MaintainedStore  # run() opens its stores through this name
    try:
        after = bench_locomo.run(data, emb, {}, verbose=False)
    finally:
        bench_locomo.Store = Store
    return before, after, counts  # the shared embedding cache is left as bench_locomo wrote it


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--months", type=float, default=3.0, help="LoCoMo: months after the last session")
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--skip-pass", action="store_true")
    ap.add_argument("--run-pass", metavar="DB", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_pass:
        run_pass(args.run_pass)
        return
    if not args.skip_pass:
        p = part1(args.n)
        b, a = p["before"], p["after"]
        mb = lambda s: (s["file_bytes"] + s["wal_bytes"]) / 1e6  # noqa: E731
        print(
            f"\nmaintenance pass over {p['seed']['memories']} memories "
            f"({p['seed']['near_duplicates']} near-duplicates; embedding excluded)"
        )
        c = p["purged"]
        print(f"{'':<28}{'before':>12}{'after':>12}{'+181 days':>12}")
        print(f"{'memories (current)':<28}{b['memories']:>12}{a['memories']:>12}{c['memories']:>12}")
        print(f"{'archived':<28}{b['archived']:>12}{a['archived']:>12}{c['archived']:>12}")
        print(f"{'database size (MB)':<28}{mb(b):>12.1f}{mb(a):>12.1f}{mb(c):>12.1f}")
        print(f"{'free pages':<28}{b['free_pages']:>12}{a['free_pages']:>12}{c['free_pages']:>12}")
        print(
            f"pass: {p['seconds']:.1f} s wall (limit 60; {p['cpu']:.1f} s CPU, machine load {p['load']:.1f} "
            f"on {os.cpu_count()} cores), peak RSS {p['rss_mb']:.0f} MB (limit 1024), "
            f"integrity {'ok' if p['integrity_ok'] else 'FAILED'}"
        )
        print("changes: " + ", ".join(f"{k} {v}" for k, v in p["counts"].items()))
        print(
            f"pass after the archive retention period ({p['later_seconds']:.1f} s): "
            + ", ".join(f"{k} {v}" for k, v in p["later_counts"].items())
        )
        for note in p["notes"]:
            print(f"note: {note}")
    if not args.skip_locomo:
        before, after, counts = part2(args.months)
        cols = ["R@5", "R@10", "R@20", "hit@10", "MRR"]
        print(
            f"\nLoCoMo dev, categories 1-4 ({before['overall']['n']} queries): maintenance {args.months:g} months "
            f"after each conversation's last session"
        )
        print(f"{'':<22}" + "".join(f"{c:>8}" for c in cols))
        for name, rep in (("before maintenance", before), ("after maintenance", after)):
            print(f"{name:<22}" + "".join(f"{rep['overall'][c]:>8.4f}" for c in cols))
        print("changes on the 5 conversation stores: " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "none"))
        drop = before["overall"]["R@10"] - after["overall"]["R@10"]
        print("retrieval " + ("did not drop" if drop <= 1e-9 else f"DROPPED by {drop:.4f} R@10"))


if __name__ == "__main__":
    main()
