#!/usr/bin/env python3
"""Build pairs.json and no_answer.json from the hand-written *_src.py files.

Deterministic: folds are assigned round-robin within each (same, lang) group after a
seeded shuffle, and a/b order is swapped for a seeded half of the pairs so that neither
side is systematically the "original". Run: python3 build.py && python3 check.py
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import no_answer_src  # noqa: E402
import pairs_src  # noqa: E402


def build_pairs():
    out = []
    for same, lang, items in pairs_src.GROUPS:
        rng = random.Random(f"pairs-{same}-{lang}")
        idx = list(range(len(items)))
        rng.shuffle(idx)
        fold_of = {i: pos % 5 for pos, i in enumerate(idx)}
        for i, (a, b, kind) in enumerate(items):
            if rng.random() < 0.5:
                a, b = b, a
            out.append({"a": a, "b": b, "same": same, "lang": lang,
                        "kind": kind, "fold": fold_of[i]})
    return {"pairs": out}


def answerable_kind(qlang, tlangs):
    if all(t == qlang for t in tlangs):
        return "same-lang"
    other = {"en": "zh", "zh": "en"}.get(qlang)
    if other and all(t == other for t in tlangs):
        return "cross-lang"
    return "mixed-lang"


def build_no_answer():
    mems = []
    for i, (lang, text) in enumerate(no_answer_src.MEMORIES, 1):
        mems.append({"key": f"n{i:03d}", "text": text, "lang": lang})
    lang_of = {m["key"]: m["lang"] for m in mems}
    queries = []
    for lang, q, targets in no_answer_src.ANSWERABLE:
        queries.append({"q": q, "lang": lang, "targets": list(targets),
                        "kind": answerable_kind(lang, [lang_of[t] for t in targets])})
    for lang, q, kind in no_answer_src.UNANSWERABLE:
        queries.append({"q": q, "lang": lang, "targets": [], "kind": kind})
    return {"memories": mems, "queries": queries}


def dump(obj, name):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    dump(build_pairs(), "pairs.json")
    dump(build_no_answer(), "no_answer.json")
    print("wrote pairs.json, no_answer.json")
