#!/usr/bin/env python3
"""Generate blind trial 29: six Claude Code transcripts + gold files (stdlib only, deterministic).

    python3 _gen.py        # writes NAME.jsonl and NAME.gold.json next to this file
"""
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_parts"))

MODULES = ["a1", "a2", "a3", "b1", "b2", "b3"]


def main():
    for m in MODULES:
        mod = importlib.import_module(m)
        sess, gold = mod.build()
        with open(os.path.join(HERE, mod.NAME + ".jsonl"), "w", encoding="utf-8", newline="\n") as f:
            f.write(sess.dump())
        with open(os.path.join(HERE, mod.NAME + ".gold.json"), "w", encoding="utf-8", newline="\n") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")
        print(f"{mod.NAME}: {len(sess.lines)} lines, {len(gold['expected'])} expected")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        MODULES = sys.argv[1:]
    main()
