#!/usr/bin/env python3
"""Build the dev12 extraction-eval sessions (stdlib only, deterministic).

    python3 _gen.py        # writes NAME.jsonl + NAME.gold.json next to this file
"""
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_parts"))

PARTS = [
    "a1_shelfwise_renewal_count",
    "a2_shelfwise_overdue_duplicates",
    "a3_shelfwise_bullmq5",
    "c1_kangning_slot_oversell",
    "c2_kangning_visit_remind",
    "c3_kangning_daily_export",
]


def main():
    for mod_name in PARTS:
        mod = importlib.import_module(mod_name)
        session, gold = mod.build()
        with open(os.path.join(HERE, mod.NAME + ".jsonl"), "w", encoding="utf-8") as f:
            f.write(session.dump())
        with open(os.path.join(HERE, mod.NAME + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")
        print(f"wrote {mod.NAME} ({len(session.lines)} lines, {len(gold['expected'])} expected)")


if __name__ == "__main__":
    main()
