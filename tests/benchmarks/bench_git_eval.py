"""Precision and recall of `backfill --git`'s commit rules (memory.extraction.gitlog) on the
labelled set written before them (tests/data/git_eval). The rules were tuned on the first four
repositories of commits.json only; the other four and MAPLE's own history are held out.

    python tests/benchmarks/bench_git_eval.py [--misses]

A kept commit counts as right when its label says keep and the memory holds every `must`
substring (case-insensitive); precision = right / kept, recall = right / labelled keep.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory.extraction import gitlog  # noqa: E402

DATA = ROOT / "tests" / "data" / "git_eval"
TUNE = ("ledgerline", "harbor-infra", "pantry-web", "dingdan-service")


def score(commits: list[dict], misses: bool) -> tuple[int, int, int]:
    kept = right = labelled = 0
    for c in commits:
        labelled += c["keep"]
        commit = gitlog.Commit(c["sha"], c["date"], c["author"], c["message"])
        verdict = gitlog.judge(commit)
        if verdict is None:
            if misses and c["keep"]:
                print(f"  MISSED {c['kind']:<11} {c['message'][:110]!r}")
            continue
        kept += 1
        content = gitlog.content_of(commit).lower()
        ok = c["keep"] and all(m.lower() in content for m in c["must"])
        right += ok
        if misses and not ok:
            print(f"  WRONG  {verdict[0]:<11} {c['message'][:110]!r}")
    return kept, right, labelled


def line(name: str, kept: int, right: int, labelled: int) -> str:
    p = right / kept if kept else 1.0
    r = right / labelled if labelled else 1.0
    return f"{name:<34} kept {kept:>4}  right {right:>4}  labelled {labelled:>4}  precision {p:.2f}  recall {r:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--misses", action="store_true", help="print the commits the rules got wrong")
    a = ap.parse_args()
    groups: dict[str, list[dict]] = {"tune (4 repos)": [], "held out (4 repos)": [], "held out: MAPLE's history": []}
    for r in json.loads((DATA / "commits.json").read_text())["repos"]:
        groups["tune (4 repos)" if r["name"] in TUNE else "held out (4 repos)"] += r["commits"]
    for r in json.loads((DATA / "maple_history.json").read_text())["repos"]:
        groups["held out: MAPLE's history"] += r["commits"]
    for name, commits in groups.items():
        if a.misses:
            print(name)
        print(line(name, *score(commits, a.misses)))


if __name__ == "__main__":
    main()
