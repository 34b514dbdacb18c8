#!/usr/bin/env python3
"""Regenerate the held-out extraction sessions: NAME.jsonl + NAME.gold.json in the parent directory.

Usage: python3 _gen/build.py   (stdlib only, deterministic)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import p1_tidyfs  # noqa: E402
import p2_search_svc
import p3_asr_train


def main():
    names = []
    for mod in (p1_tidyfs, p2_search_svc, p3_asr_train):
        for fn in mod.SESSIONS:
            s = fn()
            lines = s.finish()
            with open(os.path.join(OUT, s.name + ".jsonl"), "w", encoding="utf-8") as f:
                for ln in lines:
                    f.write(json.dumps(ln, ensure_ascii=False, separators=(",", ":")) + "\n")
            with open(os.path.join(OUT, s.name + ".gold.json"), "w", encoding="utf-8") as f:
                json.dump(s.gold, f, ensure_ascii=False, indent=2)
                f.write("\n")
            names.append((s.name, len(lines), len(s.gold["expected"])))
    for n, l, e in names:
        print(f"{n:40s} lines={l:3d} expected={e}")


if __name__ == "__main__":
    main()
