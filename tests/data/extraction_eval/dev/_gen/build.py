"""Regenerate the dev split: python3 _gen/build.py (writes NAME.jsonl + NAME.gold.json next to _gen/)."""
import sys; sys.dont_write_bytecode = True
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

MODULES = ["p1_invoicer", "p2_order_center", "p3_console_web", "p4_etl_jobs", "p5_push_gateway"]


def main(only=None):
    for m in MODULES:
        if only and m not in only:
            continue
        try:
            mod = importlib.import_module(m)
        except ModuleNotFoundError as e:
            if e.name == m:
                print(f"skip {m} (not written yet)")
                continue
            raise
        for fn in mod.SESSIONS:
            s, g = fn()
            assert s.name == g["session"]
            n = s.dump(os.path.join(OUT, s.name + ".jsonl"))
            with open(os.path.join(OUT, s.name + ".gold.json"), "w", encoding="utf-8") as f:
                json.dump(g, f, ensure_ascii=False, indent=2)
                f.write("\n")
            print(f"{s.name}: {n} lines, {len(g['expected'])} expected")


if __name__ == "__main__":
    main(sys.argv[1:] or None)
