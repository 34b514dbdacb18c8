"""Entity detection benchmark: precision and recall of the store's entity rule on labelled sentences.

    .venv/bin/python tests/benchmarks/bench_entities.py [--show]

Two sets:
- tests/data/entity_eval/sentences.jsonl (160 sentences, every kind of entity, en/zh/mixed; see its
  README): scored on everything the store links (`mentions.detect` plus `known_entities`).
- tests/data/team_eval/names.json (270 sentences written blind, code-shaped names only): scored on
  the code-shaped detections alone (a name with - _ or . and no space that is not a file or path),
  since that set labels nothing else.

Names compare case-insensitively, backticks and a trailing "()" removed. --show prints every miss
and every false detection. Not a pytest test.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory.lang import mentions  # noqa: E402

DATA = ROOT / "tests" / "data"
KNOWN = {"Alice Chen": ["Alice", "A. Chen", "alice.chen@corp", "陈爱丽"], "Bob Martinez": ["Bob", "B. Martinez"]}
CODE_SHAPED = re.compile(r"^[^\s/]*[-_.][^\s/]*$")


def norm(name: str) -> str:
    name = " ".join(name.strip("`").split()).casefold().rstrip("/")
    return name[:-2] if name.endswith("()") else name


def detected(text: str) -> list[tuple[str, str]]:
    # Each name as the store links it: a configured alias resolves to its entity (陈爱丽 -> Alice Chen).
    found = [(mentions.canonical(n, KNOWN)[0], kind) for n, kind, _ in mentions.detect(text)]
    return found + [(n, kind) for n, kind, _ in mentions.known_in(text, KNOWN)]


def score(rows: list[tuple[str, set[str], set[str]]], show: bool, label: str) -> None:
    tp = fp = fn = 0
    for text, want, got in rows:
        tp += len(want & got)
        fp += len(got - want)
        fn += len(want - got)
        if show and (want != got):
            print(f"  {text}\n    missed {sorted(want - got)}  false {sorted(got - want)}")
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    print(f"{label:<44} {len(rows):>4} sentences  P {p:.3f}  R {r:.3f}  F1 {f:.3f}  (tp {tp} fp {fp} fn {fn})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print misses and false detections")
    args = ap.parse_args()
    own = [json.loads(x) for x in (DATA / "entity_eval" / "sentences.jsonl").read_text("utf-8").splitlines() if x]
    for lang in ("all", "en", "zh", "mixed"):
        rows = [
            (s["text"], {norm(e) for e in s["entities"]}, {norm(n) for n, _ in detected(s["text"])})
            for s in own
            if lang in ("all", s["lang"])
        ]
        score(rows, args.show and lang == "all", f"entity_eval {lang}")
    blind = json.loads((DATA / "team_eval" / "names.json").read_text("utf-8"))["sentences"]
    rows = [
        (
            s["text"],
            {norm(n) for n in s["names"]},
            {norm(n) for n, kind in detected(s["text"]) if kind != "file" and CODE_SHAPED.match(norm(n))},
        )
        for s in blind
    ]
    score(rows, args.show, "team_eval/names.json (code-shaped, blind)")


if __name__ == "__main__":
    main()
