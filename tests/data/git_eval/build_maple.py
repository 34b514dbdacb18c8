#!/usr/bin/env python3
"""Builds maple_history.json: this repository's own commits, labelled.

Labels were written from the commit messages only (no source code read).
keep=true only for what a new MAPLE developer should remember: decisions with
their reasons, measured trade-offs, gotchas, standing rules. Feature lists,
benchmarks, README updates and refactors without a reason are keep=false.
Every commit not listed in LABELS is keep=false.
Run: python3 build_maple.py [REPO]   (REPO defaults to the enclosing git repo)
"""
import json
import os
import subprocess
import sys

# sha prefix -> (kind, must, why)
LABELS = {
    "7af3d732": ("gotcha", ["purged"], ["foreign-key error"]),
    "f06e2d2c": ("decision", ["0.5"], ["R@10 .802 -> .805"]),
    "206cd04a": ("decision", ["purge log", "week"], ["warm servers catch up"]),
    "6ff6db1a": ("gotcha", ["sqlite-vec"], ["a first vector stored while it built"]),
    "df53e23d": ("security", ["Unix socket"], []),
    "aa474ed1": ("gotcha", ["vec0", "rowid"], ["vec0 scans the whole table for a range or IN list"]),
    "0dc228e6": ("decision", ["TorchScript"], ["runs without the GIL"]),
    "dec5f79d": ("decision", ["4k", "Hamming"], ["32 -> 10 ms"]),
    "b1e0bd5f": ("decision", ["search_min_pool"], ["channels that rank nothing"]),
    "231733b0": ("decision", ["WAL checkpoint"], ["10-90 ms"]),
    "9fa4a64d": ("decision", ["FTS5", "trigger"], ["~10x faster"]),
    "dc201f17": ("gotcha", ["mid-write"], ["where they land depends on load"]),
    "538ff954": ("gotcha", ["largest id"], ["a cold hook process has no cache"]),
    "f489cca1": ("decision", ["one embedding thread"], ["p95 under load 32 vs 700+ ms"]),
    "8deafcaa": ("gotcha", ["boolean"], ["purged #1"]),
    "b4161225": ("gotcha", ["one length"], ["QuasarB and proj-1 were parts of QuasarBA and proj-10"]),
    "f563f299": ("decision", ["nice 10"], ["so hooks and the server answer first"]),
    "aa921cbb": ("decision", ["initialize", "SDK"], ["1.8 s -> 0.15 s"]),
    "c9dc1533": ("gotcha", ["claude mcp add"], ["local and project scopes are read from it"]),
    "c91d1ed7": ("security", ["category"], ["it cannot close the block or add a line"]),
    "e086ff1a": ("decision", ["1/20"], ["no reordering of search results"]),
    "453677bc": ("security", ["<maple-memory>"], []),
    "f1dac2b1": ("gotcha", ["export"], ["it used to rename the JSONL over memory.db"]),
    "5dde0881": ("decision", ["float16"], ["cosines within 1e-4"]),
    "403627bf": ("decision", ["20 versions"], ["fits a client's output cap"]),
    "806bf040": ("gotcha", ["str|None"], []),
    "9e765099": ("decision", ["vector index", "200"], ["347 -> 25 ms"]),
    "e8769f53": ("gotcha", ["8 MB"], ["memory bounded by the longest line"]),
    "242b0e32": ("decision", ["8 rarest words"], ["420 ms -> 11 ms"]),
    "ed9c8095": ("gotcha", ["suffix"], ["function, crypto, exhaustive are not moods"]),
    "4ad89ef0": ("decision", ["vector channel"], ["the server tool and the hook surface the same memories"]),
    "ff299495": ("decision", ["in use"], ["a project left alone does not fade"]),
    "ee4b9e72": ("gotcha", ["FTS5", "case"], ["Cherokee"]),
    "8c349b0c": ("gotcha", ["auto_vacuum"], ["reads work while another process writes"]),
    "a34da535": ("convention", ["README"], ["the CLI table test requires every command"]),
    "08019faa": ("convention", ["Inspector", "README"], []),
    "80c16523": ("decision", ["BM25"], ["R@10 .802"]),
    "fc173271": ("migration", ["migration 002"], ["unreleased"]),
    "6b1d7ff2": ("gotcha", ["privacy", "lazily"], ["~14 ms off every read-only hook"]),
    "52d3d60d": ("decision", ["names"], ["R@20 .839 -> .857"]),
    "43886da2": ("gotcha", ["auto-vacuum"], ["set before WAL writes the header"]),
    "25aeb919": ("gotcha", ["2.1.118"], []),
    "a708f677": ("convention", ["stdlib-only", "fail-open"], []),
    "b1293874": ("decision", ["reply"], ["MRR .549 -> .590"]),
    "676bebe4": ("security", ["redacts"], []),
    "e35a4427": ("convention", ["held-out"], []),
    "cde8e4b1": ("decision", ["jieba"], []),
    "fd3e5f29": ("convention", ["held-out"], ["not used to tune them"]),
    "5aa4f005": ("gotcha", [".ci/run", "README"], []),
    "4e7a7ddb": ("decision", ["initialize", "keywords"], []),
    "2dca60ac": ("convention", ["written before the extractor"], []),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        ["git", "-C", here, "rev-parse", "--show-toplevel"],
        capture_output=True, text=True, check=True).stdout.strip()
    raw = subprocess.run(["git", "-C", repo, "log", "--format=%H%x00%aI%x00%an%x00%B%x1e"],
                         capture_output=True, text=True, check=True).stdout
    rows, used = [], set()
    for rec in raw.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, date, author, body = rec.split("\x00", 3)
        label = next((v for k, v in LABELS.items() if sha.startswith(k)), None)
        if label:
            used.add(next(k for k in LABELS if sha.startswith(k)))
        kind, must, why = label or ("none", [], [])
        rows.append({"sha": sha, "date": date, "author": author, "message": body.strip(),
                     "keep": label is not None, "kind": kind, "must": must, "why": why})
    missing = set(LABELS) - used
    if missing:
        sys.exit("labels for commits not in the history: %s" % sorted(missing))
    out = os.path.join(here, "maple_history.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"repos": [{"name": "maple", "commits": rows}]}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", out, len(rows), "commits,", sum(r["keep"] for r in rows), "keep")


if __name__ == "__main__":
    main()
