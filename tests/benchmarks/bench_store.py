"""Store benchmark: insert rate, bytes per memory, keyword and vector query latency, RSS.

    .venv/bin/python tests/benchmarks/bench_store.py [--sizes 10000,100000] [--profile]

Not a pytest test (timings do not belong in unit tests). Memories are realistic coding facts
generated from templates (identifiers, paths, numbers, some Chinese), spread over ten projects
and the global scope. Embedding is excluded: vectors are random unit 384-dim float32 rows computed
before the clock starts and handed out by a fake embedder, so the insert rate is the store's own
cost (validation, redaction, dedup lookup, memory + FTS + vector rows, re-read).
"""

from __future__ import annotations

import os

# One BLAS thread: the machine is shared, and oversubscription distorts timings (measurements §0).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory import config as config_mod  # noqa: E402
from memory.lang import text  # noqa: E402
from memory.retrieval import ranking as retrieval  # noqa: E402
from memory.store import indexes
from memory.store.memories import NewMemory, Store  # noqa: E402

DIM = 384
PROJECTS = [
    f"/home/dev/src/{name}"
    for name in (
        "billing-api",
        "web-frontend",
        "infra",
        "ml-pipeline",
        "mobile-app",
        "data-warehouse",
        "auth-service",
        "cli-tools",
        "docs-site",
        "search",
    )
]

# -- realistic memory texts ----------------------------------------------------------------------

PARTS = (
    "fetch retry user cache token parse build index session queue order invoice payment "
    "config loader worker handler client server record event stream batch export import "
    "schema migration report metric alert auth login refresh profile upload image thumb "
    "search query ranker embed vector shard replica backup restore deploy release"
).split()
TOOLS = (
    "pytest uv ruff mypy black poetry pip docker kubectl terraform helm npm pnpm vite "
    "webpack jest playwright cargo clippy go gradle make just tox nox pre-commit"
).split()
LANGS = "Python TypeScript Go Rust Java Kotlin SQL Bash".split()
SERVICES = "postgres redis kafka nginx celery rabbitmq elasticsearch minio clickhouse grafana".split()
ERRORS = "TimeoutError KeyError ValueError ConnectionResetError IntegrityError PermissionError".split()
PEOPLE = "Alice Bob Chen Wei Dana Priya Omar Lena Kenji Sofia".split()
ZH_TOPICS = (
    "数据库 备份 部署 测试 缓存 日志 监控 接口 权限 配置 队列 索引 性能 内存 网络 前端 后端 文档 版本 发布"
).split()
ZH_VERBS = "喜欢 不喜欢 需要 建议 决定 避免 习惯".split()

TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: (
        f"{ident(r, 'snake')}() in {module(r)}.py retries {r.randint(2, 9)} times with a "
        f"{r.choice([50, 100, 250, 500, 1000])} ms backoff before raising {r.choice(ERRORS)}."
    ),
    lambda r: (
        f"Use {r.choice(TOOLS)} instead of {r.choice(TOOLS)} for {ident(r, 'words')}; it is "
        f"{r.randint(2, 40)}x faster on the CI runners."
    ),
    lambda r: (
        f"Decision: pin {pkg(r)}=={ver(r)} because {ver(r)} broke {ident(r, 'words')} (PR #{r.randint(100, 9999)})."
    ),
    lambda r: (
        f"{r.choice(PEOPLE)} prefers {r.choice(['early returns', 'dataclasses', 'small PRs', 'type hints', 'f-strings', 'explicit imports'])} "
        f"in {r.choice(LANGS)} code reviews of {module(r)}."
    ),
    lambda r: (
        f"The {r.choice(SERVICES)} instance for {ident(r, 'kebab')} listens on port {r.randint(1024, 65000)}; "
        f"config lives in {path(r)}."
    ),
    lambda r: (
        f"Bug {r.randint(100, 9999)}: {ident(r, 'camel')} returns None when {ident(r, 'snake')} is empty; "
        f"fixed in {module(r)}.{ident(r, 'snake')}."
    ),
    lambda r: (
        f"Env var {ident(r, 'upper')} controls {ident(r, 'words')}; default {r.randint(1, 512)}, "
        f"set to {r.randint(1, 512)} in production."
    ),
    lambda r: (
        f"The {ident(r, 'snake')} table has an index on ({ident(r, 'snake')}, {ident(r, 'snake')}); "
        f"a scan without it took {r.randint(2, 90)} s on {r.randint(1, 900)}M rows."
    ),
    lambda r: (
        f"Run `{r.choice(TOOLS)} {r.choice(['test', 'run', 'check', 'build'])} {path(r)}` before "
        f"pushing; the {ident(r, 'kebab')} job fails otherwise."
    ),
    lambda r: (
        f"{ident(r, 'Camel')}.{ident(r, 'camel')}() leaks a file handle when {r.choice(ERRORS)} is "
        f"raised; wrap it in a context manager."
    ),
    lambda r: (
        f"{r.choice(PEOPLE)}{r.choice(ZH_VERBS)}用{r.choice(TOOLS)}做{r.choice(ZH_TOPICS)}，"
        f"{module(r)} 的{r.choice(ZH_TOPICS)}在 {path(r)}。"
    ),
    lambda r: (
        f"{r.choice(ZH_TOPICS)}{r.choice(ZH_TOPICS)}每天 {r.randint(0, 23)}:{r.randint(0, 59):02d} 运行，"
        f"失败时发警报给 {r.choice(PEOPLE)}（{ident(r, 'kebab')}）。"
    ),
    lambda r: (
        f"Session {r.randint(1, 999)}: migrated {module(r)} from {r.choice(LANGS)} {ver(r)} to {ver(r)}; "
        f"{r.randint(1, 60)} tests needed {ident(r, 'words')} fixes."
    ),
    lambda r: (
        f"Don't call {ident(r, 'snake')} from a signal handler in {module(r)}; it takes the "
        f"{ident(r, 'snake')} lock and deadlocks under load ({r.randint(2, 64)} workers)."
    ),
]


def ident(r: random.Random, style: str) -> str:
    words = r.sample(PARTS, r.randint(2, 3))
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "upper":
        return "_".join(words).upper()
    if style == "camel":
        return words[0] + "".join(w.title() for w in words[1:])
    if style == "Camel":
        return "".join(w.title() for w in words)
    return " ".join(words)


def module(r: random.Random) -> str:
    return f"{r.choice(PARTS)}_{r.choice(PARTS)}"


def path(r: random.Random) -> str:
    return f"{r.choice(['src', 'app', 'lib', 'deploy', 'tests'])}/{r.choice(PARTS)}/{ident(r, 'snake')}.{r.choice(['py', 'ts', 'yaml', 'toml', 'go'])}"


def pkg(r: random.Random) -> str:
    return r.choice(
        [
            "requests",
            "httpx",
            "pydantic",
            "sqlalchemy",
            "numpy",
            "fastapi",
            "django",
            "react",
            "vite",
            "typescript",
            "boto3",
            "celery",
        ]
    )


def ver(r: random.Random) -> str:
    return f"{r.randint(0, 5)}.{r.randint(0, 30)}.{r.randint(0, 20)}"


def make_items(n: int, seed: int) -> list[NewMemory]:
    r = random.Random(seed)
    items = []
    for _ in range(n):
        scope = "global" if r.random() < 0.15 else r.choice(PROJECTS)
        items.append(
            NewMemory(
                r.choice(TEMPLATES)(r),
                scope=scope,
                importance=r.randint(1, 5),
                layer=r.choice(["fact", "fact", "experience", "decision"]),
                category=r.choice(["general", "tooling", "preference", "bug", "infra"]),
                tags=r.sample(["ci", "perf", "db", "api", "ux", "security"], r.randint(0, 2)),
            )
        )
    return items


def make_queries(n: int, seed: int) -> list[tuple[str, list[str]]]:
    r = random.Random(seed)
    out = []
    for i in range(n):
        if i % 5 == 4:
            q = r.choice(ZH_TOPICS) + r.choice(["怎么", "在哪", ""]) + r.choice(ZH_TOPICS)
        else:
            q = " ".join(r.sample(PARTS + TOOLS + SERVICES, r.randint(1, 3)))
        out.append((q, [r.choice(PROJECTS), "global"]))
    return out


# -- fake embedder -------------------------------------------------------------------------------


def unit_rows(n: int, rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((n, DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


class Precomputed:
    """Hands out precomputed vectors in order, so embedding costs nothing during the timing."""

    name = "bench-random-384"
    dim = DIM

    def __init__(self, vectors: np.ndarray, queries: np.ndarray):
        self.vectors, self.queries = vectors, queries
        self.next = self.next_query = 0

    def embed(self, texts: Sequence[str]) -> list[Any]:
        out = self.vectors[self.next : self.next + len(texts)]
        self.next += len(texts)
        return list(out)

    def embed_query(self, text: str) -> Any:
        v = self.queries[self.next_query % len(self.queries)]
        self.next_query += 1
        return v


# -- measuring -----------------------------------------------------------------------------------


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB."""
    cur = peak = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return cur, peak


def latencies(fn: Callable[[Any], Any], args: Sequence[Any]) -> tuple[float, float, float]:
    """Median and p95 wall milliseconds of fn(a) over args, and the median CPU milliseconds.

    CPU time is reported because a shared machine's load inflates wall time (two warm-up calls first).
    """
    for a in args[:2]:
        fn(a)
    wall, cpu = [], []
    for a in args:
        c0, t0 = time.process_time(), time.perf_counter()
        fn(a)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    return statistics.median(wall), wall[min(len(wall) - 1, int(len(wall) * 0.95))], statistics.median(cpu)


def ms(t: tuple[float, float, float]) -> str:
    digits = 2 if t[0] < 10 else 1 if t[0] < 100 else 0
    return f"{t[0]:.{digits}f} / {t[1]:.{digits}f} ({t[2]:.{digits}f})"


def table_bytes(store: Store) -> dict[str, int]:
    groups = {"memories": 0, "fts": 0, "vectors": 0, "other": 0}
    for name, size in store.conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        if name.startswith("memory_fts"):
            groups["fts"] += size
        elif name.startswith("memory_vec"):
            groups["vectors"] += size
        elif name.startswith("memories") or name.startswith("sqlite_autoindex_memories"):
            groups["memories"] += size
        else:
            groups["other"] += size
    return groups


def run(n: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    items = make_items(n, args.seed)
    vectors = unit_rows(n, rng)
    queries = make_queries(args.queries, args.seed + 1)
    embedder = Precomputed(vectors, unit_rows(args.queries, rng))
    home = workdir / f"n{n}"
    store = Store.open(config_mod.load(home=home, env={}), embedder)

    profiler = cProfile.Profile() if args.profile else None
    c0 = time.process_time()
    t0 = time.perf_counter()
    if profiler:
        profiler.enable()
    for start in range(0, n, args.batch):
        store.add_many(items[start : start + args.batch])
    if profiler:
        profiler.disable()
    insert_s = time.perf_counter() - t0
    insert_cpu = time.process_time() - c0
    stored = store.count()

    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = sum(p.stat().st_size for p in home.iterdir() if p.name.startswith("memory.db"))
    groups = table_bytes(store)

    # The channel SQL as memory.retrieval runs it (its helpers are private, so spelled out here).
    def fts_query(qa: tuple[str, list[str]]) -> list[Any]:
        q = retrieval.make_query(qa[0], qa[1])
        terms = text.query_terms(q.text)  # bigrams for Chinese; jieba's cost is not the store's
        if not terms:  # only stopwords ("just"): retrieval skips the channel too
            return []
        marks = ",".join("?" * len(q.scopes))
        return store.conn.execute(
            f"SELECT f.rowid, -bm25(memory_fts) FROM memory_fts f JOIN memories m ON m.id = f.rowid "
            f"WHERE memory_fts MATCH ? AND m.scope IN ({marks}) AND m.deleted_at IS NULL "
            f"AND m.superseded_by IS NULL ORDER BY bm25(memory_fts) LIMIT ?",
            (text.match_or(terms), *q.scopes, retrieval.candidate_pool(store, q)),
        ).fetchall()

    def knn_float(qa: tuple[str, list[str]]) -> list[Any]:
        q = retrieval.make_query(qa[0], qa[1])
        marks = ",".join("?" * len(q.scopes))
        return store.conn.execute(
            f"SELECT rowid, distance FROM memory_vec WHERE embedding MATCH ? AND k = ? AND scope IN ({marks})",
            (embedder.embed_query(q.text).tobytes(), retrieval.candidate_pool(store, q), *q.scopes),
        ).fetchall()

    def knn_coarse(qa: tuple[str, list[str]]) -> list[Any]:
        q = retrieval.make_query(qa[0], qa[1])
        blob, pool = embedder.embed_query(q.text).tobytes(), retrieval.candidate_pool(store, q)
        marks = ",".join("?" * len(q.scopes))
        ids = [
            r[0]
            for r in store.conn.execute(
                f"SELECT rowid FROM memory_vec WHERE coarse MATCH vec_quantize_binary(?) AND k = ? "
                f"AND scope IN ({marks})",
                (blob, pool * 8, *q.scopes),
            )
        ]
        return store.conn.execute(
            f"SELECT rowid, 1 - vec_distance_cosine(embedding, ?) AS s FROM memory_vec "
            f"WHERE rowid IN ({','.join('?' * len(ids))}) ORDER BY s DESC LIMIT ?",
            (blob, *ids, pool),
        ).fetchall()

    def knn_plain(qa: tuple[str, list[str]]) -> list[Any]:
        return store.conn.execute(
            "SELECT rowid FROM memory_vec WHERE embedding MATCH ? AND k = 10 ORDER BY distance",
            (embedder.embed_query(qa[0]).tobytes(),),
        ).fetchall()

    def full_search(qa: tuple[str, list[str]]) -> list[Any]:
        return retrieval.search(store, retrieval.make_query(qa[0], qa[1]), record=False)

    # The warm server's path: the in-memory copies of both indexes (retrieval.warm).
    def warm_bm25(qa: tuple[str, list[str]]) -> list[Any]:
        q = retrieval.make_query(qa[0], qa[1])
        terms = text.query_terms(q.text)
        return (
            store._text_index.search(store.conn, terms, q.scopes, retrieval.candidate_pool(store, q)) if terms else []
        )

    def warm_knn(qa: tuple[str, list[str]]) -> list[Any]:
        q = retrieval.make_query(qa[0], qa[1])
        return store._vector_index.search(embedder.embed_query(q.text), q.scopes, retrieval.candidate_pool(store, q))

    text.jieba_segmenter()  # search() segments Chinese queries: load the dictionary before timing
    hits = [len(fts_query(qa)) for qa in queries]
    cold = {
        "fts": latencies(fts_query, queries),
        "knn_float": latencies(knn_float, queries),
        "knn_coarse": latencies(knn_coarse, queries),
        "knn_plain": latencies(knn_plain, queries),
        "search": latencies(full_search, queries),
    }
    t_warm = time.perf_counter()
    indexes.warm(store)
    warm_s = time.perf_counter() - t_warm
    result = {
        "n": n,
        "stored": stored,
        "insert_s": insert_s,
        "rate": n / insert_s,
        "cpu_rate": n / insert_cpu,
        "file_bytes": files,
        "groups": groups,
        **cold,
        "fts_hits": statistics.median(hits),
        "in_scope": statistics.median(store.count(qa[1]) for qa in queries),
        "warm_s": warm_s,
        "warm_bm25": latencies(warm_bm25, queries),
        "warm_knn": latencies(warm_knn, queries),
        "warm_search": latencies(full_search, queries),
        "pool": retrieval.candidate_pool(store, retrieval.make_query("x", queries[0][1])),
        "rss": rss_mb(),
        "vectors_mb": vectors.nbytes / 2**20,
        "integrity_ok": store.integrity()["ok"] if args.integrity else None,
    }
    store.close()
    if profiler:
        print(f"\n--- cProfile of inserting {n:,} memories (top {args.profile_top} by own time) ---")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile_top)
        print("--- same, by cumulative time ---")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile_top)
    del items, vectors
    return result


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    load = os.getloadavg()
    print(
        f"\nMAPLE store benchmark  (python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
        f"load avg {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})"
    )
    print(
        f"embedding EXCLUDED: random unit {DIM}-dim vectors precomputed before timing; "
        f"insert via Store.add_many in batches of {args.batch}; {args.queries} queries per latency row"
    )
    cols = [f"N={r['n']:,}" for r in results]
    width = 24
    print(f"{'':44}" + "".join(f"{c:>{width}}" for c in cols))

    def row(label: str, fmt: Callable[[dict[str, Any]], str]) -> None:
        print(f"{label:44}" + "".join(f"{fmt(r):>{width}}" for r in results))

    row("memories stored", lambda r: f"{r['stored']:,}")
    row("insert time (s)", lambda r: f"{r['insert_s']:.1f}")
    row("insert rate (memories/s, target >= 5,000)", lambda r: f"{r['rate']:,.0f}")
    row("  same, per CPU second (less load-sensitive)", lambda r: f"{r['cpu_rate']:,.0f}")
    row("database bytes per memory (checkpointed)", lambda r: f"{r['file_bytes'] / r['n']:,.0f}")
    row("  of which memories table + indexes", lambda r: f"{r['groups']['memories'] / r['n']:,.0f}")
    row("  of which FTS", lambda r: f"{r['groups']['fts'] / r['n']:,.0f}")
    row("  of which vectors (float + bit)", lambda r: f"{r['groups']['vectors'] / r['n']:,.0f}")
    row("database file size (MB)", lambda r: f"{r['file_bytes'] / 2**20:,.1f}")
    print("latency rows: wall median / wall p95 (CPU median), milliseconds")
    row("FTS bm25 query, k=pool", lambda r: ms(r["fts"]))
    row("  median FTS hits per query (pool-capped)", lambda r: f"{r['fts_hits']:.0f}")
    row("  candidate pool k; memories in 2 scopes", lambda r: f"{r['pool']}; {r['in_scope']:,.0f}")
    row("vec KNN float, k=pool, 2 scopes", lambda r: ms(r["knn_float"]))
    row("vec KNN bit, k=8*pool, + exact rerank", lambda r: ms(r["knn_coarse"]))
    row("vec KNN float, k=10, no filter", lambda r: ms(r["knn_plain"]))
    row("search() end to end (record=False)", lambda r: ms(r["search"]))
    print("warm server (retrieval.warm: in-memory copies of both indexes)")
    row("  building them, s", lambda r: f"{r['warm_s']:.1f}")
    row("  BM25, in-memory postings, k=pool", lambda r: ms(r["warm_bm25"]))
    row("  vector KNN, Hamming + float16 re-rank, k=pool", lambda r: ms(r["warm_knn"]))
    row("  search() end to end (record=False)", lambda r: ms(r["warm_search"]))
    row("process RSS now / peak (MB)", lambda r: f"{r['rss'][0]:.0f} / {r['rss'][1]:.0f}")
    row("  of which precomputed vectors (MB)", lambda r: f"{r['vectors_mb']:.0f}")
    if args.integrity:
        row("integrity ok", lambda r: str(r["integrity_ok"]))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes (default: %(default)s)")
    p.add_argument("--batch", type=int, default=1000, help="memories per add_many call (default: %(default)s)")
    p.add_argument("--queries", type=int, default=200, help="queries per latency figure (default: %(default)s)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--profile", action="store_true", help="cProfile the inserts and print the top functions")
    p.add_argument("--profile-top", type=int, default=25)
    p.add_argument("--integrity", action="store_true", help="also run Store.integrity() at the end")
    p.add_argument("--dir", type=Path, help="where to put the databases (default: a temporary folder, removed)")
    args = p.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="maple-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        results = []
        for n in sizes:
            print(f"running N={n:,} ...", file=sys.stderr, flush=True)
            results.append(run(n, args, workdir))
        report(results, args)
    finally:
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
